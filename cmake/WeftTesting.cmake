# weft_add_test(NAME n SOURCES s... [LABELS l...] [LIBS lib...])
# Builds a cmocka test executable and registers it with ctest as |n|.
# Label "threaded" marks tests that start threads (the tsan preset's set).
function(weft_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LABELS;LIBS" ${ARGN})
  string(REPLACE "." "_" target "test_${T_NAME}")
  add_executable(${target} ${T_SOURCES})
  target_link_libraries(${target} PRIVATE weft_internal PkgConfig::CMOCKA
                        ${T_LIBS})
  add_test(NAME ${T_NAME} COMMAND ${target})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "unit;${T_LABELS}"
                       TIMEOUT 300)
endfunction()

# The drivers every CTS suite runs against.
set(WEFT_CTS_DRIVERS "local-sync;local-task" CACHE STRING
    "Drivers the CTS runs on")

# weft_add_cts_suite(SUITE s SOURCES src... [LABELS l...])
# Builds cts_<s> and registers cts.<driver>.<s> for every driver in
# WEFT_CTS_DRIVERS, labelled "cts".
function(weft_add_cts_suite)
  cmake_parse_arguments(T "" "SUITE" "SOURCES;LABELS" ${ARGN})
  set(target "cts_${T_SUITE}")
  add_executable(${target} ${T_SOURCES})
  target_link_libraries(${target} PRIVATE weft_cts_support)
  foreach(driver ${WEFT_CTS_DRIVERS})
    add_test(NAME cts.${driver}.${T_SUITE}
             COMMAND ${target} --driver ${driver})
    set_tests_properties(cts.${driver}.${T_SUITE} PROPERTIES
      LABELS "cts;${T_LABELS}" TIMEOUT 300
      ENVIRONMENT "WEFT_CTS_KERNEL_LIBRARY=$<TARGET_FILE:weft_cts_test_kernels_module>")
  endforeach()
  # The cuda driver, where it is built with the CTS's CUDA kernels: on a GPU
  # (cts.cuda.<suite>, skipped where there is none) and on the CPU test
  # double of the driver API (cts.cuda-double.<suite>, tests/cuda_double),
  # which runs the driver's own logic everywhere.
  if(TARGET weft_cuda_double AND TARGET weft_cts_cuda_kernels)
    add_test(NAME cts.cuda.${T_SUITE} COMMAND ${target} --driver cuda)
    set_tests_properties(cts.cuda.${T_SUITE} PROPERTIES
      LABELS "cts;cuda;${T_LABELS}" TIMEOUT 300 SKIP_RETURN_CODE 77)
    add_test(NAME cts.cuda-double.${T_SUITE} COMMAND ${target} --driver cuda)
    set_tests_properties(cts.cuda-double.${T_SUITE} PROPERTIES
      LABELS "cts;cuda;${T_LABELS}" TIMEOUT 300 SKIP_RETURN_CODE 77
      ENVIRONMENT "WEFT_CUDA_DRIVER_LIBRARY=$<TARGET_FILE:weft_cuda_double>")
  endif()
endfunction()
