# Run by ctest as install.consumer (cmake -P). Inputs (-D):
#   WEFT_BINARY_DIR      the weft build to install
#   CONSUMER_SOURCE_DIR  tests/install/consumer
#   WORK_DIR             scratch folder (wiped first)
#   GENERATOR, C_COMPILER, BUILD_TYPE, EXTRA_FLAGS (sanitizer flags)
cmake_minimum_required(VERSION 3.25)

function(run_step name)
  message(STATUS "install.consumer: ${name}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(out)
    message("${out}")
  endif()
  if(err)
    message("${err}")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install.consumer: ${name} failed (${rc})")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# 1. Install into a private prefix.
run_step("install" ${CMAKE_COMMAND} --install "${WEFT_BINARY_DIR}"
         --prefix "${prefix}")
foreach(f include/weft/weft.h include/weft/kernel_abi.h)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install.consumer: ${f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config "${prefix}/*/weftConfig.cmake")
file(GLOB_RECURSE pc "${prefix}/*/pkgconfig/weft.pc")
if(NOT config OR NOT pc)
  message(FATAL_ERROR "install.consumer: weftConfig.cmake or weft.pc missing "
                      "under ${prefix}")
endif()
get_filename_component(pc_dir "${pc}" DIRECTORY)

# 2. find_package(weft): configure, build and run the consumer project.
run_step("configure consumer" ${CMAKE_COMMAND}
  -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
  "-DCMAKE_C_COMPILER=${C_COMPILER}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_C_FLAGS=${EXTRA_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
run_step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run_step("run consumer (weft::weft)" "${WORK_DIR}/build/consumer_shared")
run_step("run consumer (weft::weft_static)" "${WORK_DIR}/build/consumer_static")

# 3. pkg-config: compile the same source with plain cc.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs weft
                RESULT_VARIABLE rc OUTPUT_VARIABLE pc_flags
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install.consumer: pkg-config --cflags --libs weft "
                      "failed (${rc})")
endif()
message(STATUS "install.consumer: pkg-config --cflags --libs weft: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${EXTRA_FLAGS}")
execute_process(COMMAND ${PKG_CONFIG} --variable=libdir weft
                OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
run_step("cc with pkg-config" "${C_COMPILER}" -std=c11 ${extra_flags}
         "${CONSUMER_SOURCE_DIR}/main.c" -o "${WORK_DIR}/consumer_pkgconfig"
         ${pc_flags} "-Wl,-rpath,${libdir}")
run_step("run consumer (pkg-config)" "${WORK_DIR}/consumer_pkgconfig")

# 4. pkg-config --static: link libweft.a and its private dependencies.
execute_process(COMMAND ${PKG_CONFIG} --static --cflags --libs weft
                RESULT_VARIABLE rc OUTPUT_VARIABLE static_flags
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install.consumer: pkg-config --static failed (${rc})")
endif()
message(STATUS "install.consumer: pkg-config --static --cflags --libs weft: "
               "${static_flags}")
separate_arguments(static_flags UNIX_COMMAND "${static_flags}")
list(TRANSFORM static_flags REPLACE "^-lweft$" "${libdir}/libweft.a")
run_step("cc with pkg-config --static" "${C_COMPILER}" -std=c11
         ${extra_flags} "${CONSUMER_SOURCE_DIR}/main.c"
         -o "${WORK_DIR}/consumer_pkgconfig_static" ${static_flags})
run_step("run consumer (pkg-config --static)"
         "${WORK_DIR}/consumer_pkgconfig_static")
message(STATUS "install.consumer: all consumers ran")
