// Test support: module comparison (see module_compare.h).
#include "module_compare.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool strings_equal(const char* a, const char* b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool signatures_equal(weft_vm_signature_t a, weft_vm_signature_t b) {
  const uint32_t count = (uint32_t)a.arg_count + a.ret_count;
  return a.arg_count == b.arg_count && a.ret_count == b.ret_count &&
         (count == 0 || memcmp(a.types, b.types, count) == 0) &&
         strings_equal(a.text, b.text);
}

// Compares one list of declared values (|count| of them, NULL: none).
static bool decl_lists_equal(const weft_vm_decl_t* a, const weft_vm_decl_t* b,
                             uint32_t count) {
  if ((a == NULL) != (b == NULL)) return false;
  for (uint32_t i = 0; a && i < count; ++i) {
    if (!strings_equal(a[i].name, b[i].name) ||
        a[i].element_type != b[i].element_type || a[i].rank != b[i].rank) {
      return false;
    }
    for (uint32_t d = 0; d < a[i].rank; ++d) {
      const weft_vm_decl_dim_t x = a[i].dims[d];
      const weft_vm_decl_dim_t y = b[i].dims[d];
      if (x.kind != y.kind || x.size != y.size || x.symbol != y.symbol) {
        return false;
      }
    }
  }
  return true;
}

// Compares two functions' declarations (names, tensor types, symbols).
static bool decls_equal(const weft_vm_bytecode_t* m, const weft_vm_bytecode_t* n,
                        uint32_t index) {
  const weft_vm_function_t* x = &m->functions[index];
  const weft_vm_function_decls_t* a = weft_vm_bytecode_function_decls(m, index);
  const weft_vm_function_decls_t* b = weft_vm_bytecode_function_decls(n, index);
  if (!a || !b) return a == b;
  if (a->symbol_count != b->symbol_count) return false;
  for (uint32_t i = 0; i < a->symbol_count; ++i) {
    if (!strings_equal(a->symbols[i], b->symbols[i])) return false;
  }
  return decl_lists_equal(a->args, b->args, x->signature.arg_count) &&
         decl_lists_equal(a->results, b->results, x->signature.ret_count);
}

// Compares |count| elements of |size| bytes; NULL arrays are fine when
// |count| is 0.
static bool arrays_equal(const void* a, const void* b, uint64_t count,
                         size_t size) {
  return count == 0 || memcmp(a, b, (size_t)count * size) == 0;
}

#define DIFFERENT(...)                    \
  do {                                    \
    snprintf(why, capacity, __VA_ARGS__); \
    return false;                         \
  } while (0)

bool weft_vm_test_modules_equal(const weft_vm_bytecode_t* a,
                                const weft_vm_bytecode_t* b, bool compare_lines,
                                char* why, size_t capacity) {
  if (!strings_equal(a->name, b->name)) {
    DIFFERENT("module names '%s' and '%s'", a->name, b->name);
  }
  if (a->function_count != b->function_count) {
    DIFFERENT("%" PRIu32 " and %" PRIu32 " functions", a->function_count,
              b->function_count);
  }
  for (uint32_t i = 0; i < a->function_count; ++i) {
    const weft_vm_function_t* x = &a->functions[i];
    const weft_vm_function_t* y = &b->functions[i];
    if (!strings_equal(x->name, y->name) ||
        !signatures_equal(x->signature, y->signature) ||
        x->scalar_count != y->scalar_count || x->ref_count != y->ref_count ||
        x->code_offset != y->code_offset || x->code_count != y->code_count ||
        x->flags != y->flags) {
      DIFFERENT("function %" PRIu32 " ('%s' and '%s') differs", i, x->name,
                y->name);
    }
    if (!decls_equal(a, b, i)) {
      DIFFERENT("function %" PRIu32 " ('%s') declares different values", i,
                x->name);
    }
  }
  if (a->import_count != b->import_count) {
    DIFFERENT("%" PRIu32 " and %" PRIu32 " imports", a->import_count,
              b->import_count);
  }
  for (uint32_t i = 0; i < a->import_count; ++i) {
    const weft_vm_import_t* x = &a->imports[i];
    const weft_vm_import_t* y = &b->imports[i];
    if (!strings_equal(x->module_name, y->module_name) ||
        !strings_equal(x->function_name, y->function_name) ||
        !signatures_equal(x->signature, y->signature)) {
      DIFFERENT("import %" PRIu32 " differs", i);
    }
  }
  if (a->code_count != b->code_count) {
    DIFFERENT("%" PRIu32 " and %" PRIu32 " instructions", a->code_count,
              b->code_count);
  }
  for (uint32_t i = 0; i < a->code_count; ++i) {
    if (memcmp(&a->code[i], &b->code[i], sizeof(a->code[i])) != 0) {
      DIFFERENT("instruction %" PRIu32
                " differs (op %u/%u, a %u/%u, imm "
                "0x%" PRIx32 "/0x%" PRIx32 ")",
                i, a->code[i].op, b->code[i].op, a->code[i].a, b->code[i].a,
                a->code[i].imm, b->code[i].imm);
    }
  }
  if (a->operand_count != b->operand_count ||
      !arrays_equal(a->operands, b->operands, a->operand_count,
                    sizeof(uint16_t))) {
    DIFFERENT("operand lists differ (%" PRIu32 " and %" PRIu32 " entries)",
              a->operand_count, b->operand_count);
  }
  if (a->constant_count != b->constant_count ||
      !arrays_equal(a->constants, b->constants, a->constant_count,
                    sizeof(uint64_t))) {
    DIFFERENT("constants differ (%" PRIu32 " and %" PRIu32 ")",
              a->constant_count, b->constant_count);
  }
  if (a->rodata_count != b->rodata_count ||
      !arrays_equal(a->rodata, b->rodata, a->rodata_count,
                    sizeof(weft_vm_rodata_t)) ||
      a->rodata_byte_count != b->rodata_byte_count ||
      !arrays_equal(a->rodata_bytes, b->rodata_bytes, a->rodata_byte_count,
                    1)) {
    DIFFERENT("rodata differs (%" PRIu32 " and %" PRIu32 " segments)",
              a->rodata_count, b->rodata_count);
  }
  if ((a->rodata_names == NULL) != (b->rodata_names == NULL)) {
    DIFFERENT("one module names its rodata segments, the other does not");
  }
  for (uint32_t i = 0; a->rodata_names && i < a->rodata_count; ++i) {
    if (!strings_equal(a->rodata_names[i], b->rodata_names[i])) {
      DIFFERENT("rodata segment %" PRIu32 " is named '%s' and '%s'", i,
                a->rodata_names[i] ? a->rodata_names[i] : "(none)",
                b->rodata_names[i] ? b->rodata_names[i] : "(none)");
    }
  }
  if (compare_lines) {
    if (!strings_equal(a->source_name, b->source_name)) {
      DIFFERENT("source names differ");
    }
    if ((a->lines == NULL) != (b->lines == NULL) ||
        (a->lines &&
         !arrays_equal(a->lines, b->lines, a->code_count, sizeof(uint32_t)))) {
      DIFFERENT("line tables differ");
    }
  }
  return true;
}
