// Tests for src/vm/interpreter: the semantics of every scalar opcode at its
// edges (wraparound, division by zero, NaN, conversion limits), calls,
// stack depth, fail, lists and the instruction budget. Modules are built
// directly as weft_vm_bytecode_t here; the assembler has its own tests.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <math.h>
#include <string.h>

#include "vm/interpreter.h"
#include "weft/vm/list.h"

#define I(op_, a_, b_, c_) \
  { .op = WEFT_VM_OP_##op_, .reserved = 0, .a = (a_), .b = (b_), .c = (c_) }
#define IMM(op_, a_, imm_) \
  { .op = WEFT_VM_OP_##op_, .reserved = 0, .a = (a_), .imm = (imm_) }

static const uint8_t kI64x2ToI64[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64,
                                      WEFT_VM_TYPE_I64};

// Runs function 0 of |bytecode| with |args|; returns the status and fills
// |results|.
static weft_status_t run(const weft_vm_bytecode_t* bytecode,
                         const weft_vm_value_t* args, uint32_t arg_count,
                         weft_vm_value_t* results, uint32_t result_count) {
  weft_status_t status = weft_vm_bytecode_validate(bytecode);
  if (!weft_status_is_ok(status)) return status;
  weft_vm_stack_t stack;
  weft_vm_stack_initialize(weft_allocator_system(), 0, &stack);
  status =
      weft_vm_interpreter_begin(&stack, NULL, bytecode, 0, args, arg_count);
  weft_vm_run_state_t state = WEFT_VM_RUN_YIELDED;
  while (weft_status_is_ok(status) && state == WEFT_VM_RUN_YIELDED) {
    status = weft_vm_interpreter_run(&stack, 1000, results, result_count,
                                     &state);
  }
  weft_vm_stack_deinitialize(&stack);
  return status;
}

static void expect_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[1024];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("unexpected error: %s", text);
  }
}

static void expect_error(weft_status_t status, weft_status_code_t code,
                         const char* needle) {
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code || !strstr(text, needle)) {
    fail_msg("expected %s with '%s', got: %s", weft_status_code_string(code),
             needle, text);
  }
}

// A module whose one function applies |op| to (x, y) (or to x for unary
// shapes) and returns the 64 result bits.
static weft_status_t apply(weft_vm_opcode_t op, uint64_t x, uint64_t y,
                           uint64_t* out) {
  const bool unary = kWeftVmOpcodes[op].shape == WEFT_VM_SHAPE_S_S;
  const uint16_t operands[] = {2};
  weft_vm_instruction_t code[2];
  memset(code, 0, sizeof(code));
  code[0].op = (uint8_t)op;
  code[0].a = 2;
  code[0].b = 0;
  code[0].c = unary ? 0 : 1;
  code[1].op = WEFT_VM_OP_RET;
  code[1].imm = 0;
  const weft_vm_function_t function = {
      "f", {2, 1, kI64x2ToI64, NULL}, 3, 0, 0, 2, 0};
  const weft_vm_bytecode_t bytecode = {
      .name = "m",
      .function_count = 1,
      .functions = &function,
      .code_count = 2,
      .code = code,
      .operand_count = 1,
      .operands = operands,
  };
  weft_vm_value_t args[2] = {{.type = WEFT_VM_TYPE_I64, .bits = x},
                             {.type = WEFT_VM_TYPE_I64, .bits = y}};
  weft_vm_value_t result = {0};
  weft_status_t status = run(&bytecode, args, 2, &result, 1);
  *out = result.bits;
  return status;
}

static uint64_t apply_ok(weft_vm_opcode_t op, uint64_t x, uint64_t y) {
  uint64_t result = 0;
  expect_ok(apply(op, x, y, &result));
  return result;
}

