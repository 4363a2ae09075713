// vm.public_api_cxx: every public header compiles as C++ (weft/weft.h
// includes them all, the VM's too), and the VM is callable through them:
// a module from text, the hal module, a context, a list, a synchronous
// invocation and one on the loop. Exit status 0 when all went as expected.
#include <weft/weft.h>

#include <cstdio>
#include <cstring>

namespace {

const char kProgram[] =
    "module prog\n"
    "func @add(i32, i32) -> (i32) export\n"
    "  add.i32 s2, s0, s1\n"
    "  ret (s2)\n"
    "end\n";

// Prints |status| (consumed) under |what| and returns false when it failed.
bool Check(weft_status_t status, const char* what) {
  if (weft_status_is_ok(status)) return true;
  std::fprintf(stderr, "vm.public_api_cxx: %s: ", what);
  weft_status_fprint(stderr, status);
  weft_status_free(status);
  return false;
}

struct LoopResult {
  int calls = 0;
  int32_t value = -1;
};

void LoopDone(void* user_data, weft_vm_loop_invocation_t* invocation,
              weft_status_t status, weft_vm_value_t* results,
              uint32_t result_count) {
  LoopResult* result = static_cast<LoopResult*>(user_data);
  ++result->calls;
  if (weft_status_is_ok(status) && result_count == 1) {
    result->value = results[0].i32;
  }
  weft_status_free(status);
}

}  // namespace

int main() {
  const weft_allocator_t allocator = weft_allocator_system();
  weft_hal_module_options_t hal_options;
  std::memset(&hal_options, 0, sizeof(hal_options));
  hal_options.device_string = "local-sync";
  weft_vm_module_t* modules[2] = {nullptr, nullptr};
  weft_vm_context_t* context = nullptr;
  weft_vm_list_t* list = nullptr;
  weft_vm_loop_t* loop = nullptr;
  bool ok =
      Check(weft_vm_module_load_bytes("prog.wvm", kProgram,
                                      std::strlen(kProgram), allocator,
                                      &modules[0]),
            "weft_vm_module_load_bytes") &&
      Check(weft_hal_module_create(&hal_options, allocator, &modules[1]),
            "weft_hal_module_create") &&
      Check(weft_vm_context_create(modules, 2, allocator, &context),
            "weft_vm_context_create");

  const weft_vm_value_t args[2] = {weft_vm_value_i32(40),
                                   weft_vm_value_i32(2)};
  weft_vm_value_t result = weft_vm_value_i32(0);
  ok = ok && Check(weft_vm_invoke_sync(context, "prog.add", args, 2, &result,
                                       1, 0, allocator),
                   "weft_vm_invoke_sync");
  if (ok && result.i32 != 42) {
    std::fprintf(stderr, "vm.public_api_cxx: prog.add(40, 2) = %d\n",
                 result.i32);
    ok = false;
  }

  // A list through the value helpers.
  ok = ok && Check(weft_vm_list_create(allocator, 1, &list),
                   "weft_vm_list_create") &&
       Check(weft_vm_list_resize(list, 1), "weft_vm_list_resize");
  const weft_vm_value_t element = weft_vm_value_ref(weft_vm_list_as_ref(list));
  if (ok && (weft_vm_list_from_ref(element.ref) != list ||
             weft_vm_list_size(list) != 1)) {
    std::fprintf(stderr, "vm.public_api_cxx: the list ref is wrong\n");
    ok = false;
  }

  // The same call on the loop.
  weft_vm_loop_options_t loop_options = {};
  LoopResult loop_result;
  ok = ok &&
       Check(weft_vm_loop_create(loop_options, allocator, &loop),
             "weft_vm_loop_create") &&
       Check(weft_vm_loop_submit(loop, context, "prog.add", args, 2, 1,
                                 LoopDone, &loop_result, nullptr),
             "weft_vm_loop_submit") &&
       Check(weft_vm_loop_run(loop, WEFT_TIME_INFINITE_FUTURE),
             "weft_vm_loop_run");
  if (ok && (loop_result.calls != 1 || loop_result.value != 42)) {
    std::fprintf(stderr, "vm.public_api_cxx: the loop's add gave %d (%d "
                 "calls)\n", loop_result.value, loop_result.calls);
    ok = false;
  }

  weft_vm_loop_destroy(loop);
  weft_vm_list_release(list);
  weft_vm_context_release(context);
  weft_vm_module_release(modules[1]);
  weft_vm_module_release(modules[0]);
  if (ok) std::printf("vm.public_api_cxx: ok\n");
  return ok ? 0 : 1;
}
