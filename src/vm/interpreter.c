// weft VM: the interpreter (see interpreter.h).
//
// One loop over 8-byte instructions, dispatched with computed goto where the
// compiler has it (GCC, Clang) and a switch elsewhere. Scalar registers are
// read and written through the frame's window |s|, ref registers through
// |r|; both are re-read after every push and pop (the arrays may move).
#include "vm/interpreter.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "vm/list_impl.h"

//===----------------------------------------------------------------------===//
// Scalar views
//===----------------------------------------------------------------------===//

static inline uint32_t weft_vm_u32(uint64_t bits) { return (uint32_t)bits; }
static inline int32_t weft_vm_i32(uint64_t bits) {
  return (int32_t)(uint32_t)bits;
}
static inline int64_t weft_vm_i64(uint64_t bits) { return (int64_t)bits; }
static inline float weft_vm_f32(uint64_t bits) {
  uint32_t low = (uint32_t)bits;
  float value;
  memcpy(&value, &low, sizeof(value));
  return value;
}
static inline double weft_vm_f64(uint64_t bits) {
  double value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}
static inline uint64_t weft_vm_from_u32(uint32_t value) { return value; }
static inline uint64_t weft_vm_from_f32(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}
static inline uint64_t weft_vm_from_f64(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Arithmetic shift right without relying on the implementation's choice for
// negative values.
static inline int64_t weft_vm_sar64(int64_t value, unsigned count) {
  return value < 0 ? ~(~value >> count) : value >> count;
}
static inline int32_t weft_vm_sar32(int32_t value, unsigned count) {
  return value < 0 ? ~(~value >> count) : value >> count;
}

static inline float weft_vm_min_f32(float a, float b) {
  return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
}
static inline float weft_vm_max_f32(float a, float b) {
  return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
}
static inline double weft_vm_min_f64(double a, double b) {
  return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
}
static inline double weft_vm_max_f64(double a, double b) {
  return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
}

// Float to integer, saturating at the target's limits; NaN gives 0.
static inline int32_t weft_vm_f64_to_i32_s(double x) {
  if (isnan(x)) return 0;
  if (x >= 2147483648.0) return INT32_MAX;
  if (x < -2147483648.0) return INT32_MIN;
  return (int32_t)x;
}
static inline uint32_t weft_vm_f64_to_i32_u(double x) {
  if (isnan(x) || x <= -1.0) return 0;
  if (x >= 4294967296.0) return UINT32_MAX;
  return (uint32_t)x;
}
static inline int64_t weft_vm_f64_to_i64_s(double x) {
  if (isnan(x)) return 0;
  if (x >= 9223372036854775808.0) return INT64_MAX;
  if (x < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// Names where |frame| is: "module.function (file:line)".
static void weft_vm_where(const weft_vm_frame_t* frame, uint32_t index,
                          char* buffer, size_t capacity) {
  const weft_vm_bytecode_t* bytecode = frame->bytecode;
  const uint64_t code_index = (uint64_t)frame->function->code_offset + index;
  uint32_t line = 0;
  if (bytecode->lines && code_index < bytecode->code_count) {
    line = bytecode->lines[code_index];
  }
  if (line) {
    snprintf(buffer, capacity, "%s.%s (%s:%" PRIu32 ")",
             bytecode->name ? bytecode->name : "?",
             frame->function->name ? frame->function->name : "?",
             bytecode->source_name ? bytecode->source_name : "?", line);
  } else {
    snprintf(buffer, capacity, "%s.%s (instruction %" PRIu32 ")",
             bytecode->name ? bytecode->name : "?",
             frame->function->name ? frame->function->name : "?", index);
  }
}

// The message of a failing instruction: "OPCODE in WHERE: WHAT".
static weft_status_t weft_vm_trap(const weft_vm_frame_t* frame, uint32_t index,
                                  weft_status_code_t code, const char* what) {
  char where[512];
  weft_vm_where(frame, index, where, sizeof(where));
  const uint8_t op = frame->bytecode->code[frame->function->code_offset + index].op;
  return weft_status_make_(__FILE__, __LINE__, code, "%s in %s: %s",
                           kWeftVmOpcodes[op].name, where, what);
}

// Checks that ref |ref| is a list; |role| names it.
static weft_status_t weft_vm_check_list(const weft_vm_frame_t* frame,
                                        uint32_t index, weft_vm_ref_t ref,
                                        weft_vm_list_t** out_list) {
  if (ref.object && ref.type == &kWeftVmListType) {
    *out_list = (weft_vm_list_t*)ref.object;
    return WEFT_OK;
  }
  char what[128];
  snprintf(what, sizeof(what), "the list operand is %s",
           ref.object ? "not a list" : "null");
  if (ref.object) {
    snprintf(what, sizeof(what), "the list operand is a '%s', not a list",
             ref.type->name);
  }
  return weft_vm_trap(frame, index, WEFT_STATUS_INVALID_ARGUMENT, what);
}

// Annotates a lower layer's |status| (a list's error) with the instruction.
static weft_status_t weft_vm_annotate_at(const weft_vm_frame_t* frame,
                                         uint32_t index, weft_status_t status) {
  if (weft_status_is_ok(status)) return status;
  char where[512];
  weft_vm_where(frame, index, where, sizeof(where));
  const uint8_t op = frame->bytecode->code[frame->function->code_offset + index].op;
  return weft_status_annotate(status, "in %s at %s", kWeftVmOpcodes[op].name,
                              where);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

// Pushes a frame for |callee| (of |instance|, |bytecode|) and copies the
// arguments named by the caller's |operands| into its first registers.
static weft_status_t weft_vm_call(weft_vm_stack_t* stack,
                                  const uint16_t* operands, uint32_t first,
                                  const weft_vm_instance_t* instance,
                                  const weft_vm_bytecode_t* bytecode,
                                  const weft_vm_function_t* callee) {
  const uint32_t caller_scalar_base = stack->frames[stack->depth - 1].scalar_base;
  const uint32_t caller_ref_base = stack->frames[stack->depth - 1].ref_base;
  weft_vm_frame_t* frame = NULL;
  weft_status_t status =
      weft_vm_stack_push(stack, instance, bytecode, callee,
                         first + callee->signature.arg_count, &frame);
  if (weft_status_is_ok(status)) {
    const uint16_t* args = operands + first;
    uint32_t scalar_index = 0;
    uint32_t ref_index = 0;
    for (uint32_t i = 0; i < callee->signature.arg_count; ++i) {
      if (callee->signature.types[i] == WEFT_VM_TYPE_REF) {
        weft_vm_ref_t ref = stack->refs[caller_ref_base + args[i]];
        weft_vm_ref_retain(ref);
        stack->refs[frame->ref_base + ref_index++] = ref;
      } else {
        stack->scalars[frame->scalar_base + scalar_index++] =
            stack->scalars[caller_scalar_base + args[i]];
      }
    }
  }
  return status;
}

// Checks a native call's ref arguments against its signature: non-null
// unless the signature allows null, and of the named type.
static weft_status_t weft_vm_check_native_args(const weft_vm_frame_t* frame,
                                               const weft_vm_value_t* args) {
  const weft_vm_parsed_signature_t* signature = frame->native_signature;
  for (uint32_t i = 0; i < signature->arg_count; ++i) {
    if (args[i].type != WEFT_VM_TYPE_REF) continue;
    const weft_vm_ref_t ref = args[i].ref;
    const uint16_t name_length = signature->ref_name_length[i];
    const char* name = signature->canonical + signature->ref_name_offset[i];
    if (!ref.object) {
      if (!signature->nullable[i]) {
        return WEFT_STATUS(INVALID_ARGUMENT,
                           "%s.%s: argument %" PRIu32
                           " is null but its signature %s does not allow it",
                           frame->instance->module->name, frame->native->name,
                           i, signature->canonical);
      }
    } else if (name_length &&
               (strlen(ref.type->name) != name_length ||
                memcmp(ref.type->name, name, name_length) != 0)) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s.%s: argument %" PRIu32 " is a '%s', not a '%.*s'",
                         frame->instance->module->name, frame->native->name, i,
                         ref.type->name, (int)name_length, name);
    }
  }
  return WEFT_OK;
}

// Values a native call keeps on the C stack when it does not yield.
#define WEFT_VM_NATIVE_INLINE_VALUES 16

static weft_status_t weft_vm_call_native(weft_vm_stack_t* stack,
                                         const uint16_t* operands,
                                         uint32_t first,
                                         const weft_vm_instance_t* instance,
                                         uint32_t function_index);

// Calls native function |function_index| of |instance| with the arguments
// named by the caller's |operands| (from |first|) without a frame: the
// values live on the C stack, and the results go straight to the caller's
// registers. Only when the function yields (DEFERRED) or fails is a frame
// pushed (holding the values, so it resumes or is named in the VM stack).
// Sets |*out_pushed| then.
static weft_status_t weft_vm_call_native_inline(
    weft_vm_stack_t* stack, const uint16_t* operands, uint32_t first,
    const weft_vm_instance_t* instance, uint32_t function_index,
    bool* out_pushed) {
  *out_pushed = false;
  const weft_vm_module_t* module = instance->module;
  const weft_vm_parsed_signature_t* signature =
      &module->native_parsed[function_index];
  const uint32_t value_count =
      (uint32_t)signature->arg_count + signature->ret_count;
  if (value_count > WEFT_VM_NATIVE_INLINE_VALUES) {
    *out_pushed = true;
    return weft_vm_call_native(stack, operands, first, instance,
                               function_index);
  }
  const weft_vm_frame_t* caller = &stack->frames[stack->depth - 1];
  weft_vm_value_t values[WEFT_VM_NATIVE_INLINE_VALUES];
  const uint16_t* args = operands + first;
  for (uint32_t i = 0; i < signature->arg_count; ++i) {
    values[i].type = (weft_vm_value_type_t)signature->types[i];
    if (signature->types[i] == WEFT_VM_TYPE_REF) {
      values[i].ref = stack->refs[caller->ref_base + args[i]];
    } else {
      values[i].bits = stack->scalars[caller->scalar_base + args[i]];
    }
  }
  for (uint32_t i = signature->arg_count; i < value_count; ++i) {
    memset(&values[i], 0, sizeof(values[i]));
    values[i].type = (weft_vm_value_type_t)signature->types[i];
  }
  weft_vm_native_call_t call = {
      .module_state = instance->state,
      .args = values,
      .results = values + signature->arg_count,
      .pc = 0,
      .wait_result = WEFT_OK,
      .wait = &stack->wait,
      .allocator = stack->allocator,
  };
  const weft_vm_native_function_t* native =
      &module->native->functions[function_index];
  // Arguments are borrowed from the caller's registers for the call.
  weft_vm_frame_t check_frame;
  check_frame.instance = instance;
  check_frame.native = native;
  check_frame.native_signature = signature;
  weft_status_t status = weft_vm_check_native_args(&check_frame, values);
  if (weft_status_is_ok(status)) status = native->fn(&call);
  // A wait met while its owner spins resumes the call here: no frame, no
  // trip through the owner's wait machinery.
  while (stack->wait_spin && stack->wait.count &&
         status == weft_status_from_code(WEFT_STATUS_DEFERRED) &&
         stack->wait_spin(stack->wait_spin_user_data, &stack->wait)) {
    weft_vm_wait_frame_clear(&stack->wait);
    call.wait_result = WEFT_OK;
    status = native->fn(&call);
  }
  if (weft_status_is_ok(status)) {
    const uint16_t* targets = args + signature->arg_count;
    for (uint32_t i = 0; i < signature->ret_count; ++i) {
      weft_vm_value_t* value = &call.results[i];
      if (signature->types[signature->arg_count + i] == WEFT_VM_TYPE_REF) {
        weft_vm_ref_move(&stack->refs[caller->ref_base + targets[i]],
                         &value->ref);
      } else {
        stack->scalars[caller->scalar_base + targets[i]] = value->bits;
      }
    }
    return WEFT_OK;
  }
  // Yielding or failing: a real frame takes the values over (the
  // arguments get references of their own; the results are moved).
  weft_vm_frame_t* frame = NULL;
  weft_status_t push_status = weft_vm_stack_push_native(
      stack, instance, function_index, first + signature->arg_count, &frame);
  if (!weft_status_is_ok(push_status)) {
    weft_status_ignore(status);
    for (uint32_t i = signature->arg_count; i < value_count; ++i) {
      if (values[i].type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_release(values[i].ref);
      }
    }
    return push_status;
  }
  *out_pushed = true;
  weft_vm_value_t* kept = stack->values + frame->values_base;
  for (uint32_t i = 0; i < value_count; ++i) {
    kept[i] = values[i];
    if (i < signature->arg_count && values[i].type == WEFT_VM_TYPE_REF) {
      weft_vm_ref_retain(values[i].ref);
    }
  }
  frame->pc = call.pc;
  // Handled by the caller like a native step's result (DEFERRED or the
  // failure, annotated with the frame on the stack).
  return status;
}

// Pushes a frame for native function |function_index| of |instance| with
// the arguments named by the caller's |operands| (from |first|).
static weft_status_t weft_vm_call_native(weft_vm_stack_t* stack,
                                         const uint16_t* operands,
                                         uint32_t first,
                                         const weft_vm_instance_t* instance,
                                         uint32_t function_index) {
  const uint32_t caller_scalar_base = stack->frames[stack->depth - 1].scalar_base;
  const uint32_t caller_ref_base = stack->frames[stack->depth - 1].ref_base;
  const weft_vm_parsed_signature_t* signature =
      &instance->module->native_parsed[function_index];
  weft_vm_frame_t* frame = NULL;
  weft_status_t status = weft_vm_stack_push_native(
      stack, instance, function_index, first + signature->arg_count, &frame);
  if (weft_status_is_ok(status)) {
    weft_vm_value_t* values = stack->values + frame->values_base;
    const uint16_t* args = operands + first;
    for (uint32_t i = 0; i < signature->arg_count; ++i) {
      if (signature->types[i] == WEFT_VM_TYPE_REF) {
        values[i].ref = stack->refs[caller_ref_base + args[i]];
        weft_vm_ref_retain(values[i].ref);
      } else {
        values[i].bits = stack->scalars[caller_scalar_base + args[i]];
      }
    }
    status = weft_vm_check_native_args(frame, values);
  }
  return status;
}

// Checks the results `ret` hands back (registers |value_registers| of
// |frame|, function |index| of |module|) against the ref types its
// signature names.
static weft_status_t weft_vm_check_ret(const weft_vm_stack_t* stack,
                                       const weft_vm_frame_t* frame,
                                       const weft_vm_module_t* module,
                                       uint32_t index,
                                       const uint16_t* value_registers) {
  const weft_vm_signature_t signature = frame->function->signature;
  const uint8_t* types = signature.types + signature.arg_count;
  weft_vm_value_t values[WEFT_VM_SIGNATURE_MAX_VALUES];
  for (uint32_t i = 0; i < signature.ret_count; ++i) {
    values[i].type = (weft_vm_value_type_t)types[i];
    if (values[i].type == WEFT_VM_TYPE_REF) {
      values[i].ref = stack->refs[frame->ref_base + value_registers[i]];
    } else {
      values[i].bits = 0;
    }
  }
  return weft_vm_module_check_refs(module, index, /*results=*/true, values,
                                   signature.ret_count);
}

// Hands the top frame's results to its caller's result registers (or to
// |results| for the outermost frame) and pops it. |values| are the results
// as registers of the frame: |value_registers| indices into its files
// (bytecode frames), or NULL with |native_results| set (native frames).
static void weft_vm_return(weft_vm_stack_t* stack,
                           const uint16_t* value_registers,
                           weft_vm_value_t* native_results,
                           weft_vm_value_t* results, uint32_t result_count) {
  const weft_vm_frame_t* frame = &stack->frames[stack->depth - 1];
  const uint32_t ret_count = frame->native
                                 ? frame->native_signature->ret_count
                                 : frame->function->signature.ret_count;
  const uint8_t* types =
      frame->native
          ? frame->native_signature->types + frame->native_signature->arg_count
          : frame->function->signature.types +
                frame->function->signature.arg_count;
  for (uint32_t i = 0; i < ret_count; ++i) {
    // The value, with a reference of its own for the receiver.
    weft_vm_value_t value;
    value.type = (weft_vm_value_type_t)types[i];
    if (native_results) {
      value = native_results[i];
      value.type = (weft_vm_value_type_t)types[i];
      if (value.type == WEFT_VM_TYPE_REF) weft_vm_ref_retain(value.ref);
    } else if (value.type == WEFT_VM_TYPE_REF) {
      value.ref = stack->refs[frame->ref_base + value_registers[i]];
      weft_vm_ref_retain(value.ref);
    } else {
      value.bits = stack->scalars[frame->scalar_base + value_registers[i]];
    }
    if (frame->result_operands == WEFT_VM_FRAME_RESULTS_TO_INVOCATION) {
      if (i < result_count) {
        results[i] = value;
      } else if (value.type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_release(value.ref);
      }
    } else {
      const weft_vm_frame_t* caller = &stack->frames[stack->depth - 2];
      const uint16_t target =
          caller->bytecode->operands[frame->result_operands + i];
      if (value.type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_move(&stack->refs[caller->ref_base + target], &value.ref);
      } else {
        stack->scalars[caller->scalar_base + target] = value.bits;
      }
    }
  }
  weft_vm_stack_pop(stack);
}

// Runs the native top frame once: OK hands its results on and pops it;
// DEFERRED leaves it waiting on |stack->wait| (|*out_waiting|); an error is
// returned annotated with the VM stack.
static weft_status_t weft_vm_native_step(weft_vm_stack_t* stack,
                                         weft_vm_value_t* results,
                                         uint32_t result_count,
                                         bool* out_waiting) {
  *out_waiting = false;
  weft_vm_frame_t* frame = &stack->frames[stack->depth - 1];
  weft_vm_value_t* values = stack->values + frame->values_base;
  weft_vm_native_call_t call = {
      .module_state = frame->instance->state,
      .args = values,
      .results = values + frame->native_signature->arg_count,
      .pc = frame->pc,
      .wait_result = stack->wait_result,
      .wait = &stack->wait,
      .allocator = stack->allocator,
  };
  stack->wait_result = WEFT_OK;
  weft_status_t status = frame->native->fn(&call);
  frame->pc = call.pc;
  if (weft_status_is(status, WEFT_STATUS_DEFERRED)) {
    weft_status_ignore(status);
    status = WEFT_OK;
    if (stack->wait.count == 0) {
      status = WEFT_STATUS(INTERNAL,
                           "%s.%s returned DEFERRED without a wait source",
                           frame->instance->module->name, frame->native->name);
    } else {
      *out_waiting = true;
    }
  } else if (weft_status_is_ok(status)) {
    if (stack->wait.count) weft_vm_wait_frame_clear(&stack->wait);
    weft_vm_return(stack, NULL, call.results, results, result_count);
    return WEFT_OK;
  }
  return weft_vm_stack_annotate(stack, status);
}

weft_status_t weft_vm_interpreter_begin(weft_vm_stack_t* stack,
                                        const weft_vm_instance_t* instance,
                                        const weft_vm_bytecode_t* bytecode,
                                        uint32_t function_index,
                                        const weft_vm_value_t* args,
                                        uint32_t arg_count) {
  const weft_vm_module_t* module = instance ? instance->module : NULL;
  if (module) bytecode = module->bytecode;
  const char* module_name =
      module ? module->name : (bytecode->name ? bytecode->name : "?");
  const uint32_t function_count =
      module ? weft_vm_module_function_count(module) : bytecode->function_count;
  if (function_index >= function_count) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "module '%s' has no function %" PRIu32 " (it has %" PRIu32
                       ")",
                       module_name, function_index, function_count);
  }
  const weft_vm_signature_t signature =
      module ? weft_vm_module_function_signature(module, function_index)
             : bytecode->functions[function_index].signature;
  const char* function_name =
      module ? weft_vm_module_function_name(module, function_index)
             : bytecode->functions[function_index].name;
  if (arg_count != signature.arg_count) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s.%s takes %u arguments, got %" PRIu32, module_name,
                       function_name, signature.arg_count, arg_count);
  }
  for (uint32_t i = 0; i < arg_count; ++i) {
    if (args[i].type != signature.types[i]) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s.%s: argument %" PRIu32 " is %s, not %s",
                         module_name, function_name, i,
                         weft_vm_value_type_name(args[i].type),
                         weft_vm_value_type_name(
                             (weft_vm_value_type_t)signature.types[i]));
    }
    if (args[i].type == WEFT_VM_TYPE_REF && args[i].ref.object &&
        !args[i].ref.type) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s.%s: argument %" PRIu32
                         " is a ref with an object but no ref type",
                         module_name, function_name, i);
    }
  }
  weft_vm_frame_t* frame = NULL;
  weft_status_t status = WEFT_OK;
  if (module && module->kind == WEFT_VM_MODULE_NATIVE) {
    status = weft_vm_stack_push_native(stack, instance, function_index,
                                       WEFT_VM_FRAME_RESULTS_TO_INVOCATION,
                                       &frame);
    if (weft_status_is_ok(status)) {
      weft_vm_value_t* values = stack->values + frame->values_base;
      for (uint32_t i = 0; i < arg_count; ++i) {
        values[i] = args[i];
        if (args[i].type == WEFT_VM_TYPE_REF) weft_vm_ref_retain(args[i].ref);
      }
      status = weft_vm_check_native_args(frame, values);
    }
    return status;
  }
  // The host's arguments against the ref types the signature names.
  if (module) {
    status = weft_vm_module_check_refs(module, function_index,
                                       /*results=*/false, args, arg_count);
    if (!weft_status_is_ok(status)) return status;
  }
  status = weft_vm_stack_push(stack, instance, bytecode,
                              &bytecode->functions[function_index],
                              WEFT_VM_FRAME_RESULTS_TO_INVOCATION, &frame);
  if (weft_status_is_ok(status)) {
    uint32_t scalar_index = 0;
    uint32_t ref_index = 0;
    for (uint32_t i = 0; i < arg_count; ++i) {
      if (args[i].type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_retain(args[i].ref);
        stack->refs[frame->ref_base + ref_index++] = args[i].ref;
      } else {
        stack->scalars[frame->scalar_base + scalar_index++] = args[i].bits;
      }
    }
  }
  return status;
}

