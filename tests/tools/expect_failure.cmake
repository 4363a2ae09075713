# cmake -DCOMMAND="tool;arg;..." -DEXPECT=regex -P expect_failure.cmake
# Runs COMMAND and passes when it exits non-zero and its output (stdout and
# stderr together) matches EXPECT.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE result
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(result EQUAL 0)
  message(FATAL_ERROR "expected a failure, but '${COMMAND}' exited 0")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}'")
endif()