static uint64_t f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}
static uint64_t f64_bits(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}
static float as_f32(uint64_t bits) {
  uint32_t low = (uint32_t)bits;
  float value;
  memcpy(&value, &low, sizeof(value));
  return value;
}
static double as_f64(uint64_t bits) {
  double value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static void integer_arithmetic_wraps(void** state) {
  assert_int_equal(apply_ok(WEFT_VM_OP_ADD_I32, 0x7fffffff, 1), 0x80000000u);
  assert_int_equal(apply_ok(WEFT_VM_OP_SUB_I32, 0, 1), 0xffffffffu);
  assert_int_equal(apply_ok(WEFT_VM_OP_MUL_I32, 0x10000, 0x10000), 0);
  // i32 results zero the upper half.
  assert_int_equal(apply_ok(WEFT_VM_OP_ADD_I32, 0xffffffff00000001ull, 1), 2);
  assert_int_equal(apply_ok(WEFT_VM_OP_ADD_I64, INT64_MAX, 1),
                   (uint64_t)INT64_MIN);
  assert_int_equal(apply_ok(WEFT_VM_OP_NEG_I32, 0x80000000u, 0), 0x80000000u);
  assert_int_equal(apply_ok(WEFT_VM_OP_NOT_I64, 0, 0), UINT64_MAX);
  assert_int_equal(apply_ok(WEFT_VM_OP_NEG_I64, 1, 0), UINT64_MAX);
}

static void division_and_remainder(void** state) {
  assert_int_equal(apply_ok(WEFT_VM_OP_DIV_I32_S, (uint32_t)-7, 2),
                   (uint32_t)-3);
  assert_int_equal(apply_ok(WEFT_VM_OP_DIV_I32_U, (uint32_t)-7, 2),
                   0x7ffffffcu);
  assert_int_equal(apply_ok(WEFT_VM_OP_REM_I32_S, (uint32_t)-7, 2),
                   (uint32_t)-1);
  assert_int_equal(apply_ok(WEFT_VM_OP_REM_I32_U, 7, 4), 3);
  // INT_MIN / -1 wraps to INT_MIN; its remainder is 0.
  assert_int_equal(apply_ok(WEFT_VM_OP_DIV_I32_S, 0x80000000u, 0xffffffffu),
                   0x80000000u);
  assert_int_equal(apply_ok(WEFT_VM_OP_REM_I32_S, 0x80000000u, 0xffffffffu),
                   0);
  assert_int_equal(apply_ok(WEFT_VM_OP_DIV_I64_S, (uint64_t)INT64_MIN,
                            UINT64_MAX),
                   (uint64_t)INT64_MIN);
  assert_int_equal(apply_ok(WEFT_VM_OP_REM_I64_S, (uint64_t)INT64_MIN,
                            UINT64_MAX),
                   0);
  assert_int_equal(apply_ok(WEFT_VM_OP_DIV_I64_U, UINT64_MAX, 2),
                   UINT64_MAX / 2);
  // Division and remainder by zero fail the invocation, naming the place.
  static const weft_vm_opcode_t kDivisions[] = {
      WEFT_VM_OP_DIV_I32_S, WEFT_VM_OP_DIV_I32_U, WEFT_VM_OP_REM_I32_S,
      WEFT_VM_OP_REM_I32_U, WEFT_VM_OP_DIV_I64_S, WEFT_VM_OP_DIV_I64_U,
      WEFT_VM_OP_REM_I64_S, WEFT_VM_OP_REM_I64_U};
  for (size_t i = 0; i < sizeof(kDivisions) / sizeof(kDivisions[0]); ++i) {
    uint64_t result = 0;
    expect_error(apply(kDivisions[i], 5, 0, &result),
                 WEFT_STATUS_INVALID_ARGUMENT, "by zero");
  }
  uint64_t result = 0;
  expect_error(apply(WEFT_VM_OP_DIV_I32_S, 5, 0, &result),
               WEFT_STATUS_INVALID_ARGUMENT, "div.i32.s in m.f");
  expect_error(apply(WEFT_VM_OP_DIV_I32_S, 5, 0, &result),
               WEFT_STATUS_INVALID_ARGUMENT, "VM stack: at m.f");
  // An i32 divisor with zero low bits is zero.
  expect_error(apply(WEFT_VM_OP_DIV_I32_U, 5, 0x100000000ull, &result),
               WEFT_STATUS_INVALID_ARGUMENT, "division by zero");
}

static void shifts_take_the_count_modulo_the_width(void** state) {
  assert_int_equal(apply_ok(WEFT_VM_OP_SHL_I32, 1, 33), 2);
  assert_int_equal(apply_ok(WEFT_VM_OP_SHR_I32_S, 0x80000000u, 31),
                   0xffffffffu);
  assert_int_equal(apply_ok(WEFT_VM_OP_SHR_I32_U, 0x80000000u, 31), 1);
  assert_int_equal(apply_ok(WEFT_VM_OP_SHL_I64, 1, 65), 2);
  assert_int_equal(apply_ok(WEFT_VM_OP_SHR_I64_S, (uint64_t)INT64_MIN, 63),
                   UINT64_MAX);
  assert_int_equal(apply_ok(WEFT_VM_OP_SHR_I64_U, (uint64_t)INT64_MIN, 63), 1);
  assert_int_equal(apply_ok(WEFT_VM_OP_AND_I32, 0xf0f0, 0xff00), 0xf000);
  assert_int_equal(apply_ok(WEFT_VM_OP_OR_I64, 1, 2), 3);
  assert_int_equal(apply_ok(WEFT_VM_OP_XOR_I32, 0xff, 0x0f), 0xf0);
}

static void comparisons_and_nan(void** state) {
  assert_int_equal(apply_ok(WEFT_VM_OP_LT_I32_S, (uint32_t)-1, 0), 1);
  assert_int_equal(apply_ok(WEFT_VM_OP_LT_I32_U, (uint32_t)-1, 0), 0);
  assert_int_equal(apply_ok(WEFT_VM_OP_LE_I64_S, UINT64_MAX, UINT64_MAX), 1);
  assert_int_equal(apply_ok(WEFT_VM_OP_LE_I64_U, UINT64_MAX, 0), 0);
  assert_int_equal(apply_ok(WEFT_VM_OP_EQ_I32, 0x100000005ull, 5), 1);
  const uint64_t nan32 = f32_bits(NAN);
  const uint64_t one32 = f32_bits(1.0f);
  assert_int_equal(apply_ok(WEFT_VM_OP_EQ_F32, nan32, nan32), 0);
  assert_int_equal(apply_ok(WEFT_VM_OP_NE_F32, nan32, nan32), 1);
  assert_int_equal(apply_ok(WEFT_VM_OP_LT_F32, nan32, one32), 0);
  assert_int_equal(apply_ok(WEFT_VM_OP_LE_F32, one32, nan32), 0);
  const uint64_t nan64 = f64_bits(NAN);
  assert_int_equal(apply_ok(WEFT_VM_OP_EQ_F64, nan64, nan64), 0);
  assert_int_equal(apply_ok(WEFT_VM_OP_NE_F64, nan64, f64_bits(1.0)), 1);
  assert_int_equal(apply_ok(WEFT_VM_OP_LT_F64, f64_bits(-0.0), f64_bits(0.0)),
                   0);
  assert_int_equal(apply_ok(WEFT_VM_OP_LE_F64, f64_bits(-0.0), f64_bits(0.0)),
                   1);
}

static void float_arithmetic(void** state) {
  assert_true(as_f32(apply_ok(WEFT_VM_OP_ADD_F32, f32_bits(1.5f),
                              f32_bits(2.25f))) == 3.75f);
  assert_true(as_f64(apply_ok(WEFT_VM_OP_DIV_F64, f64_bits(1.0),
                              f64_bits(0.0))) == INFINITY);
  assert_true(isnan(as_f32(apply_ok(WEFT_VM_OP_MIN_F32, f32_bits(NAN),
                                    f32_bits(1.0f)))));
  assert_true(isnan(as_f64(apply_ok(WEFT_VM_OP_MAX_F64, f64_bits(1.0),
                                    f64_bits(NAN)))));
  assert_true(as_f32(apply_ok(WEFT_VM_OP_MAX_F32, f32_bits(-1.0f),
                              f32_bits(2.0f))) == 2.0f);
  assert_true(as_f64(apply_ok(WEFT_VM_OP_SQRT_F64, f64_bits(16.0), 0)) ==
              4.0);
  assert_true(as_f32(apply_ok(WEFT_VM_OP_ABS_F32, f32_bits(-3.0f), 0)) ==
              3.0f);
  assert_true(as_f64(apply_ok(WEFT_VM_OP_NEG_F64, f64_bits(2.0), 0)) == -2.0);
  // f32 results zero the upper half.
  assert_int_equal(apply_ok(WEFT_VM_OP_MUL_F32, f32_bits(2.0f),
                            f32_bits(3.0f)) >> 32,
                   0);
}

static void conversions_at_the_limits(void** state) {
  assert_int_equal(apply_ok(WEFT_VM_OP_I32_TO_I64_S, 0xffffffffu, 0),
                   UINT64_MAX);
  assert_int_equal(apply_ok(WEFT_VM_OP_I32_TO_I64_U, 0xffffffffu, 0),
                   0xffffffffu);
  assert_int_equal(apply_ok(WEFT_VM_OP_I64_TO_I32, 0x123456789ull, 0),
                   0x23456789u);
  assert_true(as_f32(apply_ok(WEFT_VM_OP_I32_TO_F32_U, 0xffffffffu, 0)) ==
              4294967296.0f);
  assert_true(as_f64(apply_ok(WEFT_VM_OP_I32_TO_F64_S, 0x80000000u, 0)) ==
              -2147483648.0);
  // Float to integer saturates; NaN gives 0.
  assert_int_equal(apply_ok(WEFT_VM_OP_F32_TO_I32_S, f32_bits(3e9f), 0),
                   0x7fffffffu);
  assert_int_equal(apply_ok(WEFT_VM_OP_F32_TO_I32_S, f32_bits(-3e9f), 0),
                   0x80000000u);
  assert_int_equal(apply_ok(WEFT_VM_OP_F32_TO_I32_S, f32_bits(NAN), 0), 0);
  assert_int_equal(apply_ok(WEFT_VM_OP_F32_TO_I32_S, f32_bits(-2.75f), 0),
                   (uint32_t)-2);
  assert_int_equal(apply_ok(WEFT_VM_OP_F32_TO_I32_U, f32_bits(-5.0f), 0), 0);
  assert_int_equal(apply_ok(WEFT_VM_OP_F32_TO_I32_U, f32_bits(5e9f), 0),
                   0xffffffffu);
  assert_int_equal(apply_ok(WEFT_VM_OP_F64_TO_I64_S, f64_bits(1e300), 0),
                   (uint64_t)INT64_MAX);
  assert_int_equal(apply_ok(WEFT_VM_OP_F64_TO_I64_S, f64_bits(-INFINITY), 0),
                   (uint64_t)INT64_MIN);
  assert_int_equal(apply_ok(WEFT_VM_OP_F64_TO_I32_S, f64_bits(NAN), 0), 0);
  assert_true(as_f64(apply_ok(WEFT_VM_OP_F32_TO_F64, f32_bits(0.5f), 0)) ==
              0.5);
  assert_true(isinf(as_f32(apply_ok(WEFT_VM_OP_F64_TO_F32, f64_bits(1e300),
                                    0))));
}

// select copies one of two registers (64 bits) by an i32 condition.
static void select_picks_by_condition(void** state) {
  // f(c: i32, x: i64, y: i64) -> (i64): select s3, s0, s1, s2; ret (s3)
  const uint16_t operands[] = {0, 1, 2, 3};
  weft_vm_instruction_t code[] = {
      IMM(SELECT, 3, 0),  // operands[0..3): condition, x, y
      IMM(RET, 0, 3),
  };
  static const uint8_t kTypes[] = {WEFT_VM_TYPE_I32, WEFT_VM_TYPE_I64,
                                   WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64};
  const weft_vm_function_t function = {"pick", {3, 1, kTypes, NULL}, 4, 0, 0,
                                       2, 0};
  const weft_vm_bytecode_t bytecode = {
      .name = "m", .function_count = 1, .functions = &function,
      .code_count = 2, .code = code, .operand_count = 4,
      .operands = operands,
  };
  weft_vm_value_t args[3] = {{.type = WEFT_VM_TYPE_I32, .i32 = 1},
                             {.type = WEFT_VM_TYPE_I64, .i64 = -5},
                             {.type = WEFT_VM_TYPE_I64, .i64 = 9}};
  weft_vm_value_t result = {0};
  expect_ok(run(&bytecode, args, 3, &result, 1));
  assert_int_equal(result.i64, -5);
  args[0].i32 = 0;
  expect_ok(run(&bytecode, args, 3, &result, 1));
  assert_int_equal(result.i64, 9);
}

// sum(i * 3 for i in [0, n)) with a loop and a call.
static void loops_and_calls(void** state) {
  // f0(n: i64) -> (i64): s1 = 0 (sum), s2 = 0 (i), s3 = 3, s4 = 1
  //   loop: s5 = i < n; br_unless s5, end; s6 = call f1(s2, s3); s1 += s6;
  //   s2 += s4; br loop; end: ret (s1)
  // f1(a: i64, b: i64) -> (i64): s2 = a * b; ret (s2)
  const uint16_t operands[] = {2, 3, 6, 1, 2};
  const uint64_t constants[] = {0, 3, 1};
  weft_vm_instruction_t code[] = {
      IMM(CONST_I64, 1, 0),   // 0
      IMM(CONST_I64, 2, 0),   // 1
      IMM(CONST_I64, 3, 1),   // 2
      IMM(CONST_I64, 4, 2),   // 3
      I(LT_I64_S, 5, 2, 0),   // 4: loop
      IMM(BR_UNLESS, 5, 10),  // 5
      IMM(CALL, 1, 0),        // 6: operands[0..3): args s2, s3; result s6
      I(ADD_I64, 1, 1, 6),    // 7
      I(ADD_I64, 2, 2, 4),    // 8
      IMM(BR, 0, 4),          // 9
      IMM(RET, 0, 3),         // 10: ret (s1)
      I(MUL_I64, 2, 0, 1),    // f1 0
      IMM(RET, 0, 4),         // f1 1: ret (s2)
  };
  static const uint8_t kF0Types[] = {WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I64};
  const weft_vm_function_t functions[] = {
      {"sum", {1, 1, kF0Types, NULL}, 7, 0, 0, 11, 0},
      {"mul", {2, 1, kI64x2ToI64, NULL}, 3, 0, 11, 2, 0},
  };
  const weft_vm_bytecode_t bytecode = {
      .name = "loops",
      .function_count = 2,
      .functions = functions,
      .code_count = sizeof(code) / sizeof(code[0]),
      .code = code,
      .operand_count = sizeof(operands) / sizeof(operands[0]),
      .operands = operands,
      .constant_count = 3,
      .constants = constants,
  };
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I64, .i64 = 1000};
  weft_vm_value_t result = {0};
  expect_ok(run(&bytecode, &arg, 1, &result, 1));
  assert_int_equal(result.type, WEFT_VM_TYPE_I64);
  assert_int_equal(result.i64, 3 * 999 * 1000 / 2);
}

