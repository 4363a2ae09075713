// Tests for src/vm/assembler and src/vm/disassembler: every opcode
// assembles, disassembles and re-assembles to the same module; encodings
// of each operand kind; malformed sources fail at the right line and
// column saying what was expected; allocation failures fail cleanly.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_compare.h"
#include "vm/assembler.h"
#include "vm/disassembler.h"
#include "vm/text_syntax.h"

// Assembles |text| or fails the test with the assembler's message.
static weft_vm_bytecode_t* assemble(const char* text) {
  weft_vm_bytecode_t* bytecode = NULL;
  weft_status_t status = weft_vm_assemble("t.wvm", text, strlen(text),
                                          weft_allocator_system(), &bytecode);
  if (!weft_status_is_ok(status)) {
    char message[1024];
    weft_status_format(status, message, sizeof(message));
    weft_status_free(status);
    fail_msg("did not assemble: %s\n%s", message, text);
  }
  return bytecode;
}

// Disassembles |bytecode| or fails the test.
static char* disassemble(const weft_vm_bytecode_t* bytecode) {
  char* text = NULL;
  size_t length = 0;
  weft_status_t status =
      weft_vm_disassemble(bytecode, weft_allocator_system(), &text, &length);
  if (!weft_status_is_ok(status)) {
    char message[1024];
    weft_status_format(status, message, sizeof(message));
    weft_status_free(status);
    fail_msg("did not disassemble: %s", message);
  }
  assert_int_equal(strlen(text), length);
  return text;
}

// text -> module -> text -> module: the modules are equal and the second
// disassembly is the first.
static void expect_round_trip(const char* text) {
  weft_vm_bytecode_t* first = assemble(text);
  char* first_text = disassemble(first);
  weft_vm_bytecode_t* second = assemble(first_text);
  char why[256];
  if (!weft_vm_test_modules_equal(first, second, false, why, sizeof(why))) {
    fail_msg("round trip changed the module: %s\n%s", why, first_text);
  }
  char* second_text = disassemble(second);
  assert_string_equal(first_text, second_text);
  free(second_text);
  free(first_text);
  weft_vm_bytecode_free(weft_allocator_system(), second);
  weft_vm_bytecode_free(weft_allocator_system(), first);
}

// Appends to a fixed-size text buffer.
typedef struct text_buffer_t {
  char data[1 << 16];
  size_t length;
} text_buffer_t;

static void append(text_buffer_t* buffer, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int length =
      vsnprintf(buffer->data + buffer->length,
                sizeof(buffer->data) - buffer->length, format, args);
  va_end(args);
  assert_true(length >= 0 &&
              buffer->length + (size_t)length < sizeof(buffer->data));
  buffer->length += (size_t)length;
}

// Writes one operand of syntax |kind| (the |index|th of its instruction).
static void append_operand(text_buffer_t* buffer,
                           const weft_vm_opcode_info_t* info, char kind,
                           int index) {
  const bool is_float = weft_vm_opcode_immediate_is_float(info);
  switch (kind) {
    case 's': append(buffer, "s%d", index + 1); break;
    case 'r': append(buffer, "r%d", index + 1); break;
    case 'S': append(buffer, "s%d", index + 4); break;
    case 'i': append(buffer, is_float ? "1.5" : "-5"); break;
    case 'k': append(buffer, is_float ? "-2.25" : "123456789012"); break;
    case 'd': append(buffer, "blob"); break;
    case 'j': append(buffer, "top"); break;
    case 'c': append(buffer, "@callee(s1, r1) -> (s2, r2)"); break;
    case 'm': append(buffer, "host.callee(s3, r3) -> (s4, r4)"); break;
    case 't': append(buffer, "(s1, r1)"); break;
    case 'e': append(buffer, "INVALID_ARGUMENT"); break;
    case 'M': append(buffer, "\"message %d\\n\"", index); break;
    default: fail_msg("operand kind '%c' has no test text", kind);
  }
}