//===----------------------------------------------------------------------===//
// The loop
//===----------------------------------------------------------------------===//

#if defined(__GNUC__)
#define WEFT_VM_DISPATCH() goto* kDispatch[ip->op]
#define WEFT_VM_CASE(name) label_##name
#define WEFT_VM_LOOP_BEGIN WEFT_VM_DISPATCH();
#define WEFT_VM_LOOP_END
#else
#define WEFT_VM_DISPATCH() continue
#define WEFT_VM_CASE(name) case WEFT_VM_OP_##name
#define WEFT_VM_LOOP_BEGIN \
  for (;;) {               \
    switch (ip->op) {
#define WEFT_VM_LOOP_END \
  }                      \
  }
#endif

// Advances to the next instruction and dispatches it.
#define WEFT_VM_NEXT() \
  do {                 \
    ++ip;              \
    WEFT_VM_DISPATCH(); \
  } while (0)

// Re-reads the top frame's code and register windows (after a push, a pop,
// or anything that may move the stack's arrays).
#define WEFT_VM_LOAD_FRAME()                                          \
  do {                                                                \
    frame = &stack->frames[stack->depth - 1];                         \
    code = frame->bytecode->code + frame->function->code_offset;      \
    ip = code + frame->pc;                                            \
    s = stack->scalars + frame->scalar_base;                          \
    r = stack->refs + frame->ref_base;                                \
  } while (0)

