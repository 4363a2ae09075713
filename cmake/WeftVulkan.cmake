# The vulkan driver (src/drivers/vulkan) needs Vulkan's headers only (Debian
# libvulkan-dev): it dlopens the loader (libvulkan.so.1) at run time, so a
# machine without a GPU or without the loader still runs everything else.
# glslangValidator (Debian glslang-tools), when found with spirv-opt,
# spirv-link and spirv-val (Debian spirv-tools, which glslang-tools depends
# on), compiles
# the CTS's GLSL test kernels to one SPIR-V module at build time.
#
# Sets WEFT_HAVE_VULKAN, WEFT_VULKAN_INCLUDE_DIR, and WEFT_GLSLANG,
# WEFT_SPIRV_OPT, WEFT_SPIRV_LINK and WEFT_SPIRV_VAL (empty when not
# found).
option(WEFT_ENABLE_VULKAN
       "Build the vulkan driver when Vulkan's headers are found" ON)
set(WEFT_HAVE_VULKAN OFF)
set(WEFT_GLSLANG "")
set(WEFT_SPIRV_OPT "")
set(WEFT_SPIRV_LINK "")
set(WEFT_SPIRV_VAL "")
if(WEFT_ENABLE_VULKAN)
  find_path(WEFT_VULKAN_INCLUDE_DIR vulkan/vulkan_core.h NO_CACHE)
  if(WEFT_VULKAN_INCLUDE_DIR)
    set(WEFT_HAVE_VULKAN ON)
    find_program(WEFT_GLSLANG_PROGRAM glslangValidator NO_CACHE)
    find_program(WEFT_SPIRV_OPT_PROGRAM spirv-opt NO_CACHE)
    find_program(WEFT_SPIRV_LINK_PROGRAM spirv-link NO_CACHE)
    find_program(WEFT_SPIRV_VAL_PROGRAM spirv-val NO_CACHE)
    if(WEFT_GLSLANG_PROGRAM AND WEFT_SPIRV_OPT_PROGRAM AND
       WEFT_SPIRV_LINK_PROGRAM AND WEFT_SPIRV_VAL_PROGRAM)
      set(WEFT_GLSLANG ${WEFT_GLSLANG_PROGRAM})
      set(WEFT_SPIRV_OPT ${WEFT_SPIRV_OPT_PROGRAM})
      set(WEFT_SPIRV_LINK ${WEFT_SPIRV_LINK_PROGRAM})
      set(WEFT_SPIRV_VAL ${WEFT_SPIRV_VAL_PROGRAM})
    endif()
    message(STATUS "weft: Vulkan headers in ${WEFT_VULKAN_INCLUDE_DIR}: "
                   "building the vulkan driver (glslangValidator: "
                   "${WEFT_GLSLANG_PROGRAM})")
  else()
    message(STATUS "weft: Vulkan headers (vulkan/vulkan_core.h) not found: "
                   "the vulkan driver is left out (install libvulkan-dev)")
  endif()
else()
  message(STATUS "weft: WEFT_ENABLE_VULKAN=OFF: the vulkan driver is left out")
endif()

# What tests and the benchmarks' smoke test run the driver on: Mesa's
# software device, chosen by pointing the loader at its ICD file rather
# than taking whatever device is first.
find_file(WEFT_VULKAN_SOFTWARE_ICD NAMES lvp_icd.x86_64.json lvp_icd.aarch64.json
          lvp_icd.json PATHS /usr/share/vulkan/icd.d NO_DEFAULT_PATH NO_CACHE)
# The environment of every test on the vulkan driver: the validation layer's
# first message aborts, the loader sees Mesa's software device, and under
# TSan the layer's and Mesa's own threads are suppressed (the file says
# which and why) and the 1 s TSan sleeps at exit while other threads live
# is skipped: Mesa's threads outlive the tests (the instance is the
# process's), so api_null's forked children, one per call, slept 1 s each
# (its suite took over 5 minutes).
set(WEFT_VULKAN_TEST_ENVIRONMENT "WEFT_VULKAN_VALIDATION_FATAL=1")
if(WEFT_VULKAN_SOFTWARE_ICD)
  list(APPEND WEFT_VULKAN_TEST_ENVIRONMENT
       "VK_ICD_FILENAMES=${WEFT_VULKAN_SOFTWARE_ICD}")
endif()
# Under ASan, lavapipe's aligned allocations for each dispatch land on
# fresh pages while the quarantine holds the freed ones, and each page's
# first write faults and flushes the TLB of every CPU the process runs on:
# cts.vulkan.scale's alternating regions took 4.0 s alone and 18-24 s in CI
# beside other tests (its 10 s execute wait ran out), 1.3 s without the
# quarantine. The quarantine only delays reuse, to catch use after free;
# weft's own code keeps that check in the same CTS on every other driver.
if(WEFT_SANITIZER STREQUAL "address")
  list(APPEND WEFT_VULKAN_TEST_ENVIRONMENT
       "ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=0")
endif()
if(WEFT_SANITIZER STREQUAL "thread")
  list(APPEND WEFT_VULKAN_TEST_ENVIRONMENT
       "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:atexit_sleep_ms=0:suppressions=${PROJECT_SOURCE_DIR}/tests/cts/vulkan/vulkan.tsan.supp")
endif()