// One function holding every opcode of the table, with each operand
// written as its shape's syntax says.
static void every_opcode_round_trips(void** state) {
  static text_buffer_t buffer;
  buffer.length = 0;
  append(&buffer,
         "module every\n"
         "import host.callee (i32, r) -> (i32, r<list>?)\n"
         "rodata blob \"abc\"\n"
         "func @callee(i32, r) -> (i32, r)\n"
         "  ret (s0, r0)\n"
         "end\n"
         "func @every(i32, r) -> (i32, r) export\n"
         "top:\n");
  for (uint32_t op = 0; op < WEFT_VM_OP_COUNT_; ++op) {
    const weft_vm_opcode_info_t* info = &kWeftVmOpcodes[op];
    const char* syntax = weft_vm_shape_syntax(info->shape);
    assert_non_null(syntax);
    append(&buffer, "  %s", info->name);
    for (int i = 0; syntax[i]; ++i) {
      append(&buffer, i ? ", " : " ");
      append_operand(&buffer, info, syntax[i], i);
    }
    append(&buffer, "\n");
  }
  append(&buffer, "  ret (s1, r1)\nend\n");

  weft_vm_bytecode_t* bytecode = assemble(buffer.data);
  assert_int_equal(bytecode->function_count, 2);
  const weft_vm_function_t* every = &bytecode->functions[1];
  assert_int_equal(every->code_count, WEFT_VM_OP_COUNT_ + 1);
  for (uint32_t op = 0; op < WEFT_VM_OP_COUNT_; ++op) {
    assert_int_equal(bytecode->code[every->code_offset + op].op, op);
    assert_int_equal(bytecode->lines[every->code_offset + op], 9 + op);
  }
  char* text = disassemble(bytecode);
  for (uint32_t op = 0; op < WEFT_VM_OP_COUNT_; ++op) {
    char needle[64];
    snprintf(needle, sizeof(needle), "  %s", kWeftVmOpcodes[op].name);
    assert_non_null(strstr(text, needle));
  }
  free(text);
  weft_vm_bytecode_free(weft_allocator_system(), bytecode);
  expect_round_trip(buffer.data);
}