// A function that calls itself forever overflows the bounded stack with a
// clear error, not a crash.
static void stack_overflow_is_an_error(void** state) {
  const uint16_t operands[] = {0};
  weft_vm_instruction_t code[] = {
      IMM(CALL, 0, 0),
      IMM(RET, 0, 0),
  };
  static const uint8_t kTypes[] = {WEFT_VM_TYPE_I32};
  const weft_vm_function_t function = {"forever", {0, 1, kTypes, NULL}, 1, 0,
                                       0, 2, 0};
  const weft_vm_bytecode_t bytecode = {
      .name = "deep",
      .function_count = 1,
      .functions = &function,
      .code_count = 2,
      .code = code,
      .operand_count = 1,
      .operands = operands,
  };
  weft_vm_value_t result = {0};
  expect_error(run(&bytecode, NULL, 0, &result, 1),
               WEFT_STATUS_RESOURCE_EXHAUSTED,
               "calling 'deep.forever' at depth 1024");
}

static void fail_carries_code_and_message(void** state) {
  static const uint8_t kMessage[] = "the input was odd";
  const weft_vm_rodata_t rodata = {0, sizeof(kMessage) - 1};
  weft_vm_instruction_t code[] = {
      IMM(FAIL, WEFT_STATUS_OUT_OF_RANGE, 0),
  };
  const weft_vm_function_t function = {"check", {0, 0, NULL, NULL}, 0, 0, 0,
                                       1, 0};
  const uint32_t lines[] = {42};
  const weft_vm_bytecode_t bytecode = {
      .name = "m",
      .source_name = "check.wvm",
      .lines = lines,
      .function_count = 1,
      .functions = &function,
      .code_count = 1,
      .code = code,
      .rodata_count = 1,
      .rodata = &rodata,
      .rodata_byte_count = sizeof(kMessage) - 1,
      .rodata_bytes = kMessage,
  };
  expect_error(run(&bytecode, NULL, 0, NULL, 0), WEFT_STATUS_OUT_OF_RANGE,
               "the input was odd (fail in m.check (check.wvm:42))");
  expect_error(run(&bytecode, NULL, 0, NULL, 0), WEFT_STATUS_OUT_OF_RANGE,
               "VM stack: at m.check (check.wvm:42)");
}

