# The cuda driver (src/drivers/cuda) needs the CUDA toolkit's headers only:
# it dlopens libcuda.so.1 at run time. Without cuda.h the driver is left
# out and the build says so. nvcc, when found, compiles CUDA kernels at
# build time (weft_cuda_embed, below: the CTS's, the decode example's).
#
# Sets WEFT_HAVE_CUDA, WEFT_CUDA_INCLUDE_DIR and WEFT_NVCC (empty when not
# found).
option(WEFT_ENABLE_CUDA "Build the cuda driver when the CUDA toolkit's headers are found" ON)
set(WEFT_HAVE_CUDA OFF)
set(WEFT_NVCC "")
if(WEFT_ENABLE_CUDA)
  find_path(WEFT_CUDA_INCLUDE_DIR cuda.h
            HINTS ENV CUDA_PATH ENV CUDA_HOME /usr/local/cuda
            PATH_SUFFIXES include NO_CACHE)
  if(WEFT_CUDA_INCLUDE_DIR)
    set(WEFT_HAVE_CUDA ON)
    get_filename_component(_weft_cuda_root ${WEFT_CUDA_INCLUDE_DIR} DIRECTORY)
    find_program(WEFT_NVCC_PROGRAM nvcc HINTS ${_weft_cuda_root}/bin
                 NO_CACHE)
    if(WEFT_NVCC_PROGRAM)
      set(WEFT_NVCC ${WEFT_NVCC_PROGRAM})
      message(STATUS "weft: CUDA headers in ${WEFT_CUDA_INCLUDE_DIR}, nvcc "
                     "${WEFT_NVCC}: building the cuda driver and its kernels")
    else()
      message(STATUS "weft: CUDA headers in ${WEFT_CUDA_INCLUDE_DIR} but no "
                     "nvcc: building the cuda driver; the CTS's CUDA kernels "
                     "and the cuda CTS runs are left out")
    endif()
  else()
    message(STATUS "weft: CUDA toolkit headers (cuda.h) not found: the cuda "
                   "driver is left out (install the toolkit or set CUDA_PATH)")
  endif()
else()
  message(STATUS "weft: WEFT_ENABLE_CUDA=OFF: the cuda driver is left out")
endif()

# weft_cuda_embed(OUTPUT_VARIABLE var SOURCE file.cu KIND ptx|fatbin
#                 ARCH arch SYMBOL name HEADER header.h [DEPENDS file...]
#                 [COMMENT text])
# Compiles SOURCE with nvcc at build time, to PTX for a virtual ARCH
# (compute_90) or to a fatbin for a real one (sm_90), and embeds the result
# as the bytes SYMBOL and SYMBOL_size (cmake/embed_file.cmake) in a C file
# whose path goes to |var| for a target's sources. nvcc's warnings are
# errors under WEFT_WERROR. Call only where WEFT_NVCC is set.
function(weft_cuda_embed)
  cmake_parse_arguments(E "" "OUTPUT_VARIABLE;SOURCE;KIND;ARCH;SYMBOL;HEADER;COMMENT"
                        "DEPENDS" ${ARGN})
  get_filename_component(stem ${E_SOURCE} NAME_WE)
  set(binary ${CMAKE_CURRENT_BINARY_DIR}/${stem}.${E_KIND})
  set(embedded ${CMAKE_CURRENT_BINARY_DIR}/${E_SYMBOL}_embedded.c)
  if(E_KIND STREQUAL "ptx")
    set(mode --ptx -arch=${E_ARCH})
  elseif(E_KIND STREQUAL "fatbin")
    set(mode --fatbin -gencode arch=compute_${E_ARCH},code=sm_${E_ARCH})
  else()
    message(FATAL_ERROR "weft_cuda_embed: KIND must be ptx or fatbin")
  endif()
  set(werror "")
  if(WEFT_WERROR)
    set(werror -Werror all-warnings)
  endif()
  add_custom_command(OUTPUT ${binary}
    COMMAND ${WEFT_NVCC} ${mode} ${werror} -o ${binary} ${E_SOURCE}
    DEPENDS ${E_SOURCE} ${E_DEPENDS}
    COMMENT "nvcc: ${E_COMMENT} to ${E_KIND} (${E_ARCH})"
    VERBATIM)
  add_custom_command(OUTPUT ${embedded}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${binary} -DOUTPUT=${embedded}
            -DSYMBOL=${E_SYMBOL} -DHEADER=${E_HEADER}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${binary} ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${E_COMMENT} (${E_KIND})"
    VERBATIM)
  set(${E_OUTPUT_VARIABLE} ${embedded} PARENT_SCOPE)
endfunction()
