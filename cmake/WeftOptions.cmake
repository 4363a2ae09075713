# Compiler flags shared by every weft target (through weft_compile_options).
add_library(weft_compile_options INTERFACE)
target_compile_options(weft_compile_options INTERFACE
  -Wall -Wextra -Wno-unused-parameter -Wshadow
  $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>)
target_compile_definitions(weft_compile_options INTERFACE _GNU_SOURCE)
if(WEFT_WERROR)
  target_compile_options(weft_compile_options INTERFACE -Werror)
endif()

if(WEFT_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(WEFT_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT WEFT_SANITIZER STREQUAL "")
  message(FATAL_ERROR "WEFT_SANITIZER must be '', address or thread")
endif()
