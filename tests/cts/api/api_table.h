// The table of weft's public API for the api_null CTS suite.
//
// One entry per public function: its name and a thunk that calls it with
// valid arguments except the one it is told to break (NULL, or a malformed
// semaphore list, binding table or allocator), and records what happened.
// A thunk creates what it needs on the case's device, with the case's
// counting allocator, and releases all of it; called with nothing broken
// (the baseline) its call must succeed, so a broken call cannot pass for an
// unrelated reason.
//
// Thunks name each argument they pass by its index and its name in the
// header (api_ptr(call, 4, "target", buffer)); a name that does not match
// the parsed header is reported as a table error, as is an index a thunk
// never consults when the runner breaks it.
#ifndef WEFT_TESTS_CTS_API_API_TABLE_H_
#define WEFT_TESTS_CTS_API_API_TABLE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api_header_parser.h"
#include "weft/weft.h"

// How the argument under test is broken.
typedef enum api_variant_e {
  // Nothing is broken: the baseline call.
  API_VARIANT_NONE = 0,
  // The pointer argument is NULL.
  API_VARIANT_NULL = 1,
  // A semaphore list {1, NULL, values}.
  API_VARIANT_LIST_SEMAPHORES_NULL = 2,
  // A semaphore list {1, semaphores, NULL}.
  API_VARIANT_LIST_VALUES_NULL = 3,
  // A semaphore list {1, {NULL}, values}.
  API_VARIANT_LIST_ENTRY_NULL = 4,
  // A binding table {1, NULL}.
  API_VARIANT_TABLE_BINDINGS_NULL = 5,
  // An allocator {NULL, NULL}.
  API_VARIANT_ALLOCATOR_NULL = 6,
} api_variant_t;

// Describes |variant| applied to an argument: "NULL", "{1, NULL, values}".
const char* api_variant_describe(api_variant_t variant);

#define API_TEXT_CAPACITY 2048

typedef struct api_call_t {
  // --- In: set by the runner ---
  const api_function_t* function;
  // The index of the argument being broken (-1 for the baseline) and how.
  int broken_index;
  api_variant_t variant;
  // The device under test and the allocator every object is created with.
  const char* device_string;
  weft_allocator_t allocator;
  weft_device_t* device;
  // The CTS test kernels (see cts.h), made at the first api_kernels, and
  // the path of their loadable module.
  weft_executable_t* kernels;
  const char* kernel_module_path;

  // --- Out: recorded by the thunk ---
  // The function returned a status: its code and formatted text.
  bool has_status;
  weft_status_code_t code;
  char status_text[API_TEXT_CAPACITY];
  // Everything else that went wrong, "; "-separated.
  char problems[API_TEXT_CAPACITY];
  // Bit i: the thunk consulted argument i through an api_* helper.
  uint32_t consulted;

  // Storage for the {1, {NULL}, values} list variant.
  weft_semaphore_t* null_entry[1];
} api_call_t;

typedef void (*api_thunk_fn_t)(api_call_t* call);

typedef struct api_entry_t {
  const char* name;
  api_thunk_fn_t thunk;
  // The code the baseline call returns (OK except for the functions that
  // make statuses, whose product is the status they return).
  weft_status_code_t baseline_code;
} api_entry_t;

// The tables, one per header group.
extern const api_entry_t api_table_base[];
extern const size_t api_table_base_count;
extern const api_entry_t api_table_buffer[];
extern const size_t api_table_buffer_count;
extern const api_entry_t api_table_semaphore[];
extern const size_t api_table_semaphore_count;
extern const api_entry_t api_table_file[];
extern const size_t api_table_file_count;
extern const api_entry_t api_table_device[];
extern const size_t api_table_device_count;
extern const api_entry_t api_table_channel[];
extern const size_t api_table_channel_count;
extern const api_entry_t api_table_vm[];
extern const size_t api_table_vm_count;

//===----------------------------------------------------------------------===//
// Helpers for thunks (api_table_util.c)
//===----------------------------------------------------------------------===//

// True when argument |index| is the one being broken.
bool api_is_broken(api_call_t* call, int index);

// Returns |valid|, or NULL when argument |index| (named |name|) is broken.
void* api_ptr(api_call_t* call, int index, const char* name, const void* valid);
// For function pointers: false when argument |index| is broken.
bool api_fn_present(api_call_t* call, int index, const char* name);
// Returns |valid| (count 1), or the list variant being applied to it.
weft_semaphore_list_t api_list(api_call_t* call, int index, const char* name,
                               weft_semaphore_list_t valid);
