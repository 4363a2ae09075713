# weft-decode --stop: a run of STEPS tokens, then the same run stopped at
# its first generated token. The stopped run must print that token alone,
# say where it stopped, and have run at most 8 steps (STEPS_AHEAD) after
# it, where the whole run took STEPS - 1.
#   cmake -DDECODE=weft-decode -DMODEL=file -DSTEPS=24 -P decode_stop_test.cmake
set(args --model=${MODEL} --prompt-ids=1,2,3 --steps=${STEPS} --workers=2)
execute_process(COMMAND ${DECODE} ${args} OUTPUT_VARIABLE full
                RESULT_VARIABLE code)
if(NOT code EQUAL 0 OR NOT full MATCHES "generated: ([0-9]+)")
  message(FATAL_ERROR "the whole run failed (${code}):\n${full}")
endif()
set(stop ${CMAKE_MATCH_1})
execute_process(COMMAND ${DECODE} ${args} --stop=${stop}
                OUTPUT_VARIABLE stopped RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the stopped run failed (${code}):\n${stopped}")
endif()
if(NOT stopped MATCHES "generated: ${stop}\n")
  message(FATAL_ERROR "expected 'generated: ${stop}' alone:\n${stopped}")
endif()
if(NOT stopped MATCHES
   "stopped: token ${stop} at position 3 \\(([0-9]+) steps ran after it\\)")
  message(FATAL_ERROR "no 'stopped:' line for ${stop} at 3:\n${stopped}")
endif()
set(after ${CMAKE_MATCH_1})
if(after GREATER 8)
  message(FATAL_ERROR "${after} steps ran after the stop token (at most 8)")
endif()
if(NOT stopped MATCHES "generation: ([0-9]+) tokens")
  message(FATAL_ERROR "no generation line:\n${stopped}")
endif()
math(EXPR most "${after} + 1")
if(CMAKE_MATCH_1 GREATER most)
  message(FATAL_ERROR "generation counted ${CMAKE_MATCH_1} steps, "
                      "${after} after the stop")
endif()
message(STATUS "stopped at ${stop}: ${after} steps after it, of ${STEPS}")
