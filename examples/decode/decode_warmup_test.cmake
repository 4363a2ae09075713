# weft-decode --warmup: the timed run after untimed ones chooses the same
# tokens as a run without them, greedy and sampled, with the prompt in
# batches (so the warm-up's cache and batch buffers are reused, not
# carried over: each run starts at position 0).
#   cmake -DDECODE=weft-decode -DMODEL=file -P decode_warmup_test.cmake
set(prompt --prompt-ids=1,20,300,4,55,6,77,8,99,10,110,12)
foreach(mode "--temperature=0" "--temperature=0.9;--seed=7")
  set(args --model=${MODEL} ${prompt} --steps=12 --batch=4 --workers=2
           ${mode})
  execute_process(COMMAND ${DECODE} ${args} OUTPUT_VARIABLE cold
                  RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT cold MATCHES "generated:(( [0-9]+)+)\n")
    message(FATAL_ERROR "the run without warm-up failed (${code}):\n${cold}")
  endif()
  set(want "${CMAKE_MATCH_1}")
  execute_process(COMMAND ${DECODE} ${args} --warmup=2 OUTPUT_VARIABLE warm
                  RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT warm MATCHES "generated:(( [0-9]+)+)\n")
    message(FATAL_ERROR "the run with --warmup=2 failed (${code}):\n${warm}")
  endif()
  if(NOT CMAKE_MATCH_1 STREQUAL want)
    message(FATAL_ERROR "${mode}: after two warm-up runs the tokens were"
                        "${CMAKE_MATCH_1}, without them${want}")
  endif()
  # The timed run alone is counted: 12 prompt tokens, 12 generated.
  if(NOT warm MATCHES "prompt: 12 tokens in [^\n]*\ngeneration: 12 tokens")
    message(FATAL_ERROR "the warm run's rates count more than its own "
                        "run:\n${warm}")
  endif()
  message(STATUS "${mode}: the same 12 tokens with and without warm-up")
endforeach()
