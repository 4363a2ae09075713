# Run by ctest as install.consumer (cmake -P): installs weft into a private
# prefix (one the dynamic loader does not search, like /opt/weft), then
# builds and runs tests/install/consumer against it:
#   2. find_package(weft): weft::weft and weft::weft_static (and the mpi
#      component, weft::weft_mpi, where weft was built with MPI); a
#      C++-only consumer and one on a machine without MPI configure;
#   3. pkg-config weft: without an rpath the binary does not start
#      (libweft.so.0 not found), with LD_LIBRARY_PATH or the README's
#      -Wl,-rpath,$(pkg-config --variable=libdir weft) it runs;
#   4. pkg-config weft-static: no NEEDED libweft.so (readelf -d);
#   5. with libweft.so* deleted from the prefix the static consumers still
#      run and the shared one does not start;
#   6. the build tree's own modules (BUILD/pkgconfig) compile and link the
#      consumer without an install.
# Inputs (-D):
#   WEFT_BINARY_DIR      the weft build to install
#   CONSUMER_SOURCE_DIR  tests/install/consumer
#   WORK_DIR             scratch folder (wiped first)
#   GENERATOR, C_COMPILER, CXX_COMPILER, BUILD_TYPE, EXTRA_FLAGS (sanitizer
#   flags)
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
file(GLOB_RECURSE static_pc "${prefix}/*/pkgconfig/weft-static.pc")
if(NOT config OR NOT pc OR NOT static_pc)
  message(FATAL_ERROR "install.consumer: weftConfig.cmake, weft.pc or "
                      "weft-static.pc missing under ${prefix}")
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
if(EXISTS "${WORK_DIR}/build/consumer_mpi")
  # A singleton MPI job; Open MPI refuses root without these.
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
  set(ENV{OMPI_MCA_btl} "self,vader")
  # Under a sanitizer, Open MPI's own findings are suppressed as in the
  # channel tests (cmake/WeftMpiTesting.cmake); harmless otherwise.
  set(ENV{ASAN_OPTIONS} "detect_leaks=1:fast_unwind_on_malloc=0")
  set(ENV{LSAN_OPTIONS} "suppressions=${SUPPRESSIONS_DIR}/openmpi.lsan.supp:print_suppressions=0")
  set(ENV{TSAN_OPTIONS} "halt_on_error=1:suppressions=${SUPPRESSIONS_DIR}/openmpi.tsan.supp")
  run_step("run consumer (weft::weft_mpi)" "${WORK_DIR}/build/consumer_mpi")
endif()

