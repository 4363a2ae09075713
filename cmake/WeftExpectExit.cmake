# Runs a command and checks its exit code and, optionally, its stderr; for
# tests of tools whose exit codes mean different things (ctest's WILL_FAIL
# only tells zero from non-zero).
#   cmake -DCOMMAND="prog^arg^..." -DEXPECTED_EXIT=1
#         [-DSTDERR_REGEX=regex] -P WeftExpectExit.cmake
# Arguments are separated by '^' (a ';' would split add_test's command).
string(REPLACE "^" ";" COMMAND "${COMMAND}")
execute_process(COMMAND ${COMMAND}
  RESULT_VARIABLE exit_code
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT exit_code STREQUAL EXPECTED_EXIT)
  message(FATAL_ERROR "'${COMMAND}' exited with '${exit_code}', expected "
                      "${EXPECTED_EXIT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "'${COMMAND}': stderr does not match "
                      "'${STDERR_REGEX}':\n${err}")
endif()
message(STATUS "exit ${exit_code} as expected; stderr: ${err}")
