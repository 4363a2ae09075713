// A small parser of weft's public headers, for the api_null CTS suite.
//
// It reads every include/weft/*.h and the headers of its folders
// (include/weft/vm/*.h) and yields each exported function: name,
// return type and parameters, each parameter classified for the NULL
// contract (is it a pointer, a semaphore list, a binding table, an
// allocator, may it be NULL). It knows only as much C as the headers use:
// comments are stripped (the // block directly above a declaration is kept
// as its doc comment), preprocessor lines are skipped (with backslash
// continuations), and typedefs, struct/enum bodies, static inline functions
// and `extern "C" {` are passed over. `__attribute__((...))` after a
// declaration and a `...` parameter parse.
#ifndef WEFT_TESTS_CTS_API_API_HEADER_PARSER_H_
#define WEFT_TESTS_CTS_API_API_HEADER_PARSER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define API_MAX_PARAMS 16
#define API_MAX_NAME 96
#define API_MAX_TYPE 128

typedef struct api_param_t {
  // The type as written without the name, e.g. "const uint32_t[3]".
  char type[API_MAX_TYPE];
  // The name as written in the header ("..." for a variadic tail).
  char name[API_MAX_NAME];
  // A pointer for the NULL contract: the type contains '*' or '[', or ends
  // in "_fn_t" (weft_status_t, itself a pointer, is not one).
  bool is_pointer;
  // A by-value weft_semaphore_list_t, weft_binding_table_t or
  // weft_allocator_t: broken by the suite's list/table/allocator variants.
  bool is_semaphore_list;
  bool is_binding_table;
  bool is_allocator;
  // The doc comment above the declaration says "|name| may be NULL" (not
  // followed by " when": a conditional permission counts as required).
  bool is_nullable;
  // The name starts with "out_": set to NULL/0 on every failure.
  bool is_out;
  bool is_varargs;
} api_param_t;

typedef struct api_function_t {
  char name[API_MAX_NAME];
  char return_type[API_MAX_TYPE];
  // The header it was found in, under include/weft ("device.h",
  // "vm/module.h"), and the line.
  char header[64];
  int line;
  uint32_t param_count;
  api_param_t params[API_MAX_PARAMS];
} api_function_t;

typedef struct api_function_list_t {
  api_function_t* functions;
  uint32_t count;
  uint32_t capacity;
} api_function_list_t;

// Parses every *.h in |directory| (sorted by name), then those of each
// folder in it (sorted, recursively: "vm/module.h"), and appends each
// exported function to |list|. Returns false with a message in |error|
// when a folder or file cannot be read, a declaration cannot be parsed, or
// there are no headers at all.
bool api_parse_headers(const char* directory, api_function_list_t* list,
                       char* error, size_t error_capacity);

// Parses one header's text (|header_name| for messages) into |list|.
bool api_parse_header_text(const char* header_name, const char* text,
                           api_function_list_t* list, char* error,
                           size_t error_capacity);

void api_function_list_free(api_function_list_t* list);

// Finds a function by name, or NULL.
const api_function_t* api_function_list_find(const api_function_list_t* list,
                                             const char* name);

// True when |function| returns weft_status_t.
bool api_function_returns_status(const api_function_t* function);

#endif  // WEFT_TESTS_CTS_API_API_HEADER_PARSER_H_
