// weft VM: reading a function's declarations (see weft/vm/tensor_type.h).
#include "weft/vm/tensor_type.h"

#include <string.h>

#include "vm/module_impl.h"

const char* weft_vm_element_type_name(weft_vm_element_type_t type) {
  static const char* const kNames[WEFT_VM_ELEMENT_TYPE_COUNT_] = {
      "none", "f16", "f32", "f64", "i8",  "i16",
      "i32",  "i64", "u8",  "u16", "u32", "u64"};
  return (unsigned)type < WEFT_VM_ELEMENT_TYPE_COUNT_ ? kNames[type] : "none";
}

// Function |function|'s declarations, or NULL (none, native, past the
// count).
static const weft_vm_function_decls_t* weft_vm_module_decls(
    const weft_vm_module_t* module, uint32_t function) {
  if (!module || module->kind != WEFT_VM_MODULE_BYTECODE ||
      function >= module->bytecode->function_count) {
    return NULL;
  }
  return weft_vm_bytecode_function_decls(module->bytecode, function);
}

bool weft_vm_module_function_value_decl(const weft_vm_module_t* module,
                                        uint32_t function,
                                        weft_vm_value_role_t role,
                                        uint32_t index,
                                        weft_vm_value_decl_t* out_decl) {
  if (!out_decl) return false;
  memset(out_decl, 0, sizeof(*out_decl));
  out_decl->name = "";
  const weft_vm_function_decls_t* decls =
      weft_vm_module_decls(module, function);
  if (!decls) return false;
  const weft_vm_signature_t signature =
      module->bytecode->functions[function].signature;
  const bool is_result = role == WEFT_VM_VALUE_RESULT;
  const weft_vm_decl_t* values = is_result ? decls->results : decls->args;
  const uint32_t count =
      is_result ? signature.ret_count : signature.arg_count;
  if ((role != WEFT_VM_VALUE_ARGUMENT && !is_result) || !values ||
      index >= count) {
    return false;
  }
  const weft_vm_decl_t* decl = &values[index];
  out_decl->name = decl->name;
  out_decl->type.element_type = (weft_vm_element_type_t)decl->element_type;
  out_decl->type.rank = decl->rank;
  for (uint32_t i = 0; i < decl->rank; ++i) {
    const weft_vm_decl_dim_t* dim = &decl->dims[i];
    weft_vm_dim_t* out = &out_decl->type.dims[i];
    out->kind = (weft_vm_dim_kind_t)dim->kind;
    out->size = dim->size;
    out->symbol = dim->symbol;
    out->symbol_name =
        dim->kind == WEFT_VM_DIM_SYMBOL ? decls->symbols[dim->symbol] : NULL;
  }
  return true;
}

uint32_t weft_vm_module_function_symbol_count(const weft_vm_module_t* module,
                                              uint32_t function) {
  const weft_vm_function_decls_t* decls =
      weft_vm_module_decls(module, function);
  return decls ? decls->symbol_count : 0;
}
