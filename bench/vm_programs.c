// weft benchmarks: VM programs (see vm_programs.h).
#include "vm_programs.h"

#include <stdlib.h>
#include <string.h>

#include "vm/context.h"
#include "vm/interpreter.h"
#include "vm/module.h"

#define I(op_, a_, b_, c_) \
  {.op = WEFT_VM_OP_##op_, .reserved = 0, .a = (a_), .b = (b_), .c = (c_)}
#define IMM(op_, a_, imm_) \
  {.op = WEFT_VM_OP_##op_, .reserved = 0, .a = (a_), .imm = (imm_)}

static const weft_vm_instruction_t kCode[] = {
    // int_loop: 0..7
    IMM(CONST_I64, 1, 0),  // s1 = 0 (sum)
    IMM(CONST_I64, 2, 0),  // s2 = 0 (i)
    IMM(CONST_I64, 3, 1),  // s3 = 3
    IMM(CONST_I64, 4, 2),  // s4 = 1
    I(MUL_I64, 5, 2, 3),   // 4: s5 = i * 3
    I(ADD_I64, 1, 1, 5),   // s = s + s5
    I(ADD_I64, 2, 2, 4),   // i += 1
    I(LT_I64_S, 6, 2, 0),  // s6 = i < n
    IMM(BR_IF, 6, 4),      // 8
    IMM(RET, 0, 0),        // ret (s1)
    // float_loop: 10..
    IMM(CONST_F64, 1, 3),  // s1 = 0.0 (x)
    IMM(CONST_I64, 2, 0),  // s2 = 0 (i)
    IMM(CONST_F64, 3, 4),  // s3 = 0.999
    IMM(CONST_F64, 4, 5),  // s4 = 1.5
    IMM(CONST_I64, 5, 2),  // s5 = 1
    I(MUL_F64, 1, 1, 3),   // 5: x *= 0.999
    I(ADD_F64, 1, 1, 4),   // x += 1.5
    I(ADD_I64, 2, 2, 5),   // i += 1
    I(LT_I64_S, 6, 2, 0),  // s6 = i < n
    IMM(BR_IF, 6, 5),
    IMM(RET, 0, 0),  // ret (s1)
    // call_loop: 21..
    IMM(CONST_I64, 1, 0),  // s1 = 0 (acc)
    IMM(CONST_I64, 2, 0),  // s2 = 0 (i)
    IMM(CONST_I64, 4, 2),  // s4 = 1
    IMM(CALL, 3, 1),       // 3: s1 = add2(s1, s4)
    I(ADD_I64, 2, 2, 4),   // i += 1
    I(LT_I64_S, 6, 2, 0),  // s6 = i < n
    IMM(BR_IF, 6, 3),
    IMM(RET, 0, 0),  // ret (s1)
    // native_loop: 29..
    IMM(CONST_I64, 1, 0),
    IMM(CONST_I64, 2, 0),
    IMM(CONST_I64, 4, 2),
    IMM(CALL_IMPORT, 0, 1),  // 3: s1 = bench.add2(s1, s4)
    I(ADD_I64, 2, 2, 4),
    I(LT_I64_S, 6, 2, 0),
    IMM(BR_IF, 6, 3),
    IMM(RET, 0, 0),
    // add2: 37..
    I(ADD_I64, 2, 0, 1),
    IMM(RET, 0, 4),  // ret (s2)
};

// [0] ret s1; [1..3] call args s1, s4 and result s1; [4] ret s2.
static const uint16_t kOperands[] = {1, 1, 4, 1, 2};
static uint64_t g_constants[6];

static const uint8_t kLoopTypes[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64};
static const uint8_t kFloatTypes[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_F64};
static const uint8_t kAdd2Types[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64,
                                     WEFT_VM_TYPE_I64};

static const weft_vm_function_t kFunctions[] = {
    {"int_loop", {1, 1, kLoopTypes, NULL}, 7, 0, 0, 10},
    {"float_loop", {1, 1, kFloatTypes, NULL}, 7, 0, 10, 11},
    {"call_loop", {1, 1, kLoopTypes, NULL}, 7, 0, 21, 8},
    {"add2", {2, 1, kAdd2Types, NULL}, 3, 0, 37, 2},
    {"native_loop", {1, 1, kLoopTypes, NULL}, 7, 0, 29, 8},
};

static const weft_vm_import_t kImports[] = {
    {"bench", "add2", {2, 1, kAdd2Types, NULL}},
};

static weft_status_t bench_add2(weft_vm_native_call_t* call) {
  call->results[0].i64 = call->args[0].i64 + call->args[1].i64;
  return WEFT_OK;
}

static const weft_vm_native_function_t kNativeFunctions[] = {
    {"add2", "(i64, i64) -> (i64)", bench_add2},
};
static const weft_vm_native_module_def_t kNativeModule = {
    .name = "bench",
    .function_count = 1,
    .functions = kNativeFunctions,
};

struct weft_bench_vm_t {
  weft_vm_context_t* context;
  const weft_vm_instance_t* instance;
  weft_vm_stack_t stack;
};

static const uint32_t kProgramFunctions[WEFT_BENCH_VM_PROGRAM_COUNT_] = {
    0, 1, 2, 4};

weft_status_t weft_bench_vm_create(weft_bench_vm_t** out_vm) {
  *out_vm = NULL;
  const double f64s[3] = {0.0, 0.999, 1.5};
  g_constants[0] = 0;
  g_constants[1] = 3;
  g_constants[2] = 1;
  memcpy(&g_constants[3], f64s, sizeof(f64s));
  weft_allocator_t allocator = weft_allocator_system();
  // The module owns its bytecode as one allocation: copy the header; the
  // tables stay static.
  weft_vm_bytecode_t* bytecode = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*bytecode), (void**)&bytecode);
  if (!weft_status_is_ok(status)) return status;
  *bytecode = (weft_vm_bytecode_t){
      .name = "programs",
      .function_count = sizeof(kFunctions) / sizeof(kFunctions[0]),
      .functions = kFunctions,
      .import_count = 1,
      .imports = kImports,
      .code_count = sizeof(kCode) / sizeof(kCode[0]),
      .code = kCode,
      .operand_count = sizeof(kOperands) / sizeof(kOperands[0]),
      .operands = kOperands,
      .constant_count = 6,
      .constants = g_constants,
  };
  weft_vm_module_t* modules[2] = {NULL, NULL};
  status = weft_vm_module_create_bytecode(allocator, bytecode, &modules[0]);
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_create_native(allocator, &kNativeModule,
                                          &modules[1]);
  }
  weft_bench_vm_t* vm = NULL;
  if (weft_status_is_ok(status)) {
    vm = calloc(1, sizeof(*vm));
    if (!vm) status = WEFT_STATUS(RESOURCE_EXHAUSTED, "bench vm");
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_context_create(modules, 2, allocator, &vm->context);
  }
  weft_vm_module_release(modules[0]);
  weft_vm_module_release(modules[1]);
  if (weft_status_is_ok(status)) {
    vm->instance = &vm->context->instances[0];
    weft_vm_stack_initialize(allocator, 0, &vm->stack);
    *out_vm = vm;
  } else {
    free(vm);
  }
  return status;
}

void weft_bench_vm_destroy(weft_bench_vm_t* vm) {
  if (!vm) return;
  weft_vm_stack_deinitialize(&vm->stack);
  weft_vm_context_release(vm->context);
  free(vm);
}

weft_status_t weft_bench_vm_run(weft_bench_vm_t* vm,
                                weft_bench_vm_program_t program, int64_t n,
                                uint64_t* out_bits) {
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I64, .i64 = n};
  weft_vm_value_t result = {0};
  weft_status_t status = weft_vm_interpreter_begin(
      &vm->stack, vm->instance, NULL, kProgramFunctions[program], &arg, 1);
  weft_vm_run_state_t state = WEFT_VM_RUN_YIELDED;
  while (weft_status_is_ok(status) && state == WEFT_VM_RUN_YIELDED) {
    status = weft_vm_interpreter_run(&vm->stack, UINT64_MAX, &result, 1,
                                     &state);
  }
  *out_bits = result.bits;
  return status;
}
