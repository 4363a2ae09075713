# bench.smoke: runs weft_bench briefly and fails if it crashes, exits
# non-zero or any benchmark reports an error, except a driver that is not
# built in ("<driver> unavailable: NOT_FOUND: no driver named ..."), the
# cuda rows where there is neither a GPU nor the test double ("cuda
# unavailable: ..."), the vulkan rows where there is no loader or device
# ("vulkan unavailable: ...") or no glslang to compile its kernels ("no
# SPIR-V kernels"), the
# spinning ping-pong on a single CPU, the io_uring file rows where the build
# or the kernel has no io_uring ("io_uring unavailable: ...") and the cold
# file rows where the file system keeps its pages cached ("page cache
# eviction unavailable: ...", e.g. tmpfs), and the peak rows of an ISA the
# CPU lacks (Int8DotPeak's AVX-512 and VNNI rows on an AMD Zen 1 or 2:
# "... lacks the instructions"; FmaPeak without AVX2: "no AVX2/FMA or
# AVX-512 on this CPU").
#   cmake -DWEFT_BENCH=<path> -DFILTER=<regex> -P smoke.cmake
execute_process(
  COMMAND ${WEFT_BENCH} --benchmark_min_time=0.01
          "--benchmark_filter=${FILTER}"
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output
  RESULT_VARIABLE result)
message("${output}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "weft_bench exited with ${result}")
endif()
# Semicolons would split the messages: CMake lists are ';'-separated.
string(REPLACE ";" "," flat_output "${output}")
string(REGEX MATCHALL "ERROR OCCURRED: '[^\n]*" errors "${flat_output}")
set(failures 0)
foreach(error IN LISTS errors)
  if(error MATCHES "unavailable: NOT_FOUND: no driver named" OR
     error MATCHES "needs 2 CPUs" OR
     error MATCHES "cuda[^ ]* unavailable: " OR
     error MATCHES "vulkan[^ ]* unavailable: " OR
     error MATCHES "no SPIR-V kernels" OR
     error MATCHES "io_uring unavailable: " OR
     error MATCHES "page cache eviction unavailable: " OR
     error MATCHES "this CPU lacks the instructions" OR
     error MATCHES "no AVX2/FMA or AVX-512 on this CPU")
    continue()
  endif()
  message(SEND_ERROR "benchmark failed: ${error}")
  math(EXPR failures "${failures} + 1")
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} benchmark(s) failed")
endif()