// Saves the position of the instruction |ip| points at (errors name it,
// and a call resumes after it).
#define WEFT_VM_SAVE_PC() (frame->pc = (uint32_t)(ip - code) + 1)

// Fails the invocation at the current instruction.
#define WEFT_VM_FAIL(status_expr) \
  do {                            \
    WEFT_VM_SAVE_PC();            \
    status = (status_expr);       \
    goto done;                    \
  } while (0)

#define WEFT_VM_BINARY(name, expr) \
  WEFT_VM_CASE(name) : {           \
    const uint64_t x = s[ip->b];   \
    const uint64_t y = s[ip->c];   \
    (void)x;                       \
    (void)y;                       \
    s[ip->a] = (expr);             \
    WEFT_VM_NEXT();                \
  }

#define WEFT_VM_UNARY(name, expr) \
  WEFT_VM_CASE(name) : {          \
    const uint64_t x = s[ip->b];  \
    s[ip->a] = (expr);            \
    WEFT_VM_NEXT();               \
  }

// Branches to |target| (function-relative), charging the budget.
#define WEFT_VM_JUMP(target)          \
  do {                                \
    ip = code + (target);             \
    if (--budget_left == 0) goto out_of_budget; \
    WEFT_VM_DISPATCH();               \
  } while (0)

