// weft VM: the instruction set, written once.
//
// Every instruction is 8 bytes: an opcode, a reserved byte, a 16-bit
// operand |a| and either two 16-bit operands |b| and |c| or one 32-bit
// immediate. What the operands mean is the opcode's shape; the assembler,
// the disassembler, the validator and the interpreter all read the table
// below (docs/VM.md lists it with the semantics).
//
// Registers are per frame, in two files: scalar registers (s0, s1, ...; 64
// bits each, holding an i32, i64, f32 or f64 as the instruction says; i32
// and f32 results zero the upper half) and ref registers (r0, r1, ...;
// counted references to objects of a registered type, or null). Typed
// instructions make the scalar file safe without tags: any bits are a valid
// value of every type.
//
// Operands that do not fit an instruction (a call's arguments and results,
// select's three sources) live in the function's operand list: the
// instruction's immediate is the index of the first entry.
#ifndef WEFT_VM_ISA_H_
#define WEFT_VM_ISA_H_

#include <stdint.h>

// Operand shapes. S: scalar register, R: ref register; the first letter is
// |a| (the destination when the instruction writes one).
typedef enum weft_vm_shape_e {
  WEFT_VM_SHAPE_NONE = 0,  // no operands
  WEFT_VM_SHAPE_S_S,       // a = op(b)
  WEFT_VM_SHAPE_S_SS,      // a = op(b, c)
  // a = op(operands[imm], operands[imm + 1], operands[imm + 2]): the
  // three sources live in the operand list (|b| would overlap |imm|).
  WEFT_VM_SHAPE_S_SSS,
  WEFT_VM_SHAPE_S_I32,     // a = 32-bit immediate (i32 or f32 bits)
  WEFT_VM_SHAPE_S_K,       // a = constants[imm] (64-bit constant pool)
  WEFT_VM_SHAPE_R,         // a (ref) = null
  WEFT_VM_SHAPE_R_R,       // a (ref) = op(b (ref))
  WEFT_VM_SHAPE_R_D,       // a (ref) = rodata segment imm
  WEFT_VM_SHAPE_S_R,       // a = op(b (ref))
  WEFT_VM_SHAPE_R_S,       // op(a (ref), b)
  WEFT_VM_SHAPE_S_RS,      // a = op(b (ref), c)
  WEFT_VM_SHAPE_R_SS,      // op(a (ref), b, c)
  WEFT_VM_SHAPE_R_RS,      // a (ref) = op(b (ref), c)
  WEFT_VM_SHAPE_R_SR,      // op(a (ref), b, c (ref))
  WEFT_VM_SHAPE_J,         // jump to instruction imm
  WEFT_VM_SHAPE_S_J,       // jump to instruction imm depending on a
  WEFT_VM_SHAPE_CALL,      // call function a; operands[imm...]: args, rets
  WEFT_VM_SHAPE_CALL_IMPORT,  // call import a; operands as CALL
  WEFT_VM_SHAPE_RET,       // return operands[imm...] (the signature's rets)
  WEFT_VM_SHAPE_FAIL,      // fail with status code a, message rodata imm
  WEFT_VM_SHAPE_COUNT_,
} weft_vm_shape_t;