// Each operand kind lands in the field its shape names.
static void encodings(void** state) {
  weft_vm_bytecode_t* bytecode = assemble(
      "module enc  ; comment\n"
      "rodata greeting \"hi\\x00\\t\\\"\\\\\"\n"
      "rodata raw hex \"00 ff 7F\"\n"
      "func @f(i32, r<list>, f64) -> (i64) export\n"
      "  add.i32 s2, s0, s1\n"
      "  const.i32 s3, -5\n"
      "  const.i32 s3, 0xffffffff\n"
      "  const.f32 s3, 1.5\n"
      "  const.f32 s3, -inf\n"
      "  const.i64 s4, 123\n"
      "  const.f64 s5, 2.5\n"
      "  const.i64 s6, 123\n"
      "  select s7, s1, s2, s3\n"
      "  rodata r1, raw\n"
      "  list.get.i32 s8, r0, s2\n"
      "  call @f(s0, r0, s1) -> (s9)\n"
      "  fail INVALID_ARGUMENT, \"bad \\\"input\\\"\"\n"
      "  fail 5, greeting\n"
      "  ret (s4)\n"
      "end\n");
  const weft_vm_instruction_t* code = bytecode->code;
  assert_string_equal(bytecode->name, "enc");
  assert_string_equal(bytecode->source_name, "t.wvm");
  assert_int_equal(bytecode->functions[0].flags, WEFT_VM_FUNCTION_FLAG_EXPORT);
  assert_int_equal(bytecode->functions[0].scalar_count, 10);
  assert_int_equal(bytecode->functions[0].ref_count, 2);
  assert_string_equal(bytecode->functions[0].signature.text,
                      "(i32,r<list>,f64)->(i64)");
  assert_int_equal(code[0].op, WEFT_VM_OP_ADD_I32);
  assert_int_equal(code[0].a, 2);
  assert_int_equal(code[0].b, 0);
  assert_int_equal(code[0].c, 1);
  assert_int_equal(code[1].imm, 0xfffffffbu);
  assert_int_equal(code[2].imm, 0xffffffffu);
  assert_int_equal(code[3].imm, 0x3fc00000u);
  assert_int_equal(code[4].imm, 0xff800000u);
  // 64-bit constants are pooled: 123 twice is one entry.
  assert_int_equal(bytecode->constant_count, 2);
  assert_int_equal(code[5].imm, 0);
  assert_int_equal(code[7].imm, 0);
  assert_int_equal(bytecode->constants[0], 123);
  assert_int_equal(bytecode->constants[1], 0x4004000000000000ull);
  // select: all three sources in the operand list.
  assert_int_equal(code[8].a, 7);
  assert_int_equal(bytecode->operands[code[8].imm], 1);
  assert_int_equal(bytecode->operands[code[8].imm + 1], 2);
  assert_int_equal(bytecode->operands[code[8].imm + 2], 3);
  assert_int_equal(code[9].imm, 1);  // rodata "raw"
  assert_int_equal(code[10].a, 8);
  assert_int_equal(code[10].b, 0);
  assert_int_equal(code[10].c, 2);
  // call: function 0, arguments then results.
  assert_int_equal(code[11].a, 0);
  const uint16_t* call = &bytecode->operands[code[11].imm];
  assert_int_equal(call[0], 0);
  assert_int_equal(call[1], 0);
  assert_int_equal(call[2], 1);
  assert_int_equal(call[3], 9);
  // fail: the message is an anonymous segment after the named ones.
  assert_int_equal(code[12].a, WEFT_STATUS_INVALID_ARGUMENT);
  assert_int_equal(code[12].imm, 2);
  assert_int_equal(bytecode->rodata_count, 3);
  assert_null(bytecode->rodata_names[2]);
  assert_string_equal(bytecode->rodata_names[0], "greeting");
  const weft_vm_rodata_t message = bytecode->rodata[2];
  assert_int_equal(message.length, strlen("bad \"input\""));
  assert_memory_equal(bytecode->rodata_bytes + message.offset, "bad \"input\"",
                      message.length);
  assert_int_equal(code[13].a, 5);
  assert_int_equal(code[13].imm, 0);
  assert_memory_equal(bytecode->rodata_bytes + bytecode->rodata[0].offset,
                      "hi\0\t\"\\", 6);
  assert_int_equal(bytecode->rodata[1].length, 3);
  assert_memory_equal(bytecode->rodata_bytes + bytecode->rodata[1].offset,
                      "\x00\xff\x7f", 3);
  assert_int_equal(bytecode->lines[0], 5);
  assert_int_equal(bytecode->lines[14], 19);
  weft_vm_bytecode_free(weft_allocator_system(), bytecode);
}

// Floats keep their exact bits through the text, NaN payloads and signed
// zeros included.
static void float_bits_round_trip(void** state) {
  static const uint32_t kF32[] = {
      0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu, 0x7f7fffffu,
      0x3dcccccdu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
      0x7f800001u, 0xffbfffffu, 0x7fc00001u, 0x3f800001u};
  static const uint64_t kF64[] = {0x0000000000000000ull, 0x8000000000000000ull,
                                  0x0000000000000001ull, 0x7fefffffffffffffull,
                                  0x3fb999999999999aull, 0x7ff0000000000000ull,
                                  0xfff8000000000000ull, 0x7ff0000000000001ull,
                                  0x7ff8000000000001ull, 0x3ff0000000000001ull};
  for (size_t i = 0; i < sizeof(kF32) / sizeof(kF32[0]); ++i) {
    char text[64];
    weft_vm_text_format_float(kF32[i], 32, text, sizeof(text));
    uint64_t bits = 0;
    assert_true(weft_vm_text_parse_float(text, strlen(text), 32, &bits));
    if (bits != kF32[i])
      fail_msg("f32 0x%08x -> '%s' -> 0x%08llx", kF32[i], text,
               (unsigned long long)bits);
  }
  for (size_t i = 0; i < sizeof(kF64) / sizeof(kF64[0]); ++i) {
    char text[64];
    weft_vm_text_format_float(kF64[i], 64, text, sizeof(text));
    uint64_t bits = 0;
    assert_true(weft_vm_text_parse_float(text, strlen(text), 64, &bits));
    if (bits != kF64[i])
      fail_msg("f64 0x%016llx -> '%s'", (unsigned long long)kF64[i], text);
  }
  expect_round_trip(
      "module floats\n"
      "func @f() -> ()\n"
      "  const.f32 s0, nan:0x1\n"
      "  const.f32 s0, -nan\n"
      "  const.f32 s0, -0.0\n"
      "  const.f32 s0, 0x1.8p1\n"
      "  const.f32 s0, 1e-45\n"
      "  const.f64 s0, nan:0x8000000000001\n"
      "  const.f64 s0, -0\n"
      "  const.f64 s0, 1.7976931348623157e308\n"
      "  ret ()\n"
      "end\n");
}

