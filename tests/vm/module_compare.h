// Test support for src/vm: compares two modules table by table, for the
// round-trip tests and the fuzz targets (no test framework needed).
#ifndef WEFT_TESTS_VM_MODULE_COMPARE_H_
#define WEFT_TESTS_VM_MODULE_COMPARE_H_

#include <stdbool.h>
#include <stddef.h>

#include "vm/bytecode.h"

// True when |a| and |b| have the same name, functions (names, signatures
// with their canonical text, register counts, code ranges, flags, declared
// names, tensor types and symbols), imports,
// code, operand lists, constants and rodata (segments, bytes and names).
// With |compare_lines|, the line tables and source names too. Otherwise
// writes the first difference into |why| (|capacity| bytes).
bool weft_vm_test_modules_equal(const weft_vm_bytecode_t* a,
                                const weft_vm_bytecode_t* b, bool compare_lines,
                                char* why, size_t capacity);

#endif  // WEFT_TESTS_VM_MODULE_COMPARE_H_
