// weft conformance suite (CTS) support.
//
// Every case is written once against the public API and runs against every
// driver: a suite binary takes "--driver DEVICE" (a device string with any
// options, e.g. "local-task?file_io=threads"; default local-sync, or the
// WEFT_CTS_DRIVER environment variable) and each case gets a fresh device.
// "--case PATTERN" runs only the cases whose name matches (* and ?).
//
// A suite file looks like:
//   static void fill_whole(void** state) {
//     weft_cts_t* cts = *state;
//     ...
//   }
//   int main(int argc, char** argv) {
//     const struct CMUnitTest tests[] = { WEFT_CTS_CASE(fill_whole), };
//     return weft_cts_run("buffer", tests, WEFT_CTS_COUNT(tests), argc, argv);
//   }
#ifndef WEFT_TESTS_CTS_CTS_H_
#define WEFT_TESTS_CTS_CTS_H_

// cmocka needs these first.
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include "weft/weft.h"

typedef struct weft_cts_t {
  // The device string under test, e.g. "local-sync".
  const char* device_string;
  // The allocator every object of the case is created with (a failing
  // allocator in the fault-injection run).
  weft_allocator_t allocator;
  // The case's device (a new one after weft_cts_ensure_queues).
  weft_device_t* device;
  // The number of queues |device| has ("queue.count", at most 64): what
  // weft_cts_queue_bit wraps at.
  uint32_t queue_count;
  // The test kernel library (statically registered).
  weft_executable_t* kernels;
} weft_cts_t;

// Per-case setup/teardown: create and release the device and kernels.
int weft_cts_setup(void** state);
int weft_cts_teardown(void** state);

#define WEFT_CTS_CASE(fn) \
  cmocka_unit_test_setup_teardown(fn, weft_cts_setup, weft_cts_teardown)
#define WEFT_CTS_COUNT(array) (sizeof(array) / sizeof((array)[0]))

// The exit code of a suite whose device cannot be created here
// (UNAVAILABLE): ctest's SKIP_RETURN_CODE.
#define WEFT_CTS_EXIT_SKIP 77

// Parses arguments and runs the group; returns the number of failures, or
// WEFT_CTS_EXIT_SKIP (after saying why on stderr) when the device string
// names a device this machine cannot have (creating it is UNAVAILABLE).
int weft_cts_run(const char* suite_name, const struct CMUnitTest* tests,
                 size_t count, int argc, char** argv);

// The device string chosen by --driver.
const char* weft_cts_device_string(void);

// Writes the case's device string with |option| ("queues=4") added into
// |buffer| (always NUL-terminated).
void weft_cts_device_string_with(const weft_cts_t* cts, const char* option,
                                 char* buffer, size_t capacity);

// Fails the current case, printing the status, unless it is OK.
void weft_cts_assert_ok_(weft_status_t status, const char* expr,
                         const char* file, int line);
// Fails unless |status| has |code|; frees the status. Returns nothing.
void weft_cts_assert_status_(weft_status_code_t code, weft_status_t status,
                             const char* expr, const char* file, int line);

