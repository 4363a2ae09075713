// Shared by the VM tests: a native module "t" (add, await, await2,
// list_size, strict_list_size) with a "semaphore" ref type, a bytecode
// module "m" calling it (m.wait, m.sum), and status assertions.
#ifndef WEFT_TESTS_VM_VM_TEST_MODULES_H_
#define WEFT_TESTS_VM_VM_TEST_MODULES_H_

#include "weft/vm/context.h"
#include "weft/vm/module.h"

// The signature m imports t.await with.
#define VM_TEST_AWAIT_SIGNATURE "(r<semaphore>,i64,i64)->(i32)"

// Refs to weft_semaphore_t.
extern const weft_vm_ref_type_t kVmTestSemaphoreType;
extern const weft_vm_native_module_def_t kVmTestTModule;
// Live per-context states of module t.
extern int g_vm_test_state_count;

// Module m, importing t.await with |await_signature| and t.|add_name|.
weft_vm_module_t* vm_test_make_m(const char* await_signature,
                                 const char* add_name);

// A context of |m| and a new module t.
weft_vm_context_t* vm_test_make_context(weft_vm_module_t* m);

// Fails the test unless |status| (consumed) is OK.
void vm_test_expect_ok(weft_status_t status);
// Fails the test unless |status| (consumed) has |code| and contains
// |needle|.
void vm_test_expect_error(weft_status_t status, weft_status_code_t code,
                          const char* needle);

// A semaphore ref value.
static inline weft_vm_value_t vm_test_semaphore_value(
    weft_semaphore_t* semaphore) {
  weft_vm_value_t value;
  value.type = WEFT_VM_TYPE_REF;
  value.ref.object = semaphore;
  value.ref.type = &kVmTestSemaphoreType;
  return value;
}

#endif  // WEFT_TESTS_VM_VM_TEST_MODULES_H_
