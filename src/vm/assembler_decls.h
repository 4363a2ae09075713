// weft VM: the assembler's declaration lines (docs/VM.md, "Declarations").
//
// Between a `func` line and the function's first instruction or label,
// `arg NAME[: TYPE]` lines declare its arguments in order and then
// `result NAME[: TYPE]` lines its results: every argument or none, every
// result or none. The assembler hands each such line here, then calls
// weft_vm_asm_decls_end where the declarations stop; the values, their
// dimensions and the function's symbols go into the builder as they are
// read. Errors are the assembler's: INVALID_ARGUMENT
// "FILE:LINE:COLUMN: expected X, found Y". Single-threaded.
#ifndef WEFT_VM_ASSEMBLER_DECLS_H_
#define WEFT_VM_ASSEMBLER_DECLS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vm/bytecode_builder.h"
#include "vm/name_table.h"
#include "vm/signature.h"
#include "weft/allocator.h"
#include "weft/status.h"

// One line of the source: its text without the newline, and its number.
typedef struct weft_vm_asm_source_line_t {
  const char* text;
  size_t length;
  uint32_t number;
} weft_vm_asm_source_line_t;

typedef struct weft_vm_asm_decls_t {
  weft_allocator_t allocator;
  const char* source_name;
  // The function being declared (while |open|).
  bool open;
  const weft_vm_parsed_signature_t* signature;
  char function[96];         // "'@f'", for messages
  uint32_t arg_count;        // 'arg' lines so far
  uint32_t result_count;     // 'result' lines so far
  uint32_t decl_first;       // the builder's decls when the function began
  uint32_t symbol_first;     // and its symbols
  weft_vm_name_table_t names;    // value name -> position (see the .c)
  weft_vm_name_table_t symbols;  // symbol name -> the function's index
} weft_vm_asm_decls_t;

// Initializes |out_decls| for a source named |source_name| (borrowed).
void weft_vm_asm_decls_initialize(weft_allocator_t allocator,
                                  const char* source_name,
                                  weft_vm_asm_decls_t* out_decls);

void weft_vm_asm_decls_deinitialize(weft_vm_asm_decls_t* decls);

// Starts the declarations of function |name| (|name_length| bytes, without
// '@') of |signature| (borrowed until weft_vm_asm_decls_end).
void weft_vm_asm_decls_begin(weft_vm_asm_decls_t* decls,
                             const weft_vm_bytecode_builder_t* builder,
                             const weft_vm_parsed_signature_t* signature,
                             const char* name, size_t name_length);

// Reads one declaration line whose keyword ('arg', or 'result' when
// |is_result|) starts at |keyword_offset| and ends at |position|.
weft_status_t weft_vm_asm_decls_line(weft_vm_asm_decls_t* decls,
                                     weft_vm_bytecode_builder_t* builder,
                                     const weft_vm_asm_source_line_t* line,
                                     size_t keyword_offset, size_t position,
                                     bool is_result);

// Ends the declarations where something else starts (|line| at |offset|):
// fails when some but not all arguments (or results) were declared, else
// records them in |function|. Nothing happens when they are already ended.
weft_status_t weft_vm_asm_decls_end(weft_vm_asm_decls_t* decls,
                                    const weft_vm_asm_source_line_t* line,
                                    size_t offset,
                                    weft_vm_builder_function_t* function);

#endif  // WEFT_VM_ASSEMBLER_DECLS_H_