weft_status_t weft_vm_interpreter_run(weft_vm_stack_t* stack, uint64_t budget,
                                      weft_vm_value_t* results,
                                      uint32_t result_count,
                                      weft_vm_run_state_t* out_state) {
  *out_state = WEFT_VM_RUN_YIELDED;
  if (stack->depth == 0) {
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "the VM stack has no frame to run");
  }
#if defined(__GNUC__)
  static const void* const kDispatch[WEFT_VM_OP_COUNT_] = {
#define WEFT_VM_DISPATCH_ENTRY(name, text, shape) &&label_##name,
      WEFT_VM_OPCODES(WEFT_VM_DISPATCH_ENTRY)
#undef WEFT_VM_DISPATCH_ENTRY
  };
#endif
  weft_status_t status = WEFT_OK;
  uint64_t budget_left = budget ? budget : 1;
  weft_vm_frame_t* frame;
  const weft_vm_instruction_t* code;
  const weft_vm_instruction_t* ip;
  uint64_t* s;
  weft_vm_ref_t* r;
  bool waiting = false;
  if (stack->frames[stack->depth - 1].native) {
    // Resuming a native call after its wait (or running a native entry).
    status = weft_vm_native_step(stack, results, result_count, &waiting);
    if (!weft_status_is_ok(status)) return status;
    if (waiting) {
      *out_state = WEFT_VM_RUN_WAITING;
      return WEFT_OK;
    }
    if (stack->depth == 0) {
      *out_state = WEFT_VM_RUN_DONE;
      return WEFT_OK;
    }
  }
  WEFT_VM_LOAD_FRAME();

  WEFT_VM_LOOP_BEGIN

  WEFT_VM_CASE(NOP) : { WEFT_VM_NEXT(); }
  WEFT_VM_CASE(MOV) : {
    s[ip->a] = s[ip->b];
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(MOV_REF) : {
    weft_vm_ref_assign(&r[ip->a], r[ip->b]);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(CONST_I32) : {
    s[ip->a] = ip->imm;
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(CONST_F32) : {
    s[ip->a] = ip->imm;
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(CONST_I64) : {
    s[ip->a] = frame->bytecode->constants[ip->imm];
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(CONST_F64) : {
    s[ip->a] = frame->bytecode->constants[ip->imm];
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(CONST_NULL) : {
    weft_vm_ref_t null_ref = weft_vm_ref_null();
    weft_vm_ref_move(&r[ip->a], &null_ref);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(RODATA) : {
    const weft_vm_bytecode_t* bytecode = frame->bytecode;
    const weft_vm_rodata_t segment = bytecode->rodata[ip->imm];
    weft_vm_bytes_t* bytes = NULL;
    status = weft_vm_bytes_create(stack->allocator,
                                  bytecode->rodata_bytes + segment.offset,
                                  segment.length, &bytes);
    if (!weft_status_is_ok(status)) {
      WEFT_VM_FAIL(weft_vm_annotate_at(frame, (uint32_t)(ip - code), status));
    }
    weft_vm_ref_t ref = {bytes, &kWeftVmBytesType};
    weft_vm_ref_move(&r[ip->a], &ref);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(SELECT) : {
    const uint16_t* sources = frame->bytecode->operands + ip->imm;
    s[ip->a] = weft_vm_u32(s[sources[0]]) ? s[sources[1]] : s[sources[2]];
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(REF_IS_NULL) : {
    s[ip->a] = r[ip->b].object == NULL;
    WEFT_VM_NEXT();
  }

  // i32.
  WEFT_VM_BINARY(ADD_I32, weft_vm_from_u32(weft_vm_u32(x) + weft_vm_u32(y)))
  WEFT_VM_BINARY(SUB_I32, weft_vm_from_u32(weft_vm_u32(x) - weft_vm_u32(y)))
  WEFT_VM_BINARY(MUL_I32, weft_vm_from_u32(weft_vm_u32(x) * weft_vm_u32(y)))
  WEFT_VM_CASE(DIV_I32_S) : {
    const int32_t x = weft_vm_i32(s[ip->b]);
    const int32_t y = weft_vm_i32(s[ip->c]);
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "division by zero"));
    }
    s[ip->a] = weft_vm_from_u32(
        (x == INT32_MIN && y == -1) ? (uint32_t)INT32_MIN : (uint32_t)(x / y));
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(DIV_I32_U) : {
    const uint32_t x = weft_vm_u32(s[ip->b]);
    const uint32_t y = weft_vm_u32(s[ip->c]);
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "division by zero"));
    }
    s[ip->a] = x / y;
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(REM_I32_S) : {
    const int32_t x = weft_vm_i32(s[ip->b]);
    const int32_t y = weft_vm_i32(s[ip->c]);
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "remainder by zero"));
    }
    s[ip->a] = weft_vm_from_u32(y == -1 ? 0u : (uint32_t)(x % y));
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(REM_I32_U) : {
    const uint32_t x = weft_vm_u32(s[ip->b]);
    const uint32_t y = weft_vm_u32(s[ip->c]);
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "remainder by zero"));
    }
    s[ip->a] = x % y;
    WEFT_VM_NEXT();
  }
  WEFT_VM_BINARY(AND_I32, weft_vm_from_u32(weft_vm_u32(x) & weft_vm_u32(y)))
  WEFT_VM_BINARY(OR_I32, weft_vm_from_u32(weft_vm_u32(x) | weft_vm_u32(y)))
  WEFT_VM_BINARY(XOR_I32, weft_vm_from_u32(weft_vm_u32(x) ^ weft_vm_u32(y)))
  WEFT_VM_BINARY(SHL_I32,
                 weft_vm_from_u32(weft_vm_u32(x) << (weft_vm_u32(y) & 31u)))
  WEFT_VM_BINARY(SHR_I32_S,
                 weft_vm_from_u32((uint32_t)weft_vm_sar32(
                     weft_vm_i32(x), weft_vm_u32(y) & 31u)))
  WEFT_VM_BINARY(SHR_I32_U,
                 weft_vm_from_u32(weft_vm_u32(x) >> (weft_vm_u32(y) & 31u)))
  WEFT_VM_UNARY(NOT_I32, weft_vm_from_u32(~weft_vm_u32(x)))
  WEFT_VM_UNARY(NEG_I32, weft_vm_from_u32(0u - weft_vm_u32(x)))

  // i64.
  WEFT_VM_BINARY(ADD_I64, x + y)
  WEFT_VM_BINARY(SUB_I64, x - y)
  WEFT_VM_BINARY(MUL_I64, x * y)
  WEFT_VM_CASE(DIV_I64_S) : {
    const int64_t x = weft_vm_i64(s[ip->b]);
    const int64_t y = weft_vm_i64(s[ip->c]);
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "division by zero"));
    }
    s[ip->a] = (x == INT64_MIN && y == -1) ? (uint64_t)INT64_MIN
                                           : (uint64_t)(x / y);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(DIV_I64_U) : {
    const uint64_t x = s[ip->b];
    const uint64_t y = s[ip->c];
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "division by zero"));
    }
    s[ip->a] = x / y;
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(REM_I64_S) : {
    const int64_t x = weft_vm_i64(s[ip->b]);
    const int64_t y = weft_vm_i64(s[ip->c]);
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "remainder by zero"));
    }
    s[ip->a] = y == -1 ? 0u : (uint64_t)(x % y);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(REM_I64_U) : {
    const uint64_t x = s[ip->b];
    const uint64_t y = s[ip->c];
    if (y == 0) {
      WEFT_VM_FAIL(weft_vm_trap(frame, (uint32_t)(ip - code),
                                WEFT_STATUS_INVALID_ARGUMENT,
                                "remainder by zero"));
    }
    s[ip->a] = x % y;
    WEFT_VM_NEXT();
  }
  WEFT_VM_BINARY(AND_I64, x & y)
  WEFT_VM_BINARY(OR_I64, x | y)
  WEFT_VM_BINARY(XOR_I64, x ^ y)
  WEFT_VM_BINARY(SHL_I64, x << (y & 63u))
  WEFT_VM_BINARY(SHR_I64_S,
                 (uint64_t)weft_vm_sar64(weft_vm_i64(x), (unsigned)(y & 63u)))
  WEFT_VM_BINARY(SHR_I64_U, x >> (y & 63u))
  WEFT_VM_UNARY(NOT_I64, ~x)
  WEFT_VM_UNARY(NEG_I64, 0u - x)

  // Floats.
  WEFT_VM_BINARY(ADD_F32, weft_vm_from_f32(weft_vm_f32(x) + weft_vm_f32(y)))
  WEFT_VM_BINARY(SUB_F32, weft_vm_from_f32(weft_vm_f32(x) - weft_vm_f32(y)))
  WEFT_VM_BINARY(MUL_F32, weft_vm_from_f32(weft_vm_f32(x) * weft_vm_f32(y)))
  WEFT_VM_BINARY(DIV_F32, weft_vm_from_f32(weft_vm_f32(x) / weft_vm_f32(y)))
  WEFT_VM_BINARY(MIN_F32,
                 weft_vm_from_f32(weft_vm_min_f32(weft_vm_f32(x),
                                                  weft_vm_f32(y))))
  WEFT_VM_BINARY(MAX_F32,
                 weft_vm_from_f32(weft_vm_max_f32(weft_vm_f32(x),
                                                  weft_vm_f32(y))))
  WEFT_VM_UNARY(NEG_F32, weft_vm_from_f32(-weft_vm_f32(x)))
  WEFT_VM_UNARY(ABS_F32, weft_vm_from_f32(fabsf(weft_vm_f32(x))))
  WEFT_VM_UNARY(SQRT_F32, weft_vm_from_f32(sqrtf(weft_vm_f32(x))))
  WEFT_VM_BINARY(ADD_F64, weft_vm_from_f64(weft_vm_f64(x) + weft_vm_f64(y)))
  WEFT_VM_BINARY(SUB_F64, weft_vm_from_f64(weft_vm_f64(x) - weft_vm_f64(y)))
  WEFT_VM_BINARY(MUL_F64, weft_vm_from_f64(weft_vm_f64(x) * weft_vm_f64(y)))
  WEFT_VM_BINARY(DIV_F64, weft_vm_from_f64(weft_vm_f64(x) / weft_vm_f64(y)))
  WEFT_VM_BINARY(MIN_F64,
                 weft_vm_from_f64(weft_vm_min_f64(weft_vm_f64(x),
                                                  weft_vm_f64(y))))
  WEFT_VM_BINARY(MAX_F64,
                 weft_vm_from_f64(weft_vm_max_f64(weft_vm_f64(x),
                                                  weft_vm_f64(y))))
  WEFT_VM_UNARY(NEG_F64, weft_vm_from_f64(-weft_vm_f64(x)))
  WEFT_VM_UNARY(ABS_F64, weft_vm_from_f64(fabs(weft_vm_f64(x))))
  WEFT_VM_UNARY(SQRT_F64, weft_vm_from_f64(sqrt(weft_vm_f64(x))))

  // Comparisons.
  WEFT_VM_BINARY(EQ_I32, weft_vm_u32(x) == weft_vm_u32(y))
  WEFT_VM_BINARY(NE_I32, weft_vm_u32(x) != weft_vm_u32(y))
  WEFT_VM_BINARY(LT_I32_S, weft_vm_i32(x) < weft_vm_i32(y))
  WEFT_VM_BINARY(LT_I32_U, weft_vm_u32(x) < weft_vm_u32(y))
  WEFT_VM_BINARY(LE_I32_S, weft_vm_i32(x) <= weft_vm_i32(y))
  WEFT_VM_BINARY(LE_I32_U, weft_vm_u32(x) <= weft_vm_u32(y))
  WEFT_VM_BINARY(EQ_I64, x == y)
  WEFT_VM_BINARY(NE_I64, x != y)
  WEFT_VM_BINARY(LT_I64_S, weft_vm_i64(x) < weft_vm_i64(y))
  WEFT_VM_BINARY(LT_I64_U, x < y)
  WEFT_VM_BINARY(LE_I64_S, weft_vm_i64(x) <= weft_vm_i64(y))
  WEFT_VM_BINARY(LE_I64_U, x <= y)
  WEFT_VM_BINARY(EQ_F32, weft_vm_f32(x) == weft_vm_f32(y))
  WEFT_VM_BINARY(NE_F32, weft_vm_f32(x) != weft_vm_f32(y))
  WEFT_VM_BINARY(LT_F32, weft_vm_f32(x) < weft_vm_f32(y))
  WEFT_VM_BINARY(LE_F32, weft_vm_f32(x) <= weft_vm_f32(y))
  WEFT_VM_BINARY(EQ_F64, weft_vm_f64(x) == weft_vm_f64(y))
  WEFT_VM_BINARY(NE_F64, weft_vm_f64(x) != weft_vm_f64(y))
  WEFT_VM_BINARY(LT_F64, weft_vm_f64(x) < weft_vm_f64(y))
  WEFT_VM_BINARY(LE_F64, weft_vm_f64(x) <= weft_vm_f64(y))

  // Conversions.
  WEFT_VM_UNARY(I32_TO_I64_S, (uint64_t)(int64_t)weft_vm_i32(x))
  WEFT_VM_UNARY(I32_TO_I64_U, (uint64_t)weft_vm_u32(x))
  WEFT_VM_UNARY(I64_TO_I32, weft_vm_from_u32((uint32_t)x))
  WEFT_VM_UNARY(I32_TO_F32_S, weft_vm_from_f32((float)weft_vm_i32(x)))
  WEFT_VM_UNARY(I32_TO_F32_U, weft_vm_from_f32((float)weft_vm_u32(x)))
  WEFT_VM_UNARY(I32_TO_F64_S, weft_vm_from_f64((double)weft_vm_i32(x)))
  WEFT_VM_UNARY(I32_TO_F64_U, weft_vm_from_f64((double)weft_vm_u32(x)))
  WEFT_VM_UNARY(I64_TO_F32_S, weft_vm_from_f32((float)weft_vm_i64(x)))
  WEFT_VM_UNARY(I64_TO_F64_S, weft_vm_from_f64((double)weft_vm_i64(x)))
  WEFT_VM_UNARY(F32_TO_I32_S,
                weft_vm_from_u32((uint32_t)weft_vm_f64_to_i32_s(
                    (double)weft_vm_f32(x))))
  WEFT_VM_UNARY(F32_TO_I32_U,
                weft_vm_from_u32(weft_vm_f64_to_i32_u((double)weft_vm_f32(x))))
  WEFT_VM_UNARY(F64_TO_I32_S,
                weft_vm_from_u32((uint32_t)weft_vm_f64_to_i32_s(weft_vm_f64(x))))
  WEFT_VM_UNARY(F64_TO_I64_S, (uint64_t)weft_vm_f64_to_i64_s(weft_vm_f64(x)))
  WEFT_VM_UNARY(F32_TO_F64, weft_vm_from_f64((double)weft_vm_f32(x)))
  WEFT_VM_UNARY(F64_TO_F32, weft_vm_from_f32((float)weft_vm_f64(x)))

  // Control.
  WEFT_VM_CASE(BR) : { WEFT_VM_JUMP(ip->imm); }
  WEFT_VM_CASE(BR_IF) : {
    if (weft_vm_u32(s[ip->a])) WEFT_VM_JUMP(ip->imm);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(BR_UNLESS) : {
    if (!weft_vm_u32(s[ip->a])) WEFT_VM_JUMP(ip->imm);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(CALL) : {
    WEFT_VM_SAVE_PC();
    const weft_vm_bytecode_t* bytecode = frame->bytecode;
    status = weft_vm_call(stack, bytecode->operands, ip->imm, frame->instance,
                          bytecode, &bytecode->functions[ip->a]);
    if (!weft_status_is_ok(status)) goto done;
    WEFT_VM_LOAD_FRAME();
    if (--budget_left == 0) goto out_of_budget;
    WEFT_VM_DISPATCH();
  }
  WEFT_VM_CASE(CALL_IMPORT) : {
    WEFT_VM_SAVE_PC();
    if (!frame->instance) {
      const weft_vm_import_t* import = &frame->bytecode->imports[ip->a];
      char what[256];
      snprintf(what, sizeof(what), "import %s.%s is not linked",
               import->module_name ? import->module_name : "?",
               import->function_name ? import->function_name : "?");
      status = weft_vm_trap(frame, (uint32_t)(ip - code),
                            WEFT_STATUS_FAILED_PRECONDITION, what);
      goto done;
    }
    const weft_vm_import_target_t target = frame->instance->imports[ip->a];
    const weft_vm_module_t* callee_module = target.instance->module;
    if (callee_module->kind == WEFT_VM_MODULE_BYTECODE) {
      status = weft_vm_call(
          stack, frame->bytecode->operands, ip->imm, target.instance,
          callee_module->bytecode,
          &callee_module->bytecode->functions[target.function_index]);
      if (!weft_status_is_ok(status)) goto done;
    } else {
      bool pushed = false;
      status = weft_vm_call_native_inline(stack, frame->bytecode->operands,
                                          ip->imm, target.instance,
                                          target.function_index, &pushed);
      if (pushed && status == weft_status_from_code(WEFT_STATUS_DEFERRED)) {
        if (stack->wait.count == 0) {
          status = weft_vm_stack_annotate(
              stack, WEFT_STATUS(INTERNAL,
                                 "%s.%s returned DEFERRED without a wait "
                                 "source",
                                 target.instance->module->name,
                                 target.instance->module->native
                                     ->functions[target.function_index]
                                     .name));
          return status;
        }
        *out_state = WEFT_VM_RUN_WAITING;
        return WEFT_OK;
      }
      if (pushed && weft_status_is_ok(status)) {
        // Too many values to keep inline: the frame was pushed; run it.
        status = weft_vm_native_step(stack, results, result_count, &waiting);
        if (!weft_status_is_ok(status)) return status;  // annotated
        if (waiting) {
          *out_state = WEFT_VM_RUN_WAITING;
          return WEFT_OK;
        }
      } else if (!weft_status_is_ok(status)) {
        if (pushed) return weft_vm_stack_annotate(stack, status);
        goto done;
      }
    }
    WEFT_VM_LOAD_FRAME();
    if (--budget_left == 0) goto out_of_budget;
    WEFT_VM_DISPATCH();
  }
  WEFT_VM_CASE(RET) : {
    const bool outermost = stack->depth == 1;
    // The results against the ref types the signature names (the module's
    // precomputed checks; most functions have none).
    const weft_vm_module_t* module =
        frame->instance ? frame->instance->module : NULL;
    if (module && module->function_checks) {
      const uint32_t index =
          (uint32_t)(frame->function - frame->bytecode->functions);
      if (module->function_checks[index].check_results) {
        status = weft_vm_annotate_at(
            frame, (uint32_t)(ip - code),
            weft_vm_check_ret(stack, frame, module, index,
                              frame->bytecode->operands + ip->imm));
        if (!weft_status_is_ok(status)) WEFT_VM_FAIL(status);
      }
    }
    weft_vm_return(stack, frame->bytecode->operands + ip->imm, NULL, results,
                   result_count);
    if (outermost) {
      *out_state = WEFT_VM_RUN_DONE;
      return WEFT_OK;
    }
    WEFT_VM_LOAD_FRAME();
    WEFT_VM_DISPATCH();
  }
  WEFT_VM_CASE(FAIL) : {
    const weft_vm_bytecode_t* bytecode = frame->bytecode;
    const weft_vm_rodata_t message = bytecode->rodata[ip->imm];
    char where[512];
    weft_vm_where(frame, (uint32_t)(ip - code), where, sizeof(where));
    WEFT_VM_FAIL(weft_status_make_(
        __FILE__, __LINE__, (weft_status_code_t)ip->a, "%.*s (fail in %s)",
        (int)message.length,
        (const char*)bytecode->rodata_bytes + message.offset, where));
  }

  // Lists.
  WEFT_VM_CASE(LIST_NEW) : {
    weft_vm_list_t* list = NULL;
    status = weft_vm_list_create(stack->allocator, weft_vm_u32(s[ip->b]),
                                 &list);
    if (!weft_status_is_ok(status)) {
      WEFT_VM_FAIL(weft_vm_annotate_at(frame, (uint32_t)(ip - code), status));
    }
    weft_vm_ref_t ref = {list, &kWeftVmListType};
    weft_vm_ref_move(&r[ip->a], &ref);
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(LIST_SIZE) : {
    weft_vm_list_t* list = NULL;
    status = weft_vm_check_list(frame, (uint32_t)(ip - code), r[ip->b], &list);
    if (!weft_status_is_ok(status)) WEFT_VM_FAIL(status);
    s[ip->a] = list->size;
    WEFT_VM_NEXT();
  }
  WEFT_VM_CASE(LIST_RESIZE) : {
    weft_vm_list_t* list = NULL;
    status = weft_vm_check_list(frame, (uint32_t)(ip - code), r[ip->a], &list);
    if (weft_status_is_ok(status)) {
      status = weft_vm_annotate_at(frame, (uint32_t)(ip - code),
                                   weft_vm_list_resize(list,
                                                       weft_vm_u32(s[ip->b])));
    }
    if (!weft_status_is_ok(status)) WEFT_VM_FAIL(status);
    WEFT_VM_NEXT();
  }
#define WEFT_VM_LIST_GET_SCALAR(name, value_type)                          \
  WEFT_VM_CASE(name) : {                                                   \
    weft_vm_list_t* list = NULL;                                           \
    weft_vm_value_t value;                                                 \
    status =                                                               \
        weft_vm_check_list(frame, (uint32_t)(ip - code), r[ip->b], &list); \
    if (weft_status_is_ok(status)) {                                       \
      status = weft_vm_annotate_at(                                        \
          frame, (uint32_t)(ip - code),                                    \
          weft_vm_list_get(list, weft_vm_u32(s[ip->c]), value_type,        \
                           &value));                                       \
    }                                                                      \
    if (!weft_status_is_ok(status)) WEFT_VM_FAIL(status);                  \
    s[ip->a] = value.bits;                                                 \
    WEFT_VM_NEXT();                                                        \
  }
  WEFT_VM_LIST_GET_SCALAR(LIST_GET_I32, WEFT_VM_TYPE_I32)
  WEFT_VM_LIST_GET_SCALAR(LIST_GET_I64, WEFT_VM_TYPE_I64)
  WEFT_VM_LIST_GET_SCALAR(LIST_GET_F32, WEFT_VM_TYPE_F32)
  WEFT_VM_LIST_GET_SCALAR(LIST_GET_F64, WEFT_VM_TYPE_F64)
#undef WEFT_VM_LIST_GET_SCALAR
  WEFT_VM_CASE(LIST_GET_REF) : {
    weft_vm_list_t* list = NULL;
    weft_vm_value_t value;
    status = weft_vm_check_list(frame, (uint32_t)(ip - code), r[ip->b], &list);
    if (weft_status_is_ok(status)) {
      status = weft_vm_annotate_at(
          frame, (uint32_t)(ip - code),
          weft_vm_list_get(list, weft_vm_u32(s[ip->c]), WEFT_VM_TYPE_REF,
                           &value));
    }
    if (!weft_status_is_ok(status)) WEFT_VM_FAIL(status);
    weft_vm_ref_move(&r[ip->a], &value.ref);
    WEFT_VM_NEXT();
  }
#define WEFT_VM_LIST_SET_SCALAR(name, value_type)                          \
  WEFT_VM_CASE(name) : {                                                   \
    weft_vm_list_t* list = NULL;                                           \
    weft_vm_value_t value;                                                 \
    value.type = value_type;                                               \
    value.bits = (value_type == WEFT_VM_TYPE_I32 ||                        \
                  value_type == WEFT_VM_TYPE_F32)                          \
                     ? weft_vm_from_u32(weft_vm_u32(s[ip->c]))             \
                     : s[ip->c];                                           \
    status =                                                               \
        weft_vm_check_list(frame, (uint32_t)(ip - code), r[ip->a], &list); \
    if (weft_status_is_ok(status)) {                                       \
      status = weft_vm_annotate_at(                                        \
          frame, (uint32_t)(ip - code),                                    \
          weft_vm_list_set(list, weft_vm_u32(s[ip->b]), &value));          \
    }                                                                      \
    if (!weft_status_is_ok(status)) WEFT_VM_FAIL(status);                  \
    WEFT_VM_NEXT();                                                        \
  }
  WEFT_VM_LIST_SET_SCALAR(LIST_SET_I32, WEFT_VM_TYPE_I32)
  WEFT_VM_LIST_SET_SCALAR(LIST_SET_I64, WEFT_VM_TYPE_I64)
  WEFT_VM_LIST_SET_SCALAR(LIST_SET_F32, WEFT_VM_TYPE_F32)
  WEFT_VM_LIST_SET_SCALAR(LIST_SET_F64, WEFT_VM_TYPE_F64)
#undef WEFT_VM_LIST_SET_SCALAR
  WEFT_VM_CASE(LIST_SET_REF) : {
    weft_vm_list_t* list = NULL;
    weft_vm_value_t value;
    value.type = WEFT_VM_TYPE_REF;
    value.ref = r[ip->c];
    status = weft_vm_check_list(frame, (uint32_t)(ip - code), r[ip->a], &list);
    if (weft_status_is_ok(status)) {
      status = weft_vm_annotate_at(
          frame, (uint32_t)(ip - code),
          weft_vm_list_set(list, weft_vm_u32(s[ip->b]), &value));
    }
    if (!weft_status_is_ok(status)) WEFT_VM_FAIL(status);
    WEFT_VM_NEXT();
  }

  WEFT_VM_LOOP_END

out_of_budget:
  // |ip| is the next instruction to run.
  frame->pc = (uint32_t)(ip - code);
  return WEFT_OK;

done:
  return weft_vm_stack_annotate(stack, status);
}
