// weft VM: how the text format (.wvm) writes operands and values, shared
// by the assembler and the disassembler so the two cannot drift apart.
//
// Each opcode's shape (isa.h) maps to an operand syntax string below, one
// character per operand in text order:
//   's'  scalar register sN, into the next of the fields a, b, c
//   'r'  ref register rN, into the next of a, b, c
//   'S'  scalar register sN, into the operand list (imm: its first entry)
//   'i'  32-bit immediate into imm: an integer, or a float when the opcode
//        name ends in ".f32"
//   'k'  64-bit constant, pooled; imm is its index: an integer, or a float
//        when the opcode name ends in ".f64"
//   'd'  rodata segment name; imm is its index
//   'j'  label; imm is the function-relative instruction index
//   'c'  @FUNCTION(args) -> (results); a: function, imm: operand list
//   'm'  MODULE.FUNCTION(args) -> (results); a: import, imm: operand list
//   't'  (values) for ret; imm: operand list
//   'e'  status code, by name (INVALID_ARGUMENT) or number, into a
//   'M'  message: a string literal (an anonymous rodata segment) or a
//        rodata segment name; imm is its index
// Operands are separated by commas; 'c', 'm' and 't' are one operand each.
#ifndef WEFT_VM_TEXT_SYNTAX_H_
#define WEFT_VM_TEXT_SYNTAX_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vm/isa.h"
#include "weft/status.h"

// The operand syntax of |shape| ("" for none, NULL for an unknown shape).
const char* weft_vm_shape_syntax(weft_vm_shape_t shape);

// True when |info|'s immediate or constant is a float (its name ends in
// ".f32" or ".f64"); false for integers.
bool weft_vm_opcode_immediate_is_float(const weft_vm_opcode_info_t* info);

// Parses an integer of |bits| (32 or 64) from |length| bytes of |text|:
// optional '-' or '+', then decimal digits or 0x and hex digits, in
// [-2^(bits-1), 2^bits - 1] (negative values two's complement). Returns
// false when the text is not such an integer.
bool weft_vm_text_parse_integer(const char* text, size_t length, uint32_t bits,
                                uint64_t* out_bits);

// Parses a float of |bits| (32 or 64) into its IEEE 754 bits: a decimal or
// hex float (strtof/strtod syntax, whole text), or inf, nan with an
// optional sign, or nan:0xPAYLOAD (a NaN with that mantissa, not 0).
// Returns false when the text is not such a float.
bool weft_vm_text_parse_float(const char* text, size_t length, uint32_t bits,
                              uint64_t* out_bits);

// Writes float |bits| (32 or 64 wide) so weft_vm_text_parse_float gives
// the same bits back: the shortest of %.9g/%.17g-style decimals that
// round-trips, "inf", "-inf", "nan", "-nan" or "nan:0x..." for other NaN
// payloads. |capacity| must be at least 40.
void weft_vm_text_format_float(uint64_t bits, uint32_t width, char* buffer,
                               size_t capacity);

// Looks up a status code by its name ("INVALID_ARGUMENT") or decimal number
// (|length| bytes of |text|). Returns false when it is neither.
bool weft_vm_text_parse_status_code(const char* text, size_t length,
                                    uint32_t* out_code);

// Describes what is at |position| of |line| (|length| bytes) for an
// error's "found ...": "end of line" at its end or at a ';' comment, else
// the string literal or the word there (letters, digits, "_.@-+:"; one
// character when none is) in quotes, unprintable bytes as '?' and past 48
// characters cut with "...".
void weft_vm_text_describe(const char* line, size_t length, size_t position,
                           char* buffer, size_t capacity);

// Writes |byte| as it appears inside a string literal ("\n", "\x01", "a")
// into |buffer| (at least 5 bytes) and returns the length written.
size_t weft_vm_text_escape_byte(uint8_t byte, char* buffer);

#endif  // WEFT_VM_TEXT_SYNTAX_H_
