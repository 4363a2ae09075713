// weft VM: modules and wait frames (see weft/vm/module.h).
#include "vm/module_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/arguments.h"
#include "vm/signature.h"
#include "vm/signature_text.h"

// Builds |module|'s function_checks and ref_checks from its bytecode
// functions' signatures (left NULL when no signature names a ref type or
// forbids a null).
static weft_status_t weft_vm_module_build_ref_checks(
    weft_vm_module_t* module) {
  const weft_vm_bytecode_t* bytecode = module->bytecode;
  size_t value_count = 0;
  size_t text_bytes = 0;
  bool any = false;
  for (uint32_t f = 0; f < bytecode->function_count; ++f) {
    const weft_vm_signature_t signature = bytecode->functions[f].signature;
    value_count += (size_t)signature.arg_count + signature.ret_count;
    if (signature.text) {
      text_bytes += strlen(signature.text) + 1;
      any = true;
    }
  }
  if (!any) return WEFT_OK;
  const size_t functions_size =
      bytecode->function_count * sizeof(weft_vm_function_checks_t);
  const size_t checks_offset =
      (functions_size + _Alignof(weft_vm_ref_check_t) - 1) &
      ~(_Alignof(weft_vm_ref_check_t) - 1);
  const size_t texts_offset =
      checks_offset + value_count * sizeof(weft_vm_ref_check_t);
  uint8_t* storage = NULL;
  weft_status_t status = weft_allocator_malloc(
      module->allocator, texts_offset + text_bytes, (void**)&storage);
  if (!weft_status_is_ok(status)) return status;
  weft_vm_function_checks_t* functions = (weft_vm_function_checks_t*)storage;
  weft_vm_ref_check_t* checks = (weft_vm_ref_check_t*)(storage + checks_offset);
  char* texts = (char*)storage + texts_offset;
  uint32_t next = 0;
  for (uint32_t f = 0; f < bytecode->function_count; ++f) {
    const weft_vm_signature_t signature = bytecode->functions[f].signature;
    const uint32_t count = (uint32_t)signature.arg_count + signature.ret_count;
    functions[f] = (weft_vm_function_checks_t){next, 0, 0};
    for (uint32_t i = 0; i < count; ++i) {
      // No text: every ref is "r?", nothing to check.
      checks[next + i] = (weft_vm_ref_check_t){NULL, 0, 1};
    }
    if (signature.text) {
      // Validation parsed this text already; it parses again here.
      weft_vm_parsed_signature_t parsed;
      status = weft_vm_signature_parse(signature.text, strlen(signature.text),
                                       &parsed);
      if (!weft_status_is_ok(status)) break;
      const size_t length = strlen(parsed.canonical);
      memcpy(texts, parsed.canonical, length + 1);
      for (uint32_t i = 0; i < count; ++i) {
        if (parsed.types[i] != WEFT_VM_TYPE_REF) continue;
        weft_vm_ref_check_t* check = &checks[next + i];
        check->name = texts + parsed.ref_name_offset[i];
        check->name_length = parsed.ref_name_length[i];
        check->nullable = parsed.nullable[i];
        if (check->name_length || !check->nullable) {
          if (i < signature.arg_count) {
            functions[f].check_args = 1;
          } else {
            functions[f].check_results = 1;
          }
        }
      }
      texts += length + 1;
    }
    next += count;
  }
  if (!weft_status_is_ok(status)) {
    weft_allocator_free(module->allocator, storage);
    return status;
  }
  module->function_checks = functions;
  module->ref_checks = checks;
  return WEFT_OK;
}

weft_status_t weft_vm_module_check_refs(const weft_vm_module_t* module,
                                        uint32_t index, bool results,
                                        const weft_vm_value_t* values,
                                        uint32_t count) {
  if (!module->function_checks) return WEFT_OK;
  const weft_vm_function_checks_t function = module->function_checks[index];
  if (!(results ? function.check_results : function.check_args)) {
    return WEFT_OK;
  }
  const weft_vm_signature_t signature =
      module->bytecode->functions[index].signature;
  const weft_vm_ref_check_t* checks =
      module->ref_checks + function.first +
      (results ? signature.arg_count : 0);
  const char* what = results ? "result" : "argument";
  for (uint32_t i = 0; i < count; ++i) {
    if (values[i].type != WEFT_VM_TYPE_REF) continue;
    const weft_vm_ref_t ref = values[i].ref;
    const weft_vm_ref_check_t check = checks[i];
    if (!ref.object) {
      if (!check.nullable) {
        return WEFT_STATUS(
            INVALID_ARGUMENT,
            "%s.%s: %s %" PRIu32
            " is null but the signature %s does not allow it",
            module->name, module->bytecode->functions[index].name, what, i,
            signature.text);
      }
    } else if (check.name_length &&
               (strlen(ref.type->name) != check.name_length ||
                memcmp(ref.type->name, check.name, check.name_length) != 0)) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s.%s: %s %" PRIu32 " is a '%s', not a '%.*s'",
                         module->name, module->bytecode->functions[index].name,
                         what, i, ref.type->name, (int)check.name_length,
                         check.name);
    }
  }
  return WEFT_OK;
}

