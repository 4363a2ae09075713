// Test support for the VM fuzz targets: abort, with a message, when a
// promise of the code under test is broken (libFuzzer reports the abort
// and keeps the input).
#ifndef WEFT_TESTS_VM_FUZZ_CHECK_H_
#define WEFT_TESTS_VM_FUZZ_CHECK_H_

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "module_compare.h"
#include "weft/status.h"

// Aborts with |what| and the status's message unless |status| is OK.
// Consumes |status|.
static inline void weft_vm_fuzz_check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return;
  fprintf(stderr, "%s: %s\n", what, weft_status_message(status));
  weft_status_free(status);
  abort();
}

// Aborts with |what| and the first difference unless the modules are equal
// (weft_vm_test_modules_equal).
static inline void weft_vm_fuzz_check_equal(const weft_vm_bytecode_t* a,
                                            const weft_vm_bytecode_t* b,
                                            bool compare_lines,
                                            const char* what) {
  char why[256];
  if (!weft_vm_test_modules_equal(a, b, compare_lines, why, sizeof(why))) {
    fprintf(stderr, "%s: %s\n", what, why);
    abort();
  }
}

#endif  // WEFT_TESTS_VM_FUZZ_CHECK_H_
