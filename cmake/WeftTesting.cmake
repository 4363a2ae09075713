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

# The vulkan driver's CTS runs on Mesa's software device (Debian
# mesa-vulkan-drivers), chosen by pointing the loader at its ICD file rather
# than taking whatever device is first, with the Khronos validation layer on
# and fatal (any message fails the test): every suite of the CTS.
set(WEFT_CTS_VULKAN_SUITES
    semaphore fence queue_ordering failure_order queue_errors queue_host_call
    queue_alloca buffer buffer_mapping domain channel queue_memory device
    queue_transfer)
# Those that dispatch the CTS's kernels, where glslang compiled them
# (tests/cts/vulkan).
if(WEFT_GLSLANG)
  list(APPEND WEFT_CTS_VULKAN_SUITES dispatch command_buffer executable scale
       transient concurrency file)
  # api_null forks a child per call, and each child starts Vulkan afresh
  # (the loader and Mesa's LLVM loaded and relocated, the instance, the
  # device, the layer): 28 s here, 100 s under ASan, and under TSan 112 s
  # alone (64 s without the layer), most of it TSan's shadow pages for
  # those libraries, so past its 5 minutes beside other tests or on a
  # machine 2-4x slower. What it checks (NULL arguments, one call per
  # process) has no threads for TSan to watch, so the tsan preset leaves it
  # out for vulkan; the other drivers run it there.
  if(NOT WEFT_SANITIZER STREQUAL "thread")
    list(APPEND WEFT_CTS_VULKAN_SUITES api_null)
  endif()
endif()
# Suites run a second time without the layer, as users run the driver: the
# layer does work of its own in every submit, which changes the timing the
# ordering cases meet.
set(WEFT_CTS_VULKAN_NOVALIDATION_SUITES queue_ordering)
# Suites run without the layer only: api_null's refused calls return
# before any Vulkan call (the layer has nothing to check there), while
# every forked child loads the layer afresh: 17 s of its 52 s here
# (a third), which under ASan and a loaded machine took the suite past its
# 5 minutes (300 s; 208 s at load 10).
set(WEFT_CTS_VULKAN_LAYERLESS_SUITES api_null)

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
  if(WEFT_HAVE_VULKAN AND T_SUITE IN_LIST WEFT_CTS_VULKAN_SUITES)
    set(vulkan_environment
        "WEFT_CTS_KERNEL_LIBRARY=$<TARGET_FILE:weft_cts_test_kernels_module>"
        ${WEFT_VULKAN_TEST_ENVIRONMENT})
    # Skipped (77) where there is no loader, device or validation layer.
    set(vulkan_device "vulkan?validation=on")
    if(T_SUITE IN_LIST WEFT_CTS_VULKAN_LAYERLESS_SUITES)
      set(vulkan_device vulkan)
    endif()
    add_test(NAME cts.vulkan.${T_SUITE}
             COMMAND ${target} --driver "${vulkan_device}")
    set_tests_properties(cts.vulkan.${T_SUITE} PROPERTIES
      LABELS "cts;vulkan;${T_LABELS}" TIMEOUT 300 SKIP_RETURN_CODE 77
      ENVIRONMENT "${vulkan_environment}")
    if(T_SUITE IN_LIST WEFT_CTS_VULKAN_NOVALIDATION_SUITES)
      add_test(NAME cts.vulkan-novalidation.${T_SUITE}
               COMMAND ${target} --driver vulkan)
      set_tests_properties(cts.vulkan-novalidation.${T_SUITE} PROPERTIES
        LABELS "cts;vulkan;${T_LABELS}" TIMEOUT 300 SKIP_RETURN_CODE 77
        ENVIRONMENT "${vulkan_environment}")
    endif()
  endif()
  # Both semaphore forms: events (the default) and memory words
  # (cts.cuda-memory.*, cts.cuda-double-memory.*).
  if(TARGET weft_cuda_double AND TARGET weft_cts_cuda_kernels)
    foreach(mode "" "-memory")
      set(device_string cuda)
      if(mode STREQUAL "-memory")
        set(device_string "cuda?semaphores=memory")
      endif()
      add_test(NAME cts.cuda${mode}.${T_SUITE}
               COMMAND ${target} --driver ${device_string})
      set_tests_properties(cts.cuda${mode}.${T_SUITE} PROPERTIES
        LABELS "cts;cuda;${T_LABELS}" TIMEOUT 300 SKIP_RETURN_CODE 77)
      add_test(NAME cts.cuda-double${mode}.${T_SUITE}
               COMMAND ${target} --driver ${device_string})
      set_tests_properties(cts.cuda-double${mode}.${T_SUITE} PROPERTIES
        LABELS "cts;cuda;${T_LABELS}" TIMEOUT 300 SKIP_RETURN_CODE 77
        ENVIRONMENT "WEFT_CUDA_DRIVER_LIBRARY=$<TARGET_FILE:weft_cuda_double>")
    endforeach()
  endif()
endfunction()
