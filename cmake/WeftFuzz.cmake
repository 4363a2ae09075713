# libFuzzer targets: built only when the C compiler is clang with its fuzzer
# runtime (Debian: clang-14 and libclang-rt-14-dev) and the build is not
# the tsan preset's. Each instruments its own copy of the code it fuzzes
# (coverage, AddressSanitizer, UBSan) and links the rest of weft from
# weft_internal; each is a ctest, label "fuzz", that fuzzes for a bounded
# time (WEFT_FUZZ_SECONDS) from its seeds (.ci/run builds them in
# build/fuzz with CC=clang-14). Without clang weft configures and tests as
# before; only these are missing.
#
# Sets WEFT_FUZZ (ON/OFF) and, when OFF, WEFT_FUZZ_WHY.
include(CheckCSourceCompiles)
set(WEFT_FUZZ_FLAGS -fsanitize=fuzzer)
if(WEFT_SANITIZER STREQUAL "")
  list(APPEND WEFT_FUZZ_FLAGS -fsanitize=address,undefined
       -fno-sanitize-recover=all)
endif()
set(WEFT_FUZZ OFF)
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(WEFT_FUZZ_WHY "the C compiler is ${CMAKE_C_COMPILER_ID}, not clang")
elseif(WEFT_SANITIZER STREQUAL "thread")
  set(WEFT_FUZZ_WHY "ThreadSanitizer builds do not fuzz")
else()
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer")
  check_c_source_compiles([[
    #include <stddef.h>
    #include <stdint.h>
    int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
    int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
      return data && size ? 0 : 0;
    }]] WEFT_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(WEFT_HAVE_LIBFUZZER)
    set(WEFT_FUZZ ON)
    set(WEFT_FUZZ_SECONDS 10 CACHE STRING
        "How long each fuzz ctest fuzzes (seconds)")
  else()
    set(WEFT_FUZZ_WHY "clang cannot link -fsanitize=fuzzer (install "
                      "libclang-rt-dev)")
  endif()
endif()

# weft_add_fuzz_test(NAME test TARGET executable SOURCES s...
#                    [INCLUDES dir...] [LIBS lib...] [SEEDS file...]
#                    [FIXTURES fixture...])
# Builds |executable| from |SOURCES| instrumented for fuzzing, linked with
# weft_internal and |LIBS| (as they are, not instrumented), and registers
# ctest |test| (label fuzz): fuzzing for WEFT_FUZZ_SECONDS from a corpus
# folder of its own (where libFuzzer adds what it finds) and a seed
# folder, fuzz_seeds/<executable> in the current binary directory, into
# which |SEEDS| are copied (a fixture of |FIXTURES| may write more there
# first).
function(weft_add_fuzz_test)
  cmake_parse_arguments(F "" "NAME;TARGET"
                        "SOURCES;INCLUDES;LIBS;SEEDS;FIXTURES" ${ARGN})
  add_executable(${F_TARGET} ${F_SOURCES})
  target_include_directories(${F_TARGET} PRIVATE ${F_INCLUDES})
  target_compile_options(${F_TARGET} PRIVATE ${WEFT_FUZZ_FLAGS})
  target_link_options(${F_TARGET} PRIVATE ${WEFT_FUZZ_FLAGS})
  target_link_libraries(${F_TARGET} PRIVATE weft_internal ${F_LIBS})
  set(corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus_${F_TARGET})
  set(seeds ${CMAKE_CURRENT_BINARY_DIR}/fuzz_seeds/${F_TARGET})
  file(MAKE_DIRECTORY ${corpus} ${seeds})
  if(F_SEEDS)
    file(COPY ${F_SEEDS} DESTINATION ${seeds})
  endif()
  add_test(NAME ${F_NAME}
           COMMAND ${F_TARGET} -max_total_time=${WEFT_FUZZ_SECONDS} -seed=1
                   -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                   ${corpus} ${seeds})
  set_tests_properties(${F_NAME} PROPERTIES LABELS "fuzz" TIMEOUT 120)
  if(F_FIXTURES)
    set_tests_properties(${F_NAME} PROPERTIES FIXTURES_REQUIRED
                         "${F_FIXTURES}")
  endif()
endfunction()