// X(ENUM_SUFFIX, "text name", SHAPE_SUFFIX)
#define WEFT_VM_OPCODES(X)                          \
  X(NOP, "nop", NONE)                               \
  /* Moves and constants. */                        \
  X(MOV, "mov", S_S)                                \
  X(MOV_REF, "mov.ref", R_R)                        \
  X(CONST_I32, "const.i32", S_I32)                  \
  X(CONST_F32, "const.f32", S_I32)                  \
  X(CONST_I64, "const.i64", S_K)                    \
  X(CONST_F64, "const.f64", S_K)                    \
  X(CONST_NULL, "const.null", R)                    \
  X(RODATA, "rodata", R_D)                          \
  X(SELECT, "select", S_SSS)                        \
  X(REF_IS_NULL, "ref.is_null", S_R)                \
  /* i32 arithmetic (wrapping). */                  \
  X(ADD_I32, "add.i32", S_SS)                       \
  X(SUB_I32, "sub.i32", S_SS)                       \
  X(MUL_I32, "mul.i32", S_SS)                       \
  X(DIV_I32_S, "div.i32.s", S_SS)                   \
  X(DIV_I32_U, "div.i32.u", S_SS)                   \
  X(REM_I32_S, "rem.i32.s", S_SS)                   \
  X(REM_I32_U, "rem.i32.u", S_SS)                   \
  X(AND_I32, "and.i32", S_SS)                       \
  X(OR_I32, "or.i32", S_SS)                         \
  X(XOR_I32, "xor.i32", S_SS)                       \
  X(SHL_I32, "shl.i32", S_SS)                       \
  X(SHR_I32_S, "shr.i32.s", S_SS)                   \
  X(SHR_I32_U, "shr.i32.u", S_SS)                   \
  X(NOT_I32, "not.i32", S_S)                        \
  X(NEG_I32, "neg.i32", S_S)                        \
  /* i64 arithmetic (wrapping). */                  \
  X(ADD_I64, "add.i64", S_SS)                       \
  X(SUB_I64, "sub.i64", S_SS)                       \
  X(MUL_I64, "mul.i64", S_SS)                       \
  X(DIV_I64_S, "div.i64.s", S_SS)                   \
  X(DIV_I64_U, "div.i64.u", S_SS)                   \
  X(REM_I64_S, "rem.i64.s", S_SS)                   \
  X(REM_I64_U, "rem.i64.u", S_SS)                   \
  X(AND_I64, "and.i64", S_SS)                       \
  X(OR_I64, "or.i64", S_SS)                         \
  X(XOR_I64, "xor.i64", S_SS)                       \
  X(SHL_I64, "shl.i64", S_SS)                       \
  X(SHR_I64_S, "shr.i64.s", S_SS)                   \
  X(SHR_I64_U, "shr.i64.u", S_SS)                   \
  X(NOT_I64, "not.i64", S_S)                        \
  X(NEG_I64, "neg.i64", S_S)                        \
  /* Float arithmetic (IEEE 754, round to nearest). */ \
  X(ADD_F32, "add.f32", S_SS)                       \
  X(SUB_F32, "sub.f32", S_SS)                       \
  X(MUL_F32, "mul.f32", S_SS)                       \
  X(DIV_F32, "div.f32", S_SS)                       \
  X(MIN_F32, "min.f32", S_SS)                       \
  X(MAX_F32, "max.f32", S_SS)                       \
  X(NEG_F32, "neg.f32", S_S)                        \
  X(ABS_F32, "abs.f32", S_S)                        \
  X(SQRT_F32, "sqrt.f32", S_S)                      \
  X(ADD_F64, "add.f64", S_SS)                       \
  X(SUB_F64, "sub.f64", S_SS)                       \
  X(MUL_F64, "mul.f64", S_SS)                       \
  X(DIV_F64, "div.f64", S_SS)                       \
  X(MIN_F64, "min.f64", S_SS)                       \
  X(MAX_F64, "max.f64", S_SS)                       \
  X(NEG_F64, "neg.f64", S_S)                        \
  X(ABS_F64, "abs.f64", S_S)                        \
  X(SQRT_F64, "sqrt.f64", S_S)                      \
  /* Comparisons: i32 1 or 0. A NaN operand makes every float      \
     comparison 0 except ne, which is 1. */                        \
  X(EQ_I32, "eq.i32", S_SS)                         \
  X(NE_I32, "ne.i32", S_SS)                         \
  X(LT_I32_S, "lt.i32.s", S_SS)                     \
  X(LT_I32_U, "lt.i32.u", S_SS)                     \
  X(LE_I32_S, "le.i32.s", S_SS)                     \
  X(LE_I32_U, "le.i32.u", S_SS)                     \
  X(EQ_I64, "eq.i64", S_SS)                         \
  X(NE_I64, "ne.i64", S_SS)                         \
  X(LT_I64_S, "lt.i64.s", S_SS)                     \
  X(LT_I64_U, "lt.i64.u", S_SS)                     \
  X(LE_I64_S, "le.i64.s", S_SS)                     \
  X(LE_I64_U, "le.i64.u", S_SS)                     \
  X(EQ_F32, "eq.f32", S_SS)                         \
  X(NE_F32, "ne.f32", S_SS)                         \
  X(LT_F32, "lt.f32", S_SS)                         \
  X(LE_F32, "le.f32", S_SS)                         \
  X(EQ_F64, "eq.f64", S_SS)                         \
  X(NE_F64, "ne.f64", S_SS)                         \
  X(LT_F64, "lt.f64", S_SS)                         \
  X(LE_F64, "le.f64", S_SS)                         \
  /* Conversions. Float to integer saturates at the target's range \
     and gives 0 for NaN. */                                       \
  X(I32_TO_I64_S, "i32.to.i64.s", S_S)              \
  X(I32_TO_I64_U, "i32.to.i64.u", S_S)              \
  X(I64_TO_I32, "i64.to.i32", S_S)                  \
  X(I32_TO_F32_S, "i32.to.f32.s", S_S)              \
  X(I32_TO_F32_U, "i32.to.f32.u", S_S)              \
  X(I32_TO_F64_S, "i32.to.f64.s", S_S)              \
  X(I32_TO_F64_U, "i32.to.f64.u", S_S)              \
  X(I64_TO_F32_S, "i64.to.f32.s", S_S)              \
  X(I64_TO_F64_S, "i64.to.f64.s", S_S)              \
  X(F32_TO_I32_S, "f32.to.i32.s", S_S)              \
  X(F32_TO_I32_U, "f32.to.i32.u", S_S)              \
  X(F64_TO_I32_S, "f64.to.i32.s", S_S)              \
  X(F64_TO_I64_S, "f64.to.i64.s", S_S)              \
  X(F32_TO_F64, "f32.to.f64", S_S)                  \
  X(F64_TO_F32, "f64.to.f32", S_S)                  \
  /* Control. */                                    \
  X(BR, "br", J)                                    \
  X(BR_IF, "br_if", S_J)                            \
  X(BR_UNLESS, "br_unless", S_J)                    \
  X(CALL, "call", CALL)                             \
  X(CALL_IMPORT, "call.import", CALL_IMPORT)        \
  X(RET, "ret", RET)                                \
  X(FAIL, "fail", FAIL)                             \
  /* Lists of values or refs. */                    \
  X(LIST_NEW, "list.new", R_S)                      \
  X(LIST_SIZE, "list.size", S_R)                    \
  X(LIST_RESIZE, "list.resize", R_S)                \
  X(LIST_GET_I32, "list.get.i32", S_RS)             \
  X(LIST_GET_I64, "list.get.i64", S_RS)             \
  X(LIST_GET_F32, "list.get.f32", S_RS)             \
  X(LIST_GET_F64, "list.get.f64", S_RS)             \
  X(LIST_GET_REF, "list.get.ref", R_RS)             \
  X(LIST_SET_I32, "list.set.i32", R_SS)             \
  X(LIST_SET_I64, "list.set.i64", R_SS)             \
  X(LIST_SET_F32, "list.set.f32", R_SS)             \
  X(LIST_SET_F64, "list.set.f64", R_SS)             \
  X(LIST_SET_REF, "list.set.ref", R_SR)

typedef enum weft_vm_opcode_e {
#define WEFT_VM_OPCODE_ENUM(name, text, shape) WEFT_VM_OP_##name,
  WEFT_VM_OPCODES(WEFT_VM_OPCODE_ENUM)
#undef WEFT_VM_OPCODE_ENUM
  WEFT_VM_OP_COUNT_,
} weft_vm_opcode_t;

// One instruction (8 bytes, little-endian in the binary format).
typedef struct weft_vm_instruction_t {
  uint8_t op;        // weft_vm_opcode_t
  uint8_t reserved;  // 0
  uint16_t a;
  union {
    struct {
      uint16_t b;
      uint16_t c;
    };
    uint32_t imm;
  };
} weft_vm_instruction_t;

_Static_assert(sizeof(weft_vm_instruction_t) == 8, "8-byte instructions");

typedef struct weft_vm_opcode_info_t {
  const char* name;  // "add.i32"
  weft_vm_shape_t shape;
} weft_vm_opcode_info_t;

// Indexed by weft_vm_opcode_t (isa.c).
extern const weft_vm_opcode_info_t kWeftVmOpcodes[WEFT_VM_OP_COUNT_];

#endif  // WEFT_VM_ISA_H_