weft_status_t weft_vm_module_create_bytecode(weft_allocator_t allocator,
                                             weft_vm_bytecode_t* bytecode,
                                             weft_vm_module_t** out_module) {
  *out_module = NULL;
  weft_vm_module_t* module = NULL;
  weft_status_t status = weft_vm_bytecode_validate(bytecode);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*module), (void**)&module);
  }
  if (weft_status_is_ok(status)) {
    weft_ref_count_init(&module->ref_count);
    module->allocator = allocator;
    module->kind = WEFT_VM_MODULE_BYTECODE;
    module->name = bytecode->name ? bytecode->name : "";
    module->bytecode = bytecode;
    module->native = NULL;
    module->native_signatures = NULL;
    module->native_parsed = NULL;
    module->function_checks = NULL;
    module->ref_checks = NULL;
    status = weft_vm_module_build_ref_checks(module);
    if (weft_status_is_ok(status)) {
      *out_module = module;
    } else {
      weft_allocator_free(allocator, module);
      module = NULL;
    }
  }
  if (!weft_status_is_ok(status)) weft_vm_bytecode_free(allocator, bytecode);
  return status;
}

// Parses the signature of every function of |def| into one allocation:
// the weft_vm_signature_t array, then the parsed forms it points into.
static weft_status_t weft_vm_module_parse_native_signatures(
    weft_allocator_t allocator, const weft_vm_native_module_def_t* def,
    weft_vm_signature_t** out_signatures,
    weft_vm_parsed_signature_t** out_parsed) {
  *out_signatures = NULL;
  *out_parsed = NULL;
  weft_status_t status = WEFT_OK;
  const size_t entry_size =
      sizeof(weft_vm_signature_t) + sizeof(weft_vm_parsed_signature_t);
  uint8_t* storage = NULL;
  if (def->function_count) {
    status = weft_allocator_malloc_array(allocator, def->function_count,
                                         entry_size, (void**)&storage);
  }
  // Signatures first: they hold pointers (8-byte alignment); the parsed
  // forms need only 2.
  weft_vm_signature_t* signatures = (weft_vm_signature_t*)storage;
  weft_vm_parsed_signature_t* parsed =
      (weft_vm_parsed_signature_t*)(signatures + def->function_count);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < def->function_count;
       ++i) {
    const weft_vm_native_function_t* function = &def->functions[i];
    if (!function->name || !function->fn || !function->signature) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "native module '%s': function %" PRIu32
                           " has no name, implementation or signature",
                           def->name, i);
    } else {
      status = weft_vm_signature_parse(function->signature,
                                       strlen(function->signature),
                                       &parsed[i]);
      if (!weft_status_is_ok(status)) {
        status = weft_status_annotate(status,
                                      "in native module '%s' function '%s'",
                                      def->name, function->name);
      }
    }
    if (weft_status_is_ok(status)) {
      signatures[i].arg_count = parsed[i].arg_count;
      signatures[i].ret_count = parsed[i].ret_count;
      signatures[i].types = parsed[i].types;
      signatures[i].text = parsed[i].canonical;
    }
  }
  if (weft_status_is_ok(status)) {
    *out_signatures = signatures;
    *out_parsed = parsed;
  } else {
    weft_allocator_free(allocator, storage);
  }
  return status;
}