// list.new, resize, set and get of values and refs; type mismatch and a
// bad index fail with a message.
static void lists(void** state) {
  // f(n: i32) -> (r, i64): r0 = list(n); resize r0, n; set.i64 r0[1] = 77;
  //   r1 = list(0); set.ref r0[0] = r1; s2 = get.i64 r0[1]; ret (r0, s2)
  const uint16_t operands[] = {0, 2};
  const uint64_t constants[] = {77};
  weft_vm_instruction_t code[] = {
      I(LIST_NEW, 0, 0, 0),      // r0 = new list, capacity s0
      I(LIST_RESIZE, 0, 0, 0),   // resize r0 to s0
      IMM(CONST_I32, 1, 1),      // s1 = 1
      IMM(CONST_I64, 2, 0),      // s2 = 77
      I(LIST_SET_I64, 0, 1, 2),  // r0[s1] = s2
      IMM(CONST_I32, 3, 0),      // s3 = 0
      I(LIST_NEW, 1, 3, 0),      // r1 = new list
      I(LIST_SET_REF, 0, 3, 1),  // r0[s3] = r1
      I(LIST_GET_I64, 2, 0, 1),  // s2 = r0[s1]
      IMM(RET, 0, 0),            // ret (r0, s2)
  };
  static const uint8_t kTypes[] = {WEFT_VM_TYPE_I32, WEFT_VM_TYPE_REF,
                                   WEFT_VM_TYPE_I64};
  const weft_vm_function_t function = {"lists", {1, 2, kTypes, NULL}, 4, 2,
                                       0, 10, 0};
  const weft_vm_bytecode_t bytecode = {
      .name = "m",
      .function_count = 1,
      .functions = &function,
      .code_count = 10,
      .code = code,
      .operand_count = 2,
      .operands = operands,
      .constant_count = 1,
      .constants = constants,
  };
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I32, .i32 = 4};
  weft_vm_value_t results[2];
  memset(results, 0, sizeof(results));
  expect_ok(run(&bytecode, &arg, 1, results, 2));
  assert_int_equal(results[0].type, WEFT_VM_TYPE_REF);
  assert_ptr_equal(results[0].ref.type, &kWeftVmListType);
  weft_vm_list_t* list = (weft_vm_list_t*)results[0].ref.object;
  assert_int_equal(weft_vm_list_size(list), 4);
  assert_int_equal(results[1].i64, 77);
  weft_vm_value_t element;
  expect_error(weft_vm_list_get(list, 1, WEFT_VM_TYPE_F32, &element),
               WEFT_STATUS_INVALID_ARGUMENT, "holds i64, not f32");
  expect_error(weft_vm_list_get(list, 9, WEFT_VM_TYPE_I64, &element),
               WEFT_STATUS_OUT_OF_RANGE, "index 9 is past its size 4");
  expect_ok(weft_vm_list_get(list, 0, WEFT_VM_TYPE_REF, &element));
  assert_ptr_equal(element.ref.type, &kWeftVmListType);
  weft_vm_ref_release(element.ref);
  weft_vm_ref_release(results[0].ref);
  // Reading a list element as the wrong type fails the invocation.
  code[8].op = WEFT_VM_OP_LIST_GET_F64;
  expect_error(run(&bytecode, &arg, 1, results, 2),
               WEFT_STATUS_INVALID_ARGUMENT, "list.get.f64 at m.lists");
}