// Modules with every item: labels, imports, rodata in both spellings,
// fail messages with named and anonymous segments, the doc example.
static void items_round_trip(void** state) {
  expect_round_trip(
      "; the example of docs/VM.md\n"
      "module mlp\n"
      "\n"
      "import hal.buffer_view.create (r<hal.buffer>, i64, i32, i32) -> "
      "(r<hal.buffer_view>)\n"
      "\n"
      "rodata name \"a string with \\n escapes\"\n"
      "rodata weights hex \"00 01 02 ff\"\n"
      "\n"
      "func @dense(r<hal.buffer_view>, i32) -> (r<hal.buffer_view>) export\n"
      "  const.i32 s1, 3\n"
      "loop:\n"
      "  add.i32 s0, s0, s1\n"
      "  lt.i32.s s2, s0, s1\n"
      "  br_if s2, loop\n"
      "  br_unless s2, out\n"
      "  fail DEADLINE_EXCEEDED, \"late\"\n"
      "out: ret (r0)\n"
      "end\n"
      "rodata later \"declared after a function\"\n"
      "func @g() -> () \n"
      "  fail 3, later\n"
      "  fail UNKNOWN, \"\"\n"
      "end\n");
}

// A malformed source and where and what the error must say.
typedef struct malformed_t {
  const char* source;
  int line;
  int column;
  const char* needle;
} malformed_t;

#define M "module m\n"
#define F "module m\nfunc @f() -> ()\n"

// Declarations: a function of a view, a scalar and a buffer.
#define D "module m\nfunc @f(r<hal.buffer_view>, i32, r<hal.buffer>) -> (r)\n"
#define DE "  ret (r0)\nend\n"

