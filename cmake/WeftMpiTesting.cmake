# weft_add_mpi_test(NAME n RANKS r COMMAND exe args...)
# Registers a ctest that runs |exe| on |r| ranks through mpiexec (labels
# "mpi;threaded"). Open MPI refuses root without the ALLOW_RUN_AS_ROOT pair
# (CI runs as root); the rest keeps it on this machine's shared memory and
# lets it put more ranks than cores. Under a sanitizer, Open MPI's own
# findings are suppressed by library name (tests/channel/openmpi.*.supp say
# what and why); weft's code never is. LeakSanitizer needs the slow
# unwinder: Open MPI has no frame pointers, and the fast one stops at its
# first frame.
function(weft_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;RANKS" "COMMAND" ${ARGN})
  list(POP_FRONT T_COMMAND executable)
  set(environment
      "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
      "OMPI_MCA_rmaps_base_oversubscribe=1"
      "OMPI_MCA_btl_vader_single_copy_mechanism=none" "OMPI_MCA_btl=self,vader")
  set(suppressions ${PROJECT_SOURCE_DIR}/tests/channel)
  if(WEFT_SANITIZER STREQUAL "address")
    list(APPEND environment
         "ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0"
         "LSAN_OPTIONS=suppressions=${suppressions}/openmpi.lsan.supp:print_suppressions=0")
  elseif(WEFT_SANITIZER STREQUAL "thread")
    list(APPEND environment
         "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${suppressions}/openmpi.tsan.supp")
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS}
                   ${MPIEXEC_PREFLAGS} ${executable} ${MPIEXEC_POSTFLAGS}
                   ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES
    LABELS "mpi;threaded" TIMEOUT 120 PROCESSORS ${T_RANKS}
    ENVIRONMENT "${environment}")
endfunction()