// A tiny budget makes run return before the end; running again finishes
// with the same result.
static void budget_yields_and_resumes(void** state) {
  const uint16_t operands[] = {0};
  weft_vm_instruction_t code[] = {
      IMM(CONST_I32, 1, 1),   // s1 = 1
      I(SUB_I32, 0, 0, 1),    // 1: s0 -= 1
      IMM(BR_IF, 0, 1),       // while s0
      IMM(RET, 0, 0),         // ret (s0)
  };
  static const uint8_t kTypes[] = {WEFT_VM_TYPE_I32, WEFT_VM_TYPE_I32};
  const weft_vm_function_t function = {"count", {1, 1, kTypes, NULL}, 2, 0, 0,
                                       4, 0};
  const weft_vm_bytecode_t bytecode = {
      .name = "m", .function_count = 1, .functions = &function,
      .code_count = 4, .code = code, .operand_count = 1,
      .operands = operands,
  };
  expect_ok(weft_vm_bytecode_validate(&bytecode));
  weft_vm_stack_t stack;
  weft_vm_stack_initialize(weft_allocator_system(), 0, &stack);
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I32, .i32 = 100};
  expect_ok(weft_vm_interpreter_begin(&stack, NULL, &bytecode, 0, &arg, 1));
  weft_vm_value_t result = {0};
  weft_vm_run_state_t run_state = WEFT_VM_RUN_YIELDED;
  int turns = 0;
  while (run_state == WEFT_VM_RUN_YIELDED) {
    expect_ok(weft_vm_interpreter_run(&stack, 10, &result, 1, &run_state));
    ++turns;
  }
  assert_int_equal(run_state, WEFT_VM_RUN_DONE);
  assert_int_equal(result.i32, 0);
  assert_in_range(turns, 10, 11);
  assert_int_equal(stack.depth, 0);
  weft_vm_stack_deinitialize(&stack);
}