// Returns |valid| (count 1), or {1, NULL} when it is broken.
weft_binding_table_t api_bindings(api_call_t* call, int index, const char* name,
                                  weft_binding_table_t valid);
// Returns the case's allocator, or {NULL, NULL} when it is broken.
weft_allocator_t api_allocator(api_call_t* call, int index, const char* name);
// Notes an argument that is passed as is (a value the runner never breaks),
// so its name is still checked against the header.
void api_value(api_call_t* call, int index, const char* name);

// An out-parameter: fills |storage| (|size| bytes) with a sentinel
// ((void*)0x1 for pointers, 0xA5 bytes otherwise) and returns it, or NULL
// when argument |index| is broken.
void* api_out(api_call_t* call, int index, const char* name, void* storage,
              size_t size);
// After the call: when it failed (and |index| is not the broken argument),
// |storage| must be all zero; records a problem otherwise.
void api_check_out(api_call_t* call, int index, const void* storage,
                   size_t size);

// Records the status a function returned (formats it, then frees it).
// Returns true when it was OK.
bool api_status(api_call_t* call, weft_status_t status);
// True once a status was recorded and it was OK.
bool api_ok(const api_call_t* call);
// Records a problem (printf-style).
void api_problem(api_call_t* call, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
// For functions returning no status: when a required argument is broken,
// the result must be neutral; |format| describes the actual result.
void api_expect_neutral(api_call_t* call, bool neutral, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
// Checks a setup step of the thunk; records "setup: WHAT: status" and
// returns false when |status| is not OK (and frees it).
bool api_setup(api_call_t* call, weft_status_t status, const char* what);

// --- Objects thunks commonly need (all checked with api_setup) ---

// The CTS test kernels on the case's device (made at the first call), or
// NULL.
weft_executable_t* api_kernels(api_call_t* call);
// A host-visible buffer of |length| bytes on the case's device, or NULL.
weft_buffer_t* api_make_buffer(api_call_t* call, weft_device_size_t length);
// A device semaphore at |value|, or NULL.
weft_semaphore_t* api_make_semaphore(api_call_t* call, uint64_t value);
// A read-write memory file over |contents|, or NULL.
weft_file_t* api_make_memory_file(api_call_t* call, void* contents,
                                  uint64_t length);
// A temporary file of |length| bytes; its path goes to |path| (>= 64
// bytes). Returns false (with a problem) when it cannot be made.
bool api_make_temp_file(api_call_t* call, uint64_t length, char* path);
// A fence holding (|semaphore|, |value|), or NULL.
weft_fence_t* api_make_fence(api_call_t* call, weft_semaphore_t* semaphore,
                             uint64_t value);

// The waits and signals of a queue operation: the wait list holds one
// semaphore already at its value, the signal list one semaphore at 0 to be
// signalled to 1.
typedef struct api_queue_t {
  weft_semaphore_t* wait_semaphores[1];
  uint64_t wait_values[1];
  weft_semaphore_t* signal_semaphores[1];
  uint64_t signal_values[1];
} api_queue_t;

// Creates the two semaphores; false (with a problem) on failure.
bool api_queue_initialize(api_call_t* call, api_queue_t* queue);
// The wait list (argument |index|, "wait_list") and the signal list
// (argument |index|, "signal_list"), each possibly broken.
weft_semaphore_list_t api_queue_wait_list(api_call_t* call, api_queue_t* queue,
                                          int index);
weft_semaphore_list_t api_queue_signal_list(api_call_t* call,
                                            api_queue_t* queue, int index);
// After the operation was submitted: if it was accepted, waits for its
// signal (it must succeed); if not, checks that the signal semaphore was
// neither signalled nor failed. Releases the semaphores.
void api_queue_finish(api_call_t* call, api_queue_t* queue);

// True when |text| contains |word| as a whole word (not inside a longer
// identifier: "semaphore" is not found in "weft_semaphore_wait").
bool api_text_has_word(const char* text, const char* word);

// Checks that |semaphore| is still at |value| and not failed.
void api_check_untouched(api_call_t* call, weft_semaphore_t* semaphore,
                         uint64_t value, const char* what);

#endif  // WEFT_TESTS_CTS_API_API_TABLE_H_
