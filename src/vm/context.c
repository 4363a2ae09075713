// weft VM: contexts (see weft/vm/context.h).
#include "vm/context_impl.h"

#include <inttypes.h>
#include <string.h>

#include "base/arguments.h"
#include "vm/signature_text.h"

static const weft_vm_instance_t* weft_vm_context_find_instance(
    const weft_vm_context_t* context, const char* name, size_t length) {
  for (uint32_t i = 0; i < context->instance_count; ++i) {
    const char* module_name = context->instances[i].module->name;
    if (strlen(module_name) == length &&
        memcmp(module_name, name, length) == 0) {
      return &context->instances[i];
    }
  }
  return NULL;
}

// Resolves import |index| of |instance|'s bytecode.
static weft_status_t weft_vm_context_link_import(
    const weft_vm_context_t* context, weft_vm_instance_t* instance,
    uint32_t index) {
  const weft_vm_import_t* import = &instance->module->bytecode->imports[index];
  const char* module_name = import->module_name ? import->module_name : "";
  const char* function_name =
      import->function_name ? import->function_name : "";
  const weft_vm_instance_t* target = weft_vm_context_find_instance(
      context, module_name, strlen(module_name));
  if (!target) {
    return WEFT_STATUS(NOT_FOUND,
                       "module '%s' imports %s.%s but the context has no "
                       "module '%s'",
                       instance->module->name, module_name, function_name,
                       module_name);
  }
  uint32_t function_index = UINT32_MAX;
  weft_status_t status =
      weft_vm_module_lookup(target->module, function_name, &function_index);
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_check_exported(target->module, function_index);
  }
  if (!weft_status_is_ok(status)) {
    return weft_status_annotate(status, "for the import %s.%s of module '%s'",
                                module_name, function_name,
                                instance->module->name);
  }
  // Canonical texts compare as signatures (signature_text.h).
  char expected[1024];
  char actual[1024];
  weft_vm_signature_canonical_text(import->signature, expected,
                                   sizeof(expected));
  weft_vm_signature_canonical_text(
      weft_vm_module_function_signature(target->module, function_index),
      actual, sizeof(actual));
  if (strcmp(expected, actual) != 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "module '%s' imports %s.%s as %s but module '%s' "
                       "declares it %s",
                       instance->module->name, module_name, function_name,
                       expected, target->module->name, actual);
  }
  instance->imports[index].instance = target;
  instance->imports[index].function_index = function_index;
  return WEFT_OK;
}

// Frees what the instances hold (those with a module).
static void weft_vm_context_free(weft_vm_context_t* context) {
  for (uint32_t i = 0; i < context->instance_count; ++i) {
    weft_vm_instance_t* instance = &context->instances[i];
    if (!instance->module) continue;
    const weft_vm_native_module_def_t* native = instance->module->native;
    if (native && native->destroy_state && instance->state) {
      native->destroy_state(native->user_data, instance->state);
    }
    weft_allocator_free(context->allocator, instance->imports);
    weft_vm_module_release(instance->module);
  }
  weft_allocator_free(context->allocator, context->instances);
  weft_allocator_free(context->allocator, context);
}

weft_status_t weft_vm_context_create(weft_vm_module_t* const* modules,
                                     uint32_t module_count,
                                     weft_allocator_t allocator,
                                     weft_vm_context_t** out_context) {
  if (out_context) *out_context = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "modules,out_context",
      (const void* const[]){module_count ? (const void*)modules : &module_count,
                            out_context},
      2);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < module_count; ++i) {
    if (!modules[i]) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "weft_vm_context_create: modules[%" PRIu32
                           "] is NULL",
                           i);
    }
  }
  weft_vm_context_t* context = NULL;
  if (weft_status_is_ok(status)) {
    status =
        weft_allocator_malloc(allocator, sizeof(*context), (void**)&context);
  }
  if (!weft_status_is_ok(status)) return status;
  weft_ref_count_init(&context->ref_count);
  context->allocator = allocator;
  if (module_count) {
    status = weft_allocator_malloc_array(allocator, module_count,
                                         sizeof(*context->instances),
                                         (void**)&context->instances);
  }
  // Instances first (imports may go to any module of the context), then
  // state and imports.
  for (uint32_t i = 0; weft_status_is_ok(status) && i < module_count; ++i) {
    if (weft_vm_context_find_instance(context, modules[i]->name,
                                      strlen(modules[i]->name))) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "two modules are named '%s' in one context",
                           modules[i]->name);
      break;
    }
    weft_vm_module_retain(modules[i]);
    context->instances[i].module = modules[i];
    ++context->instance_count;
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < module_count; ++i) {
    weft_vm_instance_t* instance = &context->instances[i];
    const weft_vm_native_module_def_t* native = instance->module->native;
    if (native && native->create_state) {
      status = native->create_state(native->user_data, allocator,
                                    &instance->state);
    }
    const weft_vm_bytecode_t* bytecode = instance->module->bytecode;
    if (weft_status_is_ok(status) && bytecode && bytecode->import_count) {
      status = weft_allocator_malloc_array(allocator, bytecode->import_count,
                                           sizeof(*instance->imports),
                                           (void**)&instance->imports);
    }
    for (uint32_t j = 0;
         weft_status_is_ok(status) && bytecode && j < bytecode->import_count;
         ++j) {
      status = weft_vm_context_link_import(context, instance, j);
    }
  }
  if (weft_status_is_ok(status)) {
    *out_context = context;
  } else {
    weft_vm_context_free(context);
  }
  return status;
}

void weft_vm_context_retain(weft_vm_context_t* context) {
  if (context) weft_ref_count_inc(&context->ref_count);
}

void weft_vm_context_release(weft_vm_context_t* context) {
  if (context && weft_ref_count_dec(&context->ref_count)) {
    weft_vm_context_free(context);
  }
}

weft_status_t weft_vm_context_resolve(const weft_vm_context_t* context,
                                      const char* qualified_name,
                                      const weft_vm_instance_t** out_instance,
                                      uint32_t* out_function_index) {
  *out_instance = NULL;
  *out_function_index = 0;
  const char* dot = strchr(qualified_name, '.');
  if (!dot) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' is not MODULE.FUNCTION", qualified_name);
  }
  const size_t module_length = (size_t)(dot - qualified_name);
  const weft_vm_instance_t* instance =
      weft_vm_context_find_instance(context, qualified_name, module_length);
  if (!instance) {
    return WEFT_STATUS(NOT_FOUND, "the context has no module '%.*s'",
                       (int)module_length, qualified_name);
  }
  weft_status_t status =
      weft_vm_module_lookup(instance->module, dot + 1, out_function_index);
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_check_exported(instance->module,
                                           *out_function_index);
  }
  if (weft_status_is_ok(status)) {
    *out_instance = instance;
  } else {
    *out_function_index = 0;
  }
  return status;
}

weft_status_t weft_vm_context_lookup(const weft_vm_context_t* context,
                                     const char* qualified_name,
                                     weft_vm_module_t** out_module,
                                     uint32_t* out_function_index) {
  if (out_module) *out_module = NULL;
  if (out_function_index) *out_function_index = 0;
  weft_status_t status = weft_arguments_require(
      __func__, "context,qualified_name,out_module,out_function_index",
      (const void* const[]){context, qualified_name, out_module,
                            out_function_index},
      4);
  const weft_vm_instance_t* instance = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_vm_context_resolve(context, qualified_name, &instance,
                                     out_function_index);
  }
  if (weft_status_is_ok(status)) *out_module = instance->module;
  return status;
}
