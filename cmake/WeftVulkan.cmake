# The vulkan driver (src/drivers/vulkan) needs Vulkan's headers only (Debian
# libvulkan-dev): it dlopens the loader (libvulkan.so.1) at run time, so a
# machine without a GPU or without the loader still runs everything else.
# glslangValidator (Debian glslang-tools), when found, compiles the CTS's
# GLSL test kernels to SPIR-V at build time.
#
# Sets WEFT_HAVE_VULKAN, WEFT_VULKAN_INCLUDE_DIR and WEFT_GLSLANG (empty when
# not found).
option(WEFT_ENABLE_VULKAN
       "Build the vulkan driver when Vulkan's headers are found" ON)
set(WEFT_HAVE_VULKAN OFF)
set(WEFT_GLSLANG "")
if(WEFT_ENABLE_VULKAN)
  find_path(WEFT_VULKAN_INCLUDE_DIR vulkan/vulkan_core.h NO_CACHE)
  if(WEFT_VULKAN_INCLUDE_DIR)
    set(WEFT_HAVE_VULKAN ON)
    find_program(WEFT_GLSLANG_PROGRAM glslangValidator NO_CACHE)
    if(WEFT_GLSLANG_PROGRAM)
      set(WEFT_GLSLANG ${WEFT_GLSLANG_PROGRAM})
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