static const malformed_t kMalformed[] = {
    {D "  arg x: k f32\n" DE, 3, 10,
     "expected a dimension (a size, '?' or a symbol [A-Z][A-Z0-9_]*), found "
     "'k'"},
    {D "  arg x: 8xk f32\n" DE, 3, 12, "expected a dimension"},
    {D "  arg x: K f33\n" DE, 3, 12,
     "expected an element type (f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64), "
     "found 'f33'"},
    {D "  arg x: Kxf32\n" DE, 3, 12,
     "expected a space between the dimensions and the element type (KxN "
     "f32), found 'f32'"},
    {D "  arg x: K\n" DE, 3, 11,
     "expected a space and an element type after the dimensions (KxN f32), "
     "found end of line"},
    {D "  arg x: Kx f32\n" DE, 3, 12, "expected a dimension"},
    {D "  arg x:\n" DE, 3, 9, "expected a tensor type"},
    {D "  arg x K f32\n" DE, 3, 9,
     "expected ':' and a tensor type, or end of line, found 'K'"},
    {D "  arg x: f32 i8\n" DE, 3, 14,
     "expected end of line after the tensor type, found 'i8'"},
    {D "  arg x: 1x2x3x4x5x6x7x8x9 f32\n" DE, 3, 26,
     "expected at most 8 dimensions (a buffer view's rank), found '9'"},
    {D "  arg x: 08x4 f32\n" DE, 3, 10,
     "expected a size (decimal, no leading zeros, at most "
     "9223372036854775807), found '08'"},
    {D "  arg x: 9223372036854775808 f32\n" DE, 3, 10, "expected a size"},
    {D "  arg 2x\n" DE, 3, 7,
     "expected a value name ([A-Za-z_][A-Za-z0-9_]*), found '2x'"},
    {D "  arg a.b\n" DE, 3, 7, "expected a value name"},
    {D "  arg x\n  arg n: f32\n" DE, 4, 8,
     "expected end of line after 'arg n' (argument 2 of '@f' is i32: only "
     "r<hal.buffer_view> and r values take a tensor type), found ':'"},
    {D "  arg x\n  arg n\n  arg b: 4 u8\n" DE, 5, 8,
     "(argument 3 of '@f' is r<hal.buffer>: only r<hal.buffer_view> and r "
     "values take a tensor type), found ':'"},
    {D "  arg x\n  arg x\n" DE, 4, 7,
     "expected a new value name (argument 1 of '@f' has this one), found 'x'"},
    {D "  arg x\n  arg n\n  arg b\n  result x\n" DE, 6, 10,
     "expected a new value name (argument 1 of '@f' has this one)"},
    {D "  arg x\n" DE, 4, 3,
     "expected 'arg' for argument 2 of '@f' "
     "(r<hal.buffer_view>,i32,r<hal.buffer>)->(r) (declare every argument or "
     "none), found 'ret'"},
    {D "  arg x\n  result y\n" DE, 4, 3,
     "expected 'arg' for argument 2 of '@f'"},
    {D "  arg x\nl: " DE, 4, 1, "expected 'arg' for argument 2 of '@f'"},
    {D "  arg x\n  arg n\n  arg b\n  arg c\n" DE, 6, 3,
     "expected 'result' or an instruction ('@f' has 3 arguments, each "
     "declared), found 'arg'"},
    {D "  result y\n  result z\n" DE, 4, 3,
     "expected an instruction ('@f' has 1 results, each declared), found "
     "'result'"},
    {D "  result y\n  arg x\n" DE, 4, 3,
     "expected 'result' or an instruction ('arg' lines come before 'result' "
     "lines), found 'arg'"},
    {D "  nop\n  arg x\n" DE, 4, 3,
     "expected an instruction, a label or 'end' ('arg' and 'result' lines go "
     "before the function's first instruction), found 'arg'"},
    {M "func @f(i32) -> ()\n  arg n: f32\n  ret ()\nend\n", 3, 8,
     "(argument 1 of '@f' is i32: only r<hal.buffer_view> and r values take "
     "a tensor type)"},
    {F "  addd.i32 s0, s0, s0\n  ret ()\nend\n", 3, 3,
     "expected an opcode (did you mean 'add.i32'?), found unknown opcode "
     "'addd.i32'"},
    {F "  add.i32 s0, s1\n", 3, 17,
     "expected ',' and operand 3 of 'add.i32 sN, sN, sN', found end of line"},
    {F "  add.i32 s0, s1, s2, s3\n", 3, 21, "expected end of line after"},
    {F "  add.i32 s0, r1, s2\n", 3, 15,
     "expected a scalar register (sN), found 'r1'"},
    {F "  mov.ref r0, s1\n", 3, 15, "expected a ref register (rN), found 's1'"},
    {F "  mov s65535, s0\n", 3, 7,
     "expected a register number up to 65534, found 's65535'"},
    {F "  const.i32 s0, 4294967296\n", 3, 17, "expected a 32-bit integer"},
    {F "  const.i32 s0, abc\n", 3, 17, "expected a 32-bit integer"},
    {F "  const.i32 s0, 0x100000000\n", 3, 17, "expected a 32-bit integer"},
    {F "  const.i64 s0, 18446744073709551616\n", 3, 17,
     "expected a 64-bit integer"},
    {F "  const.f32 s0, 1.5x\n", 3, 17, "expected a 32-bit float"},
    {F "  const.i32 s0\n", 3, 15, "expected ',' and operand 2"},
    {F "  add.i32\n", 3, 10, "expected the operands of 'add.i32"},
    {F "  br nowhere\n  ret ()\nend\n", 3, 6,
     "expected a label defined in '@f', found 'nowhere'"},
    {F "a:\na:\n  ret ()\nend\n", 4, 1, "expected a new label name"},
    {F "  br x\nx:\nend\n", 3, 6,
     "expected a label followed by an instruction"},
    {F "  ret ()\nend\nfunc @f() -> ()\n", 5, 7,
     "expected a new function name (this one is taken), found 'f'"},
    {M "rodata x \"a\"\nrodata x \"b\"\n", 3, 8,
     "expected a new rodata segment name"},
    {M "import h.f () -> ()\nimport h.f () -> ()\n", 3, 8,
     "expected a new import name"},
    {M "import hal () -> ()\n", 2, 8, "expected MODULE.FUNCTION"},
    {M "import hal.2d () -> ()\n", 2, 8, "expected MODULE.FUNCTION"},
    {F "  call @g() -> ()\n  ret ()\nend\n", 3, 8,
     "expected a function defined in this module, found '@g'"},
    {M "func @g(i32) -> ()\n  ret ()\nend\nfunc @f() -> ()\n"
       "  call @g() -> ()\n  ret ()\nend\n",
     6, 10, "expected 1 arguments for '@g' (i32)->(), found 0"},
    {M "func @g(i32) -> ()\n  ret ()\nend\nfunc @f() -> ()\n"
       "  call @g(r0) -> ()\n  ret ()\nend\n",
     6, 11, "expected a scalar (sN) register for arguments 1 of '@g'"},
    {M "func @g(i32) -> ()\n  ret ()\nend\nfunc @f() -> ()\n"
       "  call @g(s0) -> (s1)\n  ret ()\nend\n",
     6, 18, "expected 0 results for '@g'"},
    {F "  call.import h.g() -> ()\n  ret ()\nend\n", 3, 15,
     "expected an imported function (import MODULE.FUNCTION SIGNATURE), "
     "found 'h.g'"},
    {F "  call @f(), ()\n", 3, 12, "expected '->' and the results"},
    {F "  ret ()\n", 4, 1,
     "expected 'end' to close function '@f' (line 2), "
     "found end of file"},
    {F "  ret ()\nend x\n", 4, 5,
     "expected end of line after 'end', found 'x'"},
    {M "rodata x \"a\\qb\"\n", 2, 12, "expected an escape"},
    {M "rodata x \"a\\x4\"\n", 2, 12, "expected two hex digits after '\\x'"},
    {M "rodata x hex \"0g\"\n", 2, 15, "expected two hex digits per byte"},
    {M "rodata x \"abc\n", 2, 14, "expected '\"' to close the string"},
    {M "rodata x 'abc'\n", 2, 10, "expected a string (\"...\")"},
    {M "func @f(i32, q) -> ()\n  ret ()\nend\n", 2, 14,
     "expected a type (i32, i64, f32, f64, r, r<NAME>)"},
    {M "func @f(i32) (i32)\n  ret ()\nend\n", 2, 14, "expected '->'"},
    {"func @f() -> ()\n  ret ()\nend\n", 1, 1,
     "expected 'module NAME' before any other item, found 'func'"},
    {"nop\n", 1, 1, "expected 'module NAME' first, found 'nop'"},
    {"", 1, 1, "expected 'module NAME', found end of file"},
    {"; only a comment\n", 2, 1, "expected 'module NAME', found end of file"},
    {M "module n\n", 2, 1, "expected one 'module' line (the first is line 1)"},
    {"module a.b\n", 1, 8, "expected a module name"},
    {M "nop\n", 2, 1, "expected 'import', 'rodata' or 'func'"},
    {M "func @f() -> (i32)\n  ret ()\nend\n", 3, 7,
     "expected 1 results for '@f'"},
    {M "func @f() -> (r)\n  ret (s0)\nend\n", 3, 8,
     "expected a ref (rN) register for results 1 of '@f'"},
    {F "  fail NOPE, \"x\"\n", 3, 8, "expected a status code"},
    {F "  fail 0, \"x\"\n", 3, 8, "expected a status code"},
    {F "  rodata r0, nothing\n  ret ()\nend\n", 3, 14,
     "expected a rodata segment name (rodata NAME \"...\"), found 'nothing'"},
    {F "  nop\nend\n", 3, 3,
     "expected br, ret or fail as the last instruction of '@f'"},
    {F "end\n", 3, 1, "expected an instruction in function '@f'"},
    {F "  func @g() -> ()\n", 3, 3, "found unknown opcode 'func'"},
    {F "  ? s0\n", 3, 3,
     "expected an instruction, a label or 'end', found '?'"},
    {F "  mov s01, s0\n", 3, 7, "expected a scalar register (sN), found 's01'"},
    {M "func f() -> ()\n", 2, 6, "expected '@' and a function name"},
    {M "func @f() -> () exported\n", 2, 17,
     "expected end of line after the signature (or 'export')"},
};

