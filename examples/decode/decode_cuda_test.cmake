# weft-decode --device=cuda on the CUDA test double (its kernels the CPU
# twins of decode_cuda.h's, WEFT_CUDA_DOUBLE_TWINS) against the same run
# on local-task: the same generated token ids.
#   cmake -DDECODE=weft-decode -DMODEL=file -DDOUBLE=libweft_cuda_double.so
#         -DTWINS=module.so:symbol -P decode_cuda_test.cmake
set(args --model=${MODEL} --prompt-ids=1,2,3 --steps=16)
execute_process(COMMAND ${DECODE} ${args} --device=local-task
                OUTPUT_VARIABLE cpu ERROR_VARIABLE cpu_errors
                RESULT_VARIABLE code)
if(NOT code EQUAL 0 OR NOT cpu MATCHES "generated:([ 0-9]+)\n")
  message(FATAL_ERROR "the local-task run failed (${code}):\n${cpu}\n"
                      "${cpu_errors}")
endif()
set(expected "${CMAKE_MATCH_1}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env
                        WEFT_CUDA_DRIVER_LIBRARY=${DOUBLE}
                        WEFT_CUDA_DOUBLE_TWINS=${TWINS}
                        ${DECODE} ${args} --device=cuda
                OUTPUT_VARIABLE gpu ERROR_VARIABLE gpu_errors
                RESULT_VARIABLE code)
if(NOT code EQUAL 0 OR NOT gpu MATCHES "device: cuda[^\n]*\n")
  message(FATAL_ERROR "the cuda run failed (${code}):\n${gpu}\n${gpu_errors}")
endif()
if(NOT gpu MATCHES "generated:([ 0-9]+)\n")
  message(FATAL_ERROR "the cuda run printed no ids:\n${gpu}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL expected)
  message(FATAL_ERROR "cuda generated${CMAKE_MATCH_1}, local-task "
                      "generated${expected}")
endif()
message(STATUS "cuda and local-task generated${expected}")