#define WEFT_ASSERT_OK(expr) \
  weft_cts_assert_ok_((expr), #expr, __FILE__, __LINE__)
#define WEFT_ASSERT_STATUS(code, expr) \
  weft_cts_assert_status_(WEFT_STATUS_##code, (expr), #expr, __FILE__, __LINE__)

//===----------------------------------------------------------------------===//
// Statuses
//===----------------------------------------------------------------------===//

// Fails the current case unless |status| has |code| and its formatted text
// contains |needle| (when not NULL); frees the status.
void weft_cts_assert_status_contains(weft_status_t status,
                                     weft_status_code_t code,
                                     const char* needle);
// As weft_cts_assert_status_contains, with two needles (each may be NULL).
void weft_cts_assert_status_contains_both(weft_status_t status,
                                          weft_status_code_t code,
                                          const char* needle_a,
                                          const char* needle_b);
// Fails the current case unless |status| has |code| and exactly the primary
// message |message| (what a failure carries through every op it reaches);
// frees the status.
void weft_cts_assert_status_message(weft_status_t status,
                                    weft_status_code_t code,
                                    const char* message);

//===----------------------------------------------------------------------===//
// Semaphores and waits
//===----------------------------------------------------------------------===//

// Creates a semaphore on the case's device.
weft_semaphore_t* weft_cts_create_semaphore(weft_cts_t* cts,
                                            uint64_t initial_value);
// Returns a one-entry semaphore list over caller-owned storage.
weft_semaphore_list_t weft_cts_list1(weft_semaphore_t** semaphore_storage,
                                     const uint64_t* value_storage);
// Returns a |count|-entry semaphore list over caller-owned arrays.
weft_semaphore_list_t weft_cts_list(uint32_t count,
                                    weft_semaphore_t** semaphores,
                                    const uint64_t* values);
// The current value of |semaphore| (asserting the query is OK: not failed).
uint64_t weft_cts_query_value(weft_semaphore_t* semaphore);
// Asserts that (|semaphore|, |value|) is not reached, without blocking.
void weft_cts_assert_not_reached(weft_semaphore_t* semaphore, uint64_t value);
// Waits for (semaphore, value) with a 10 s timeout and returns the status.
weft_status_t weft_cts_wait(weft_semaphore_t* semaphore, uint64_t value);
// Finishes an op submitted to signal |semaphore| to 1, for helpers of the
// form "submit, wait, return the status": waits for it when |submitted| (the
// submit's status) is OK, then releases |semaphore|. Returns the submit's
// error or else the wait's result.
weft_status_t weft_cts_wait_submitted(weft_semaphore_t* semaphore,
                                      weft_status_t submitted);
// What weft_device_dump_pending writes for |device|, as a string the caller
// frees with free().
char* weft_cts_dump_pending(weft_device_t* device);

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

// Allocates a buffer with default parameters on the case's device.
weft_buffer_t* weft_cts_allocate_buffer(weft_cts_t* cts,
                                        weft_device_size_t length);
// Allocates a buffer with |params| (zero fields canonicalised) on the case's
// device (asserting OK).
weft_buffer_t* weft_cts_allocate_buffer_with_params(weft_cts_t* cts,
                                                    weft_buffer_params_t params,
                                                    weft_device_size_t length);
// Allocates a buffer as weft_cts_allocate_buffer does and fills all of it
// with the 1, 2 or 4 byte |pattern| (weft_cts_fill_buffer).
weft_buffer_t* weft_cts_allocate_filled_buffer(weft_cts_t* cts,
                                               weft_device_size_t length,
                                               const void* pattern,
                                               uint32_t pattern_length);

// Buffer contents go in and out through the queue. A driver's device-local
// buffers need not be host-mappable, so these never map a buffer under
// test: a read copies it into a host-visible staging buffer with
// weft_device_queue_copy, waits, and maps the staging buffer; a write goes
// the other way; a fill is a weft_device_queue_fill. Each waits for its own
// op (signalling a fresh semaphore, with no waits: it does not wait for
// anything else pending) and asserts it succeeded. The buffer needs the
// TRANSFER_SOURCE usage to be read and TRANSFER_TARGET to be written or
// filled. Only the buffer_mapping suite maps buffers under test.
//
// Reads |length| bytes of |buffer| at |offset| into |out|.
void weft_cts_read_buffer(weft_cts_t* cts, weft_buffer_t* buffer,
                          weft_device_size_t offset, void* out,
                          weft_device_size_t length);
// Writes |length| bytes of |data| to |buffer| at |offset|.
void weft_cts_write_buffer(weft_cts_t* cts, weft_buffer_t* buffer,
                           weft_device_size_t offset, const void* data,
                           weft_device_size_t length);
// Fills [offset, offset + length) of |buffer| with the 1, 2 or 4 byte
// |pattern|.
void weft_cts_fill_buffer(weft_cts_t* cts, weft_buffer_t* buffer,
                          weft_device_size_t offset, weft_device_size_t length,
                          const void* pattern, uint32_t pattern_length);
// weft_cts_read_buffer on |device|'s queue, for a buffer of a second device.
void weft_cts_device_read_buffer(weft_device_t* device, weft_buffer_t* buffer,
                                 weft_device_size_t offset, void* out,
                                 weft_device_size_t length);
// weft_cts_fill_buffer on |device|'s queue, for a buffer of a second device.
void weft_cts_device_fill_buffer(weft_device_t* device, weft_buffer_t* buffer,
                                 weft_device_size_t offset,
                                 weft_device_size_t length, const void* pattern,
                                 uint32_t pattern_length);
// Asserts that |buffer| (a transient one) has no memory now: a queue copy
// from it fails its signal with FAILED_PRECONDITION, with |needle| (may be
// NULL) in the message ("before its alloca ran", "after its dealloca ran").
void weft_cts_assert_no_memory(weft_cts_t* cts, weft_buffer_t* buffer,
                               const char* needle);
// Asserts |count| 32-bit words of |buffer| from byte |offset| all equal
// |expected|, naming the first that does not.
void weft_cts_assert_words(weft_cts_t* cts, weft_buffer_t* buffer,
                           weft_device_size_t offset, uint32_t count,
                           uint32_t expected);
// Asserts what the "write_ids" test kernel wrote over |workgroups| (x, y, z)
// at byte |offset| of |buffer|: every record's x, y, z and flat index.
void weft_cts_assert_ids(weft_cts_t* cts, weft_buffer_t* buffer,
                         weft_device_size_t offset,
                         const uint32_t workgroups[3]);
// Fills |length| bytes with byte i = |seed| + i * |stride| (mod 256).
void weft_cts_make_bytes(uint8_t* bytes, size_t length, uint8_t seed,
                         uint8_t stride);
// Asserts the |length| bytes at |actual| equal those at |expected|, naming
// the first that differs.
void weft_cts_assert_bytes_equal(const uint8_t* actual, const uint8_t* expected,
                                 size_t length);

//===----------------------------------------------------------------------===//
// Queue operations, kernels and command buffers
//===----------------------------------------------------------------------===//

// Submits a queue fill of [offset, offset + length) of |buffer| with the
// word |pattern| on any queue (asserting the submit is OK).
void weft_cts_queue_fill_u32(weft_cts_t* cts, weft_semaphore_list_t wait_list,
                             weft_semaphore_list_t signal_list,
                             weft_buffer_t* buffer, weft_device_size_t offset,
                             weft_device_size_t length, uint32_t pattern);
// The ordinal of kernel |name| of |executable| (asserting it exists).
uint32_t weft_cts_kernel_ordinal(weft_executable_t* executable,
                                 const char* name);
// The bits of |value|, for float kernel constants.
uint32_t weft_cts_f32_bits(float value);
// Creates a command buffer on the case's device (asserting OK).
weft_command_buffer_t* weft_cts_create_command_buffer(
    weft_cts_t* cts, weft_command_buffer_mode_t mode,
    weft_command_category_t categories, uint32_t binding_capacity);
// Creates a command buffer of every category and begins recording.
weft_command_buffer_t* weft_cts_begin_command_buffer(
    weft_cts_t* cts, weft_command_buffer_mode_t mode,
    uint32_t binding_capacity);
// Executes |command_buffer| with |table| on any queue, signalling a fresh
// semaphore, and returns the submit error or else the wait's result.
weft_status_t weft_cts_execute_and_wait(weft_cts_t* cts,
                                        weft_command_buffer_t* command_buffer,
                                        weft_binding_table_t table);

//===----------------------------------------------------------------------===//
// Features and queues
//===----------------------------------------------------------------------===//

// What a driver can do, where the CTS needs to know: decided in one place,
// weft_cts_supports. A feature with a device query (weft_device_query_i64)
// is read from the device; the others come from one table in cts.c that
// lists, per driver, the features it does not support and why. A case that
// needs a feature calls weft_cts_require; a case that adapts to it asks
// weft_cts_supports. Never branch on the driver's name in a case.
typedef enum weft_cts_feature_e {
  // Two or more queues: "queue.count" >= 2.
  WEFT_CTS_FEATURE_SEVERAL_QUEUES = 0,
  // A "queues=N" device option giving a device N queues (table).
  WEFT_CTS_FEATURE_QUEUES_OPTION,
  // Buffers of the default parameters can be mapped by the host (table).
  // Only the buffer_mapping suite needs it: every other suite moves buffer
  // contents through the queue.
  WEFT_CTS_FEATURE_HOST_MAPPING,
  // Command buffers recorded on a device of the CPU drivers (local-sync,
  // local-task) run on this device (table; README "Objects across
  // devices").
  WEFT_CTS_FEATURE_CPU_COMMAND_BUFFERS,
  // The device makes executables of CPU kernel libraries (cpu-static,
  // cpu-shared-object): the cases about those formats' own checks.
  WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES,
  // The device is in the host domain (hal/domain.h): it reaches
  // host-visible memory of any domain.
  WEFT_CTS_FEATURE_HOST_DOMAIN,
  // An op whose wait failed does no work (weft/device.h leaves it open:
  // a GPU may have queued it in-stream already).
  WEFT_CTS_FEATURE_FAILED_WAIT_SKIPS_WORK,
  WEFT_CTS_FEATURE_COUNT,
} weft_cts_feature_t;

// The feature's name, e.g. "HOST_MAPPING".
const char* weft_cts_feature_name(weft_cts_feature_t feature);
// True when the case's device supports |feature|.
bool weft_cts_supports(const weft_cts_t* cts, weft_cts_feature_t feature);
// Skips the current case (saying why) unless the case's device supports
// |feature|.
void weft_cts_require(const weft_cts_t* cts, weft_cts_feature_t feature);

// Gives the case a device with several queues where the driver can have
// them: the case's device when it has two or more; else a new device of the
// same driver with "queues=4" (WEFT_CTS_FEATURE_QUEUES_OPTION; it replaces
// |cts->device|, released at teardown); else the case's device as it is
// (every case written for several queues also holds on one). Call it before
// creating anything on |cts->device|. Returns |cts->queue_count|.
uint32_t weft_cts_ensure_queues(weft_cts_t* cts);
// The affinity of queue |index| of the case's device, wrapping at its queue
// count.
weft_queue_affinity_t weft_cts_queue_bit(const weft_cts_t* cts, uint32_t index);

//===----------------------------------------------------------------------===//
// Counting allocator and test kernels
//===----------------------------------------------------------------------===//

// An allocator that counts the blocks it has handed out and not yet had
// back, over |base|. Objects reachable from weft's diagnostics registry are
// invisible to LeakSanitizer; this sees them.
typedef struct weft_cts_counting_allocator_t {
  weft_allocator_t base;
  _Atomic(int64_t) live;
} weft_cts_counting_allocator_t;

// Starts |counter| at zero over |base| and returns the allocator that uses
// it.
weft_allocator_t weft_cts_counting_allocator_initialize(
    weft_allocator_t base, weft_cts_counting_allocator_t* counter);

// The blocks allocated through |counter| and not yet freed.
int64_t weft_cts_counting_allocator_live(
    weft_cts_counting_allocator_t* counter);

// Waits (up to |timeout_ns|) until every block of |counter| was freed, for a
// device that finishes on another thread; returns the blocks still live.
int64_t weft_cts_counting_allocator_wait_all_freed(
    weft_cts_counting_allocator_t* counter, weft_duration_t timeout_ns);

// The statically linked test kernel library (see test_kernels.c):
//   "scale_offset": binding 0 in (f32), binding 1 out (f32);
//                   constants: scale (f32 bits), offset (f32 bits), count.
//                   out[i] = in[i]*scale + offset for i in the workgroup's
//                   range (workgroup_size[0] = 64 elements per workgroup).
//   "abs_range":    binding 0 inout (i32); constants: first, count;
//                   abs() over [first, first+count), one workgroup per 64.
//   "write_ids":    binding 0 out (u32 x4 per workgroup): x, y, z and the
//                   flattened index of each workgroup.
//   "fail":         returns 1 from workgroup (constant 0) and 0 elsewhere.
const weft_kernel_library_t* weft_cts_test_kernels_query(uint32_t abi_version);

// The source of the test kernels for |driver_name|'s devices (one table in
// cts.c; the C library above for the CPU drivers). The per-case device's
// copy is |cts->kernels|.
weft_executable_source_t weft_cts_kernel_source(const char* driver_name);

#endif  // WEFT_TESTS_CTS_CTS_H_
