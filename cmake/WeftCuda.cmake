# The cuda driver (src/drivers/cuda) needs the CUDA toolkit's headers only:
# it dlopens libcuda.so.1 at run time. Without cuda.h the driver is left
# out and the build says so. nvcc, when found, compiles the CTS's CUDA
# kernels to PTX and an sm_90 fatbin at build time.
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