weft_status_t weft_vm_module_create_native(
    weft_allocator_t allocator, const weft_vm_native_module_def_t* def,
    weft_vm_module_t** out_module) {
  if (out_module) *out_module = NULL;
  weft_vm_module_t* module = NULL;
  weft_vm_signature_t* signatures = NULL;
  weft_vm_parsed_signature_t* parsed = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "def,out_module", (const void* const[]){def, out_module}, 2);
  if (weft_status_is_ok(status) && (!def->name || !def->name[0])) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "a native module has no name");
  } else if (weft_status_is_ok(status) && def->function_count &&
             !def->functions) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "native module '%s': functions is NULL with %" PRIu32
                         " functions",
                         def->name, def->function_count);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_parse_native_signatures(allocator, def,
                                                    &signatures, &parsed);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*module), (void**)&module);
  }
  if (weft_status_is_ok(status)) {
    weft_ref_count_init(&module->ref_count);
    module->allocator = allocator;
    module->kind = WEFT_VM_MODULE_NATIVE;
    module->name = def->name;
    module->native = def;
    module->native_signatures = signatures;
    module->native_parsed = parsed;
    module->bytecode = NULL;
    module->function_checks = NULL;
    module->ref_checks = NULL;
    *out_module = module;
  } else {
    weft_allocator_free(allocator, signatures);
  }
  return status;
}

void weft_vm_module_retain(weft_vm_module_t* module) {
  if (module) weft_ref_count_inc(&module->ref_count);
}

void weft_vm_module_release(weft_vm_module_t* module) {
  if (module && weft_ref_count_dec(&module->ref_count)) {
    weft_vm_bytecode_free(module->allocator, module->bytecode);
    // One allocation, starting with the function entries.
    weft_allocator_free(module->allocator, module->function_checks);
    // One allocation, starting with the signatures.
    weft_allocator_free(module->allocator, module->native_signatures);
    const weft_vm_native_module_def_t* native = module->native;
    weft_allocator_free(module->allocator, module);
    // Last: the definition may free itself.
    if (native && native->destroy) native->destroy(native->user_data);
  }
}

const char* weft_vm_module_name(const weft_vm_module_t* module) {
  return module ? module->name : "";
}

uint32_t weft_vm_module_function_count(const weft_vm_module_t* module) {
  if (!module) return 0;
  return module->kind == WEFT_VM_MODULE_BYTECODE
             ? module->bytecode->function_count
             : module->native->function_count;
}

const char* weft_vm_module_function_name(const weft_vm_module_t* module,
                                         uint32_t index) {
  if (index >= weft_vm_module_function_count(module)) return "";
  const char* name = module->kind == WEFT_VM_MODULE_BYTECODE
                         ? module->bytecode->functions[index].name
                         : module->native->functions[index].name;
  return name ? name : "";
}

weft_vm_signature_t weft_vm_module_function_signature(
    const weft_vm_module_t* module, uint32_t index) {
  return module->kind == WEFT_VM_MODULE_BYTECODE
             ? module->bytecode->functions[index].signature
             : module->native_signatures[index];
}

size_t weft_vm_module_function_signature_text(const weft_vm_module_t* module,
                                              uint32_t index, char* buffer,
                                              size_t capacity) {
  if (index >= weft_vm_module_function_count(module)) {
    if (buffer && capacity) buffer[0] = '\0';
    return 0;
  }
  return weft_vm_signature_canonical_text(
      weft_vm_module_function_signature(module, index), buffer,
      buffer ? capacity : 0);
}

// NOT_FOUND for function |name| of |module|, listing its functions.
static weft_status_t weft_vm_module_not_found(const weft_vm_module_t* module,
                                              const char* name) {
  const uint32_t count = weft_vm_module_function_count(module);
  char names[512];
  size_t used = 0;
  names[0] = '\0';
  for (uint32_t i = 0; i < count && used + 1 < sizeof(names); ++i) {
    int written = snprintf(names + used, sizeof(names) - used, "%s'%s'",
                           i ? ", " : "",
                           weft_vm_module_function_name(module, i));
    if (written < 0) break;
    used += (size_t)written;
  }
  return WEFT_STATUS(NOT_FOUND,
                     "module '%s' has no function '%s' (it has %" PRIu32
                     ": %s)",
                     module->name, name, count, count ? names : "none");
}

weft_status_t weft_vm_module_lookup(const weft_vm_module_t* module,
                                    const char* name, uint32_t* out_index) {
  if (out_index) *out_index = 0;
  weft_status_t status = weft_arguments_require(
      __func__, "module,name,out_index",
      (const void* const[]){module, name, out_index}, 3);
  const uint32_t count =
      weft_status_is_ok(status) ? weft_vm_module_function_count(module) : 0;
  uint32_t found = count;
  for (uint32_t i = 0; i < count && found == count; ++i) {
    if (strcmp(weft_vm_module_function_name(module, i), name) == 0) found = i;
  }
  if (weft_status_is_ok(status) && found < count) {
    *out_index = found;
  } else if (weft_status_is_ok(status)) {
    status = weft_vm_module_not_found(module, name);
  }
  return status;
}