static void malformed_sources_fail_where_they_are_wrong(void** state) {
  for (size_t i = 0; i < sizeof(kMalformed) / sizeof(kMalformed[0]); ++i) {
    const malformed_t* test = &kMalformed[i];
    weft_vm_bytecode_t* bytecode = NULL;
    weft_status_t status =
        weft_vm_assemble("t.wvm", test->source, strlen(test->source),
                         weft_allocator_system(), &bytecode);
    const char* message = weft_status_message(status);
    char where[64];
    snprintf(where, sizeof(where), "t.wvm:%d:%d: expected ", test->line,
             test->column);
    if (weft_status_code(status) != WEFT_STATUS_INVALID_ARGUMENT ||
        strncmp(message, where, strlen(where)) != 0 ||
        !strstr(message, test->needle)) {
      fail_msg(
          "case %zu: expected INVALID_ARGUMENT '%s...%s', got %s: '%s'\n"
          "source:\n%s",
          i, where, test->needle,
          weft_status_code_string(weft_status_code(status)), message,
          test->source);
    }
    assert_null(bytecode);
    weft_status_free(status);
  }
  assert_true(sizeof(kMalformed) / sizeof(kMalformed[0]) >= 25);
}

// Declarations: every kind of dimension, symbols shared between
// arguments and results, rank 0, names only, results only; kept as
// written and printed back the same.
static void declarations_round_trip(void** state) {
  static const char kText[] =
      "module decl\n"
      "func @f(r<hal.buffer_view>, r, i32, r<hal.buffer_view>?) -> "
      "(r<hal.buffer_view>, i64) export\n"
      "  arg x: K f32  ; a comment\n"
      "  arg w:KxN_2  f32\n"
      "  arg n\n"
      "  arg z: ?x8x0 i8\n"
      "  result y: N_2 f32\n"
      "  result count\n"
      "  ret (r0, s1)\n"
      "end\n"
      "func @g() -> (r)\n"
      "  result s: u64\n"
      "  ret (r0)\n"
      "end\n"
      "func @h(i32) -> ()\n"
      "  ret ()\n"
      "end\n";
  weft_vm_bytecode_t* bytecode = assemble(kText);
  const weft_vm_function_decls_t* f =
      weft_vm_bytecode_function_decls(bytecode, 0);
  assert_non_null(f);
  assert_int_equal(f->symbol_count, 2);
  assert_string_equal(f->symbols[0], "K");
  assert_string_equal(f->symbols[1], "N_2");
  assert_string_equal(f->args[0].name, "x");
  assert_int_equal(f->args[0].element_type, WEFT_VM_ELEMENT_TYPE_F32);
  assert_int_equal(f->args[0].rank, 1);
  assert_int_equal(f->args[0].dims[0].kind, WEFT_VM_DIM_SYMBOL);
  assert_int_equal(f->args[0].dims[0].symbol, 0);
  assert_int_equal(f->args[1].rank, 2);
  assert_int_equal(f->args[1].dims[1].symbol, 1);
  assert_string_equal(f->args[2].name, "n");
  assert_int_equal(f->args[2].element_type, WEFT_VM_ELEMENT_TYPE_NONE);
  assert_int_equal(f->args[3].element_type, WEFT_VM_ELEMENT_TYPE_I8);
  assert_int_equal(f->args[3].rank, 3);
  assert_int_equal(f->args[3].dims[0].kind, WEFT_VM_DIM_DYNAMIC);
  assert_int_equal(f->args[3].dims[1].kind, WEFT_VM_DIM_STATIC);
  assert_int_equal(f->args[3].dims[1].size, 8);
  assert_int_equal(f->args[3].dims[2].size, 0);
  assert_string_equal(f->results[0].name, "y");
  assert_int_equal(f->results[0].dims[0].kind, WEFT_VM_DIM_SYMBOL);
  assert_int_equal(f->results[0].dims[0].symbol, 1);
  assert_string_equal(f->results[1].name, "count");
  const weft_vm_function_decls_t* g =
      weft_vm_bytecode_function_decls(bytecode, 1);
  assert_non_null(g);
  assert_null(g->args);
  assert_int_equal(g->results[0].element_type, WEFT_VM_ELEMENT_TYPE_U64);
  assert_int_equal(g->results[0].rank, 0);
  assert_null(weft_vm_bytecode_function_decls(bytecode, 2));
  assert_non_null(bytecode->function_decls);
  char* text = disassemble(bytecode);
  assert_non_null(strstr(text,
                         "export\n  arg x: K f32\n  arg w: KxN_2 f32\n"
                         "  arg n\n  arg z: ?x8x0 i8\n  result y: N_2 f32\n"
                         "  result count\n  ret (r0, s1)\n"));
  assert_non_null(strstr(text, "->(r)\n  result s: u64\n  ret (r0)\n"));
  free(text);
  weft_vm_bytecode_free(weft_allocator_system(), bytecode);
  expect_round_trip(kText);
}