// Arguments are checked against the signature before anything runs.
static void arguments_checked(void** state) {
  weft_vm_instruction_t code[] = {IMM(RET, 0, 0)};
  const uint16_t operands[] = {0};
  static const uint8_t kTypes[] = {WEFT_VM_TYPE_F32, WEFT_VM_TYPE_F32};
  const weft_vm_function_t function = {"id", {1, 1, kTypes, NULL}, 1, 0, 0,
                                       1, 0};
  const weft_vm_bytecode_t bytecode = {
      .name = "m", .function_count = 1, .functions = &function,
      .code_count = 1, .code = code, .operand_count = 1,
      .operands = operands,
  };
  weft_vm_value_t arg = {.type = WEFT_VM_TYPE_I32, .i32 = 1};
  weft_vm_value_t result;
  expect_error(run(&bytecode, &arg, 1, &result, 1),
               WEFT_STATUS_INVALID_ARGUMENT, "argument 0 is i32, not f32");
  expect_error(run(&bytecode, NULL, 0, &result, 1),
               WEFT_STATUS_INVALID_ARGUMENT, "takes 1 arguments, got 0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(integer_arithmetic_wraps),
      cmocka_unit_test(division_and_remainder),
      cmocka_unit_test(shifts_take_the_count_modulo_the_width),
      cmocka_unit_test(comparisons_and_nan),
      cmocka_unit_test(float_arithmetic),
      cmocka_unit_test(conversions_at_the_limits),
      cmocka_unit_test(select_picks_by_condition),
      cmocka_unit_test(loops_and_calls),
      cmocka_unit_test(stack_overflow_is_an_error),
      cmocka_unit_test(fail_carries_code_and_message),
      cmocka_unit_test(lists),
      cmocka_unit_test(budget_yields_and_resumes),
      cmocka_unit_test(arguments_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