weft_status_t weft_vm_module_check_exported(const weft_vm_module_t* module,
                                            uint32_t index) {
  if (module->kind != WEFT_VM_MODULE_BYTECODE ||
      (module->bytecode->functions[index].flags &
       WEFT_VM_FUNCTION_FLAG_EXPORT)) {
    return WEFT_OK;
  }
  // Name the exported ones, as a lookup that finds nothing does.
  char names[512] = "";
  size_t used = 0;
  uint32_t exported = 0;
  for (uint32_t i = 0; i < module->bytecode->function_count; ++i) {
    const weft_vm_function_t* function = &module->bytecode->functions[i];
    if (!(function->flags & WEFT_VM_FUNCTION_FLAG_EXPORT)) continue;
    if (used < sizeof(names)) {
      used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
                               exported ? ", " : "", function->name);
    }
    ++exported;
  }
  return WEFT_STATUS(NOT_FOUND,
                     "module '%s' does not export '%s' (only functions "
                     "marked `export` are called from outside it; it "
                     "exports %s)",
                     module->name, module->bytecode->functions[index].name,
                     exported ? names : "none");
}

//===----------------------------------------------------------------------===//
// Wait frames
//===----------------------------------------------------------------------===//

void weft_vm_wait_frame_begin(weft_vm_native_call_t* call,
                              weft_wait_mode_t mode, weft_time_t deadline) {
  if (!call) return;
  weft_vm_wait_frame_t* wait = call->wait;
  weft_vm_wait_frame_clear(wait);
  wait->mode = mode;
  wait->deadline = deadline;
  wait->allocator = call->allocator;
}

// Makes room in |wait| for one more source: RESOURCE_EXHAUSTED at
// WEFT_VM_WAIT_MAX_SOURCES, else the inline arrays or a doubled allocation.
static weft_status_t weft_vm_wait_frame_reserve_one(
    weft_vm_wait_frame_t* wait) {
  weft_status_t status = WEFT_OK;
  if (wait->count == WEFT_VM_WAIT_MAX_SOURCES) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "a wait on more than %u semaphores",
                         WEFT_VM_WAIT_MAX_SOURCES);
  } else if (wait->count == wait->capacity) {
    const uint32_t capacity = wait->capacity * 2;
    void* storage = NULL;
    status = weft_allocator_malloc_array(
        wait->allocator, capacity, sizeof(weft_semaphore_t*) + sizeof(uint64_t),
        &storage);
    if (weft_status_is_ok(status)) {
      uint64_t* values = (uint64_t*)storage;
      weft_semaphore_t** semaphores = (weft_semaphore_t**)(values + capacity);
      memcpy(values, wait->values, wait->count * sizeof(*values));
      memcpy(semaphores, wait->semaphores, wait->count * sizeof(*semaphores));
      if (wait->values != wait->inline_values) {
        weft_allocator_free(wait->allocator, wait->values);
      }
      wait->values = values;
      wait->semaphores = semaphores;
      wait->capacity = capacity;
    }
  }
  return status;
}

weft_status_t weft_vm_wait_frame_add(weft_vm_native_call_t* call,
                                     weft_semaphore_t* semaphore,
                                     uint64_t value) {
  weft_status_t status = weft_arguments_require(
      __func__, "call,semaphore", (const void* const[]){call, semaphore}, 2);
  weft_vm_wait_frame_t* wait = weft_status_is_ok(status) ? call->wait : NULL;
  uint32_t index = 0;
  while (wait && index < wait->count && wait->semaphores[index] != semaphore) {
    ++index;
  }
  if (wait && index < wait->count) {
    // Already there: the larger value.
    if (value > wait->values[index]) wait->values[index] = value;
  } else if (wait) {
    status = weft_vm_wait_frame_reserve_one(wait);
    if (weft_status_is_ok(status)) {
      weft_semaphore_retain(semaphore);
      wait->semaphores[wait->count] = semaphore;
      wait->values[wait->count] = value;
      ++wait->count;
    }
  }
  return status;
}

void weft_vm_wait_frame_clear(weft_vm_wait_frame_t* wait) {
  for (uint32_t i = 0; i < wait->count; ++i) {
    weft_semaphore_release(wait->semaphores[i]);
  }
  if (wait->values && wait->values != wait->inline_values) {
    // One allocation: values first (see weft_vm_wait_frame_add).
    weft_allocator_free(wait->allocator, wait->values);
  }
  wait->count = 0;
  wait->capacity = WEFT_VM_WAIT_INLINE_SOURCES;
  wait->semaphores = wait->inline_semaphores;
  wait->values = wait->inline_values;
}
