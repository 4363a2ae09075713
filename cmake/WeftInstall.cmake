# Install rules and the exported CMake package.
#
# Installs libweft (shared and static), the public headers, a CMake package
# (find_package(weft) -> weft::weft and weft::weft_static) and two
# pkg-config modules: weft (libweft.so; a program needs an rpath or
# LD_LIBRARY_PATH to find it under a prefix the loader does not search)
# and weft-static (libweft.a and its dependencies, nothing to find at run
# time). The object library behind both libraries is an implementation
# detail and is not exported. The tools (tools/CMakeLists.txt) install
# weft-info, weft-asm, weft-run and, when built, weft-trace.
include(CMakePackageConfigHelpers)

set(WEFT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/weft"
    CACHE STRING "Where weftConfig.cmake is installed (relative to the prefix)")

install(TARGETS weft weft_static
  EXPORT weftTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# libweft_mpi (channels over MPI) where it was built: weft::weft_mpi, the
# package's `mpi` component, in an export of its own so that only a
# project asking for it finds MPI (weftConfig.cmake).
if(TARGET weft_mpi)
  install(TARGETS weft_mpi EXPORT weftMpiTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT weftMpiTargets
    NAMESPACE weft::
    FILE weftMpiTargets.cmake
    DESTINATION ${WEFT_INSTALL_CMAKEDIR})
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/weft
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

install(EXPORT weftTargets
  NAMESPACE weft::
  FILE weftTargets.cmake
  DESTINATION ${WEFT_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake
  INSTALL_DESTINATION ${WEFT_INSTALL_CMAKEDIR})

# 0.x releases promise nothing across minor versions.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)

install(FILES
  ${PROJECT_BINARY_DIR}/weftConfig.cmake
  ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  DESTINATION ${WEFT_INSTALL_CMAKEDIR})

# weft.pc is relocatable: its paths are relative to the folder it is
# installed in (${pcfiledir}), so `cmake --install --prefix ANY` works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(WEFT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(WEFT_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH weft_pc_up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig"
       "/prefix")
  string(REGEX REPLACE "/$" "" weft_pc_up "${weft_pc_up}")
  set(WEFT_PC_PREFIX "\${pcfiledir}/${weft_pc_up}")
  set(WEFT_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(WEFT_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(WEFT_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(WEFT_PC_LIBS_PRIVATE "-pthread")
foreach(lib ${CMAKE_DL_LIBS} m)
  string(APPEND WEFT_PC_LIBS_PRIVATE " -l${lib}")
endforeach()
if(WEFT_HWLOC_PC_LIBS)  # set by src/CMakeLists.txt when built with hwloc
  list(JOIN WEFT_HWLOC_PC_LIBS " " weft_pc_hwloc)
  string(APPEND WEFT_PC_LIBS_PRIVATE " ${weft_pc_hwloc}")
endif()
if(WEFT_LIBURING_PC_LIBS)  # set by src/CMakeLists.txt when built with liburing
  list(JOIN WEFT_LIBURING_PC_LIBS " " weft_pc_liburing)
  string(APPEND WEFT_PC_LIBS_PRIVATE " ${weft_pc_liburing}")
endif()
# The installed modules are written apart from the build tree's own.
# weft-static.pc: the same paths; Libs names libweft.a by its path (a plain
# -lweft would pick libweft.so) followed by weft.pc's Libs.private, so
# `pkg-config --libs weft-static` is a complete static link line with or
# without --static.
foreach(weft_pc weft weft-static)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${weft_pc}.pc.in
                 ${PROJECT_BINARY_DIR}/pkgconfig-install/${weft_pc}.pc @ONLY)
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig-install/weft.pc
              ${PROJECT_BINARY_DIR}/pkgconfig-install/weft-static.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The build tree's modules, for compiling against a build without
# installing it (PKG_CONFIG_PATH=BUILD/pkgconfig): the source tree's headers
# and the libraries where the build leaves them.
set(WEFT_PC_PREFIX "${PROJECT_BINARY_DIR}")
set(WEFT_PC_LIBDIR "${PROJECT_BINARY_DIR}/src")
set(WEFT_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/include")
foreach(weft_pc weft weft-static)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${weft_pc}.pc.in
                 ${PROJECT_BINARY_DIR}/pkgconfig/${weft_pc}.pc @ONLY)
endforeach()

# `cmake --build B --target weft_installable` builds exactly what
# `cmake --install B` installs (the libraries, the installed tools and the
# Python package), not the tests, examples or benchmarks:
# scripts/run-example.sh builds it so the README's install step works
# straight after the quick start.
add_custom_target(weft_installable)
add_dependencies(weft_installable weft weft_static)
if(TARGET weft_mpi)
  add_dependencies(weft_installable weft_mpi)
endif()
foreach(tool weft-info weft-asm weft-run weft-trace weft_python)
  if(TARGET ${tool})
    add_dependencies(weft_installable ${tool})
  endif()
endforeach()