# 2b. Consumers that must configure without MPI: a C++-only project (C
# not enabled, which FindMPI's C component needs), and the C consumer on
# a "machine without MPI" (find_package(MPI) disabled), asking for no
# component. Asking for the mpi component there fails, saying why.
run_step("configure C++-only consumer" ${CMAKE_COMMAND}
  -S "${CONSUMER_SOURCE_DIR}/../consumer_cxx" -B "${WORK_DIR}/build_cxx"
  -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
run_step("build C++-only consumer" ${CMAKE_COMMAND} --build
         "${WORK_DIR}/build_cxx")
run_step("run C++-only consumer" "${WORK_DIR}/build_cxx/consumer_cxx")
set(no_mpi_flags -G "${GENERATOR}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DCMAKE_C_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}"
    -DCMAKE_DISABLE_FIND_PACKAGE_MPI=TRUE)
run_step("configure consumer without MPI" ${CMAKE_COMMAND}
  -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build_no_mpi" ${no_mpi_flags}
  -DCONSUMER_MPI=none)
run_step("build consumer without MPI" ${CMAKE_COMMAND} --build
         "${WORK_DIR}/build_no_mpi")
run_step("run consumer without MPI" "${WORK_DIR}/build_no_mpi/consumer_static")
execute_process(COMMAND ${CMAKE_COMMAND}
  -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build_mpi_missing"
  ${no_mpi_flags} -DCONSUMER_MPI=required
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "weft: component mpi: ")
  message(FATAL_ERROR "install.consumer: COMPONENTS mpi without MPI: "
                      "expected a failure naming the component, got rc "
                      "${rc}:\n${out}${err}")
endif()
message(STATUS "install.consumer: COMPONENTS mpi without MPI fails, as "
               "expected")

# 3. pkg-config weft (libweft.so): compile the same source with plain cc.
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(READELF readelf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
unset(ENV{LD_LIBRARY_PATH})
# Runs pkg-config with ARGN into |out_var| (stripped), failing the test if
# pkg-config fails.
function(pkg_config out_var)
  execute_process(COMMAND ${PKG_CONFIG} ${ARGN} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install.consumer: pkg-config ${ARGN} failed (${rc}): "
                        "${err}")
  endif()
  message(STATUS "install.consumer: pkg-config ${ARGN}: ${out}")
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
# Fails unless |binary| has (|expect| TRUE) or lacks a NEEDED libweft.so.
function(check_needs_libweft binary expect)
  execute_process(COMMAND ${READELF} -d "${binary}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE dynamic ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install.consumer: readelf -d ${binary} failed: "
                        "${err}")
  endif()
  if(dynamic MATCHES "NEEDED[^\n]*libweft\\.so")
    set(needs TRUE)
  else()
    set(needs FALSE)
  endif()
  if(NOT needs STREQUAL expect)
    message(FATAL_ERROR "install.consumer: ${binary}: NEEDED libweft.so is "
                        "${needs}, expected ${expect}:\n${dynamic}")
  endif()
endfunction()
# Runs |binary|, which must fail to start because libweft.so.0 is not found.
function(expect_libweft_not_found name binary)
  execute_process(COMMAND "${binary}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "libweft\\.so\\.0")
    message(FATAL_ERROR "install.consumer: ${name}: expected the loader to "
                        "miss libweft.so.0, got rc ${rc}: ${out}${err}")
  endif()
  message(STATUS "install.consumer: ${name}: does not start, as expected: "
                 "${err}")
endfunction()

pkg_config(pc_flags --cflags --libs weft)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${EXTRA_FLAGS}")
pkg_config(libdir --variable=libdir weft)
# 3a. What the README warns about: the prefix is not one the loader
# searches and pkg-config gives no rpath, so the binary does not start...
run_step("cc with pkg-config weft, no rpath" "${C_COMPILER}" -std=c11
         ${extra_flags} "${CONSUMER_SOURCE_DIR}/main.c"
         -o "${WORK_DIR}/consumer_pkgconfig_norpath" ${pc_flags})
check_needs_libweft("${WORK_DIR}/consumer_pkgconfig_norpath" TRUE)
expect_libweft_not_found("consumer (pkg-config weft, no rpath)"
                         "${WORK_DIR}/consumer_pkgconfig_norpath")
# ...unless LD_LIBRARY_PATH names the lib folder,
run_step("run consumer (pkg-config weft, LD_LIBRARY_PATH)"
         ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${libdir}"
         "${WORK_DIR}/consumer_pkgconfig_norpath")
# 3b. ...or it is linked with the README's rpath line.
run_step("cc with pkg-config weft + rpath" "${C_COMPILER}" -std=c11
         ${extra_flags} "${CONSUMER_SOURCE_DIR}/main.c"
         -o "${WORK_DIR}/consumer_pkgconfig" ${pc_flags} "-Wl,-rpath,${libdir}")
run_step("run consumer (pkg-config weft + rpath)"
         "${WORK_DIR}/consumer_pkgconfig")

# 4. pkg-config weft-static: libweft.a and its private dependencies, the
# same line with or without --static; the binary needs no libweft.so.
pkg_config(static_flags --cflags --libs weft-static)
pkg_config(static_flags_static --static --cflags --libs weft-static)
if(NOT static_flags STREQUAL static_flags_static)
  message(FATAL_ERROR "install.consumer: pkg-config weft-static gives "
                      "'${static_flags}' but with --static "
                      "'${static_flags_static}'")
endif()
separate_arguments(static_flags UNIX_COMMAND "${static_flags}")
run_step("cc with pkg-config weft-static" "${C_COMPILER}" -std=c11
         ${extra_flags} "${CONSUMER_SOURCE_DIR}/main.c"
         -o "${WORK_DIR}/consumer_pkgconfig_static" ${static_flags})
check_needs_libweft("${WORK_DIR}/consumer_pkgconfig_static" FALSE)
check_needs_libweft("${WORK_DIR}/build/consumer_static" FALSE)
check_needs_libweft("${WORK_DIR}/build/consumer_shared" TRUE)

# 5. Take libweft.so away: the static consumers still run, the shared one
# (CMake's, with its build rpath into the prefix) no longer starts.
file(GLOB shared_libs "${libdir}/libweft.so*")
if(NOT shared_libs)
  message(FATAL_ERROR "install.consumer: no libweft.so* in ${libdir}")
endif()
file(REMOVE ${shared_libs})
run_step("run consumer (pkg-config weft-static, no libweft.so)"
         "${WORK_DIR}/consumer_pkgconfig_static")
run_step("run consumer (weft::weft_static, no libweft.so)"
         "${WORK_DIR}/build/consumer_static")
expect_libweft_not_found("consumer (weft::weft, no libweft.so)"
                         "${WORK_DIR}/build/consumer_shared")
# 6. The build tree's own pkg-config modules (BUILD/pkgconfig): compiling
# against a build without installing it, headers from the source tree and
# libraries where the build leaves them.
set(ENV{PKG_CONFIG_PATH} "${WEFT_BINARY_DIR}/pkgconfig")
pkg_config(tree_flags --cflags --libs weft)
pkg_config(tree_libdir --variable=libdir weft)
if(NOT EXISTS "${tree_libdir}/libweft.so")
  message(FATAL_ERROR "install.consumer: the build tree's weft.pc names "
                      "libdir ${tree_libdir}, which holds no libweft.so")
endif()
separate_arguments(tree_flags UNIX_COMMAND "${tree_flags}")
run_step("cc with the build tree's pkg-config weft" "${C_COMPILER}" -std=c11
         ${extra_flags} "${CONSUMER_SOURCE_DIR}/main.c"
         -o "${WORK_DIR}/consumer_tree" ${tree_flags}
         "-Wl,-rpath,${tree_libdir}")
run_step("run consumer (build tree, pkg-config weft)"
         "${WORK_DIR}/consumer_tree")
pkg_config(tree_static_flags --cflags --libs weft-static)
separate_arguments(tree_static_flags UNIX_COMMAND "${tree_static_flags}")
run_step("cc with the build tree's pkg-config weft-static" "${C_COMPILER}"
         -std=c11 ${extra_flags} "${CONSUMER_SOURCE_DIR}/main.c"
         -o "${WORK_DIR}/consumer_tree_static" ${tree_static_flags})
check_needs_libweft("${WORK_DIR}/consumer_tree_static" FALSE)
run_step("run consumer (build tree, pkg-config weft-static)"
         "${WORK_DIR}/consumer_tree_static")
message(STATUS "install.consumer: all consumers ran")