// Bytes that are not text (NUL, high bytes, CRLF line ends) are errors or
// plain text, never a crash.
static void odd_bytes(void** state) {
  static const char kCrlf[] =
      "module m\r\nfunc @f() -> ()\r\n  ret ()\r\nend\r\n";
  weft_vm_bytecode_t* bytecode = assemble(kCrlf);
  weft_vm_bytecode_free(weft_allocator_system(), bytecode);
  static const char kNul[] = "module m\nfunc @f() -> ()\n  r\0et ()\nend\n";
  weft_status_t status = weft_vm_assemble("t.wvm", kNul, sizeof(kNul) - 1,
                                          weft_allocator_system(), &bytecode);
  assert_true(weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT));
  assert_non_null(strstr(weft_status_message(status), "t.wvm:3:3:"));
  weft_status_free(status);
  status = weft_vm_assemble(NULL, NULL, 0, weft_allocator_system(), &bytecode);
  assert_true(weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT));
  assert_non_null(strstr(weft_status_message(status), "<text>:1:1:"));
  weft_status_free(status);
}

// Every allocation the assembler and disassembler make may fail: each
// failure is RESOURCE_EXHAUSTED with nothing leaked (the asan preset
// checks), and a later success gives the same module.
static void allocation_failures(void** state) {
  static const char kText[] =
      "module alloc\nimport h.x (i32) -> (i32)\nrodata d \"abc\"\n"
      "func @f(i32) -> (i32)\n  const.i64 s1, 7\nl:\n"
      "  call.import h.x(s0) -> (s0)\n  br_if s0, l\n"
      "  fail INTERNAL, \"m\"\nend\n";
  bool assembled = false;
  for (int64_t fail_at = 0; !assembled; ++fail_at) {
    assert_true(fail_at < 1000);
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    weft_vm_bytecode_t* bytecode = NULL;
    weft_status_t status =
        weft_vm_assemble("t.wvm", kText, strlen(kText), allocator, &bytecode);
    if (weft_status_is_ok(status)) {
      assembled = true;
      // The disassembler fails cleanly the same way.
      for (int64_t text_fail_at = 0;; ++text_fail_at) {
        assert_true(text_fail_at < 1000);
        weft_failing_allocator_t text_storage;
        weft_allocator_t text_allocator = weft_failing_allocator_initialize(
            weft_allocator_system(), text_fail_at, &text_storage);
        char* text = NULL;
        size_t length = 0;
        weft_status_t text_status =
            weft_vm_disassemble(bytecode, text_allocator, &text, &length);
        if (weft_status_is_ok(text_status)) {
          weft_allocator_free(text_allocator, text);
          break;
        }
        assert_true(
            weft_status_is(text_status, WEFT_STATUS_RESOURCE_EXHAUSTED));
        assert_null(text);
        weft_status_free(text_status);
      }
      weft_vm_bytecode_free(allocator, bytecode);
    } else {
      assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
      assert_null(bytecode);
      weft_status_free(status);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_opcode_round_trips),
      cmocka_unit_test(encodings),
      cmocka_unit_test(float_bits_round_trip),
      cmocka_unit_test(items_round_trip),
      cmocka_unit_test(declarations_round_trip),
      cmocka_unit_test(malformed_sources_fail_where_they_are_wrong),
      cmocka_unit_test(odd_bytes),
      cmocka_unit_test(allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
