// Shared VM test modules (see vm_test_modules.h).
#include "vm_test_modules.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "vm/module_impl.h"
#include "weft/vm/list.h"

#define expect_ok vm_test_expect_ok

void vm_test_expect_ok(weft_status_t status) {
  if (!weft_status_is_ok(status)) {
    char text[2048];
    weft_status_format(status, text, sizeof(text));
    weft_status_free(status);
    fail_msg("unexpected error: %s", text);
  }
}

void vm_test_expect_error(weft_status_t status, weft_status_code_t code,
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

//===----------------------------------------------------------------------===//
// A native module "t" and a semaphore ref type
//===----------------------------------------------------------------------===//

static void semaphore_retain(void* object) {
  weft_semaphore_retain((weft_semaphore_t*)object);
}
static void semaphore_release(void* object) {
  weft_semaphore_release((weft_semaphore_t*)object);
}
const weft_vm_ref_type_t kVmTestSemaphoreType = {"semaphore",
                                                  semaphore_retain,
                                                  semaphore_release};

static weft_status_t t_add(weft_vm_native_call_t* call) {
  call->results[0].i32 = call->args[0].i32 + call->args[1].i32;
  return WEFT_OK;
}

// await(semaphore, value, timeout_ns) -> (code): 0 when reached, the
// DEADLINE_EXCEEDED code when the timeout passed; a failed semaphore fails
// the call with its message.
static weft_status_t t_await(weft_vm_native_call_t* call) {
  if (call->pc == 0) {
    weft_semaphore_t* semaphore = (weft_semaphore_t*)call->args[0].ref.object;
    const uint64_t value = (uint64_t)call->args[1].i64;
    uint64_t current = 0;
    weft_status_t status = weft_semaphore_query(semaphore, &current);
    if (!weft_status_is_ok(status)) return status;
    if (current >= value) {
      call->results[0].i32 = 0;
      return WEFT_OK;
    }
    const int64_t timeout = call->args[2].i64;
    weft_vm_wait_frame_begin(call, WEFT_WAIT_MODE_ALL,
                             timeout < 0 ? WEFT_TIME_INFINITE_FUTURE
                                         : weft_time_now() + timeout);
    status = weft_vm_wait_frame_add(call, semaphore, value);
    if (!weft_status_is_ok(status)) return status;
    call->pc = 1;
    return weft_status_from_code(WEFT_STATUS_DEFERRED);
  }
  weft_status_t result = call->wait_result;
  call->wait_result = WEFT_OK;
  if (weft_status_is(result, WEFT_STATUS_DEADLINE_EXCEEDED)) {
    weft_status_free(result);
    call->results[0].i32 = WEFT_STATUS_DEADLINE_EXCEEDED;
    return WEFT_OK;
  }
  if (!weft_status_is_ok(result)) return result;
  call->results[0].i32 = 0;
  return WEFT_OK;
}

// await2(a, va, b, vb, any) -> (code): waits for both (ALL) or either
// (ANY, when |any| is 1); the code as in await.
static weft_status_t t_await2(weft_vm_native_call_t* call) {
  if (call->pc == 0) {
    weft_vm_wait_frame_begin(call,
                             call->args[4].i32 ? WEFT_WAIT_MODE_ANY
                                               : WEFT_WAIT_MODE_ALL,
                             WEFT_TIME_INFINITE_FUTURE);
    for (int i = 0; i < 2; ++i) {
      weft_status_t status = weft_vm_wait_frame_add(
          call, (weft_semaphore_t*)call->args[2 * i].ref.object,
          (uint64_t)call->args[2 * i + 1].i64);
      if (!weft_status_is_ok(status)) return status;
    }
    call->pc = 1;
    return weft_status_from_code(WEFT_STATUS_DEFERRED);
  }
  weft_status_t result = call->wait_result;
  call->wait_result = WEFT_OK;
  if (!weft_status_is_ok(result)) return result;
  call->results[0].i32 = 0;
  return WEFT_OK;
}

static weft_status_t t_list_size(weft_vm_native_call_t* call) {
  const weft_vm_list_t* list = weft_vm_list_from_ref(call->args[0].ref);
  call->results[0].i32 = list ? (int32_t)weft_vm_list_size(list) : -1;
  return WEFT_OK;
}

int g_vm_test_state_count = 0;
static weft_status_t t_create_state(void* user_data, weft_allocator_t allocator,
                                    void** out_state) {
  ++g_vm_test_state_count;
  *out_state = &g_vm_test_state_count;
  return WEFT_OK;
}
static void t_destroy_state(void* user_data, void* state) { --g_vm_test_state_count; }

static const weft_vm_native_function_t kTFunctions[] = {
    {"add", "(i32, i32) -> (i32)", t_add},
    {"await", "(r<semaphore>, i64, i64) -> (i32)", t_await},
    {"list_size", "(r<list>?) -> (i32)", t_list_size},
    {"strict_list_size", "(r<list>) -> (i32)", t_list_size},
    {"await2", "(r<semaphore>, i64, r<semaphore>, i64, i32) -> (i32)",
     t_await2},
};
const weft_vm_native_module_def_t kVmTestTModule = {
    .name = "t",
    .function_count = 5,
    .functions = kTFunctions,
    .create_state = t_create_state,
    .destroy_state = t_destroy_state,
};

//===----------------------------------------------------------------------===//
// A bytecode module "m" calling t.await (built directly)
//===----------------------------------------------------------------------===//

// m.wait(s: r<semaphore>, value: i64, timeout: i64) -> (i32):
//   call.import t.await(r0, s0, s1) -> (s2); ret (s2)
// m.sum(a: i32, b: i32) -> (i32): call.import t.add(s0, s1) -> (s2); ...
typedef struct m_module_t {
  weft_vm_bytecode_t bytecode;
  weft_vm_function_t functions[2];
  weft_vm_import_t imports[2];
  weft_vm_instruction_t code[4];
  uint16_t operands[8];
} m_module_t;

static const uint8_t kWaitTypes[] = {WEFT_VM_TYPE_REF, WEFT_VM_TYPE_I64,
                                     WEFT_VM_TYPE_I64, WEFT_VM_TYPE_I32};
static const uint8_t kSumTypes[] = {WEFT_VM_TYPE_I32, WEFT_VM_TYPE_I32,
                                    WEFT_VM_TYPE_I32};

// Makes module m (one allocation, as the assembler would) importing
// t.await with |await_signature| and t.add with |add_name|.
weft_vm_module_t* vm_test_make_m(const char* await_signature,
                                const char* add_name) {
  m_module_t* m = NULL;
  expect_ok(weft_allocator_malloc(weft_allocator_system(), sizeof(*m),
                                  (void**)&m));
  // Both exported: the tests call them from the host.
  m->functions[0] = (weft_vm_function_t){"wait", {3, 1, kWaitTypes, NULL},
                                         3, 1, 0, 2,
                                         WEFT_VM_FUNCTION_FLAG_EXPORT};
  m->functions[1] = (weft_vm_function_t){"sum", {2, 1, kSumTypes, NULL}, 3,
                                         0, 2, 2,
                                         WEFT_VM_FUNCTION_FLAG_EXPORT};
  m->imports[0] = (weft_vm_import_t){
      "t", "await", {3, 1, kWaitTypes, await_signature}};
  m->imports[1] = (weft_vm_import_t){"t", add_name, {2, 1, kSumTypes, NULL}};
  const uint16_t operands[] = {0, 0, 1, 2, 2, 0, 1, 2};
  memcpy(m->operands, operands, sizeof(operands));
  m->code[0] = (weft_vm_instruction_t){.op = WEFT_VM_OP_CALL_IMPORT, .a = 0,
                                       .imm = 0};
  m->code[1] = (weft_vm_instruction_t){.op = WEFT_VM_OP_RET, .imm = 4};
  m->code[2] = (weft_vm_instruction_t){.op = WEFT_VM_OP_CALL_IMPORT, .a = 1,
                                       .imm = 5};
  m->code[3] = (weft_vm_instruction_t){.op = WEFT_VM_OP_RET, .imm = 7};
  m->bytecode = (weft_vm_bytecode_t){
      .name = "m",
      .function_count = 2,
      .functions = m->functions,
      .import_count = 2,
      .imports = m->imports,
      .code_count = 4,
      .code = m->code,
      .operand_count = 8,
      .operands = m->operands,
  };
  weft_vm_module_t* module = NULL;
  expect_ok(weft_vm_module_create_bytecode(weft_allocator_system(),
                                           &m->bytecode, &module));
  return module;
}


weft_vm_context_t* vm_test_make_context(weft_vm_module_t* m) {
  weft_vm_module_t* t = NULL;
  expect_ok(weft_vm_module_create_native(weft_allocator_system(), &kVmTestTModule,
                                         &t));
  weft_vm_module_t* modules[2] = {m, t};
  weft_vm_context_t* context = NULL;
  expect_ok(weft_vm_context_create(modules, 2, weft_allocator_system(),
                                   &context));
  weft_vm_module_release(t);
  return context;
}

