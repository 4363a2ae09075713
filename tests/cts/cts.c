// weft CTS support: argument parsing, the per-case device, assertions,
// buffer contents through the queue, and the table of what each driver
// does not support (kUnsupported, used by weft_cts_supports).
#include "cts.h"

#if defined(WEFT_CTS_HAVE_CUDA_KERNELS)
#include "cuda/cts_cuda_kernels.h"
#endif
#if defined(WEFT_CTS_HAVE_VULKAN_KERNELS)
#include "vulkan/cts_vulkan_kernels.h"
#endif

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* g_device_string = "local-sync";

const char* weft_cts_device_string(void) { return g_device_string; }

// A queue count as affinity bits can select it: 1 to 64.
static uint32_t weft_cts_clamp_queue_count(int64_t count) {
  return count < 1 ? 1 : count > 64 ? 64 : (uint32_t)count;
}

// Where each driver's copy of the test kernels comes from (cts.h lists the
// kernels; every source has the same names and behaviour). A driver not
// listed takes the C library, as the CPU drivers do.
typedef struct weft_cts_kernel_source_t {
  const char* driver_name;
  weft_executable_source_t (*source)(void);
} weft_cts_kernel_source_t;

static weft_executable_source_t weft_cts_c_kernels(void) {
  return weft_executable_source_cpu_static(weft_cts_test_kernels_query);
}

#if defined(WEFT_CTS_HAVE_CUDA_KERNELS)
// The same kernels in CUDA C (tests/cts/cuda), compiled to PTX by nvcc at
// build time and described by the same table.
static weft_executable_source_t weft_cts_cuda_kernels(void) {
  return weft_executable_source_cuda(
      WEFT_EXECUTABLE_FORMAT_CUDA_PTX, "cts_test_kernels", weft_cts_cuda_ptx,
      weft_cts_cuda_ptx_size, weft_cts_gpu_kernel_count,
      weft_cts_gpu_kernel_table);
}
#endif

#if defined(WEFT_CTS_HAVE_VULKAN_KERNELS)
// The same kernels in GLSL (tests/cts/vulkan), compiled to one SPIR-V
// module at build time and described by the same table.
static weft_executable_source_t weft_cts_vulkan_kernels(void) {
  return weft_executable_source_spirv(
      "cts_test_kernels", weft_cts_vulkan_spirv, weft_cts_vulkan_spirv_size,
      weft_cts_gpu_kernel_count, weft_cts_gpu_kernel_table);
}
#endif

static const weft_cts_kernel_source_t kKernelSources[] = {
    {"local-sync", weft_cts_c_kernels},
    {"local-task", weft_cts_c_kernels},
#if defined(WEFT_CTS_HAVE_CUDA_KERNELS)
    {"cuda", weft_cts_cuda_kernels},
#endif
#if defined(WEFT_CTS_HAVE_VULKAN_KERNELS)
    {"vulkan", weft_cts_vulkan_kernels},
#else
    // No glslang here: cases run without cts->kernels (the suites that
    // dispatch are not registered for vulkan).
    {"vulkan", NULL},
#endif
};

// True when the CTS has test kernels for |driver_name|.
static bool weft_cts_has_kernels(const char* driver_name) {
  for (size_t i = 0; i < sizeof(kKernelSources) / sizeof(kKernelSources[0]);
       ++i) {
    if (strcmp(kKernelSources[i].driver_name, driver_name) == 0) {
      return kKernelSources[i].source != NULL;
    }
  }
  return true;
}

weft_executable_source_t weft_cts_kernel_source(const char* driver_name) {
  for (size_t i = 0; i < sizeof(kKernelSources) / sizeof(kKernelSources[0]);
       ++i) {
    if (strcmp(kKernelSources[i].driver_name, driver_name) == 0 &&
        kKernelSources[i].source) {
      return kKernelSources[i].source();
    }
  }
  return weft_cts_c_kernels();
}

int weft_cts_setup(void** state) {
  weft_cts_t* cts = calloc(1, sizeof(*cts));
  if (!cts) return -1;
  cts->device_string = g_device_string;
  cts->allocator = weft_allocator_system();
  weft_status_t status =
      weft_device_create(cts->device_string, cts->allocator, &cts->device);
  int64_t queue_count = 1;
  if (weft_status_is_ok(status)) {
    status = weft_device_query_i64(cts->device, "queue.count", &queue_count);
  }
  cts->queue_count = weft_cts_clamp_queue_count(queue_count);
  if (weft_status_is_ok(status) &&
      weft_cts_has_kernels(weft_device_driver_name(cts->device))) {
    status = weft_device_create_executable(
        cts->device,
        weft_cts_kernel_source(weft_device_driver_name(cts->device)),
        &cts->kernels);
  }
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "CTS setup on '%s' failed: ", cts->device_string);
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    weft_executable_release(cts->kernels);
    weft_device_release(cts->device);
    free(cts);
    return -1;
  }
  *state = cts;
  return 0;
}

int weft_cts_teardown(void** state) {
  weft_cts_t* cts = *state;
  if (!cts) return 0;
  weft_executable_release(cts->kernels);
  weft_device_release(cts->device);
  free(cts);
  *state = NULL;
  return 0;
}

// Creates and releases a device of the chosen string; false (after saying
// why on stderr) when it is UNAVAILABLE here.
static bool weft_cts_probe_device(const char* suite_name) {
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create(g_device_string, weft_allocator_system(), &device);
  weft_device_release(device);
  if (weft_status_is(status, WEFT_STATUS_UNAVAILABLE)) {
    fprintf(stderr, "cts.%s.%s: skipped, the device is unavailable here: ",
            g_device_string, suite_name);
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return false;
  }
  weft_status_ignore(status);
  return true;
}

// Whether the device is available, probed in a child process: a GPU driver
// initialised in this process would not work in the children the api_null
// suite forks for its calls (CUDA refuses a forked child:
// CUDA_ERROR_NOT_INITIALIZED, seen on an H200), so the suite's own process
// touches no device before its cases do.
static bool weft_cts_device_available(const char* suite_name) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    // _exit: the child's leak checks and atexit handlers are the parent's.
    _exit(weft_cts_probe_device(suite_name) ? 0 : WEFT_CTS_EXIT_SKIP);
  }
  if (pid < 0) return weft_cts_probe_device(suite_name);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  return !(WIFEXITED(wait_status) &&
           WEXITSTATUS(wait_status) == WEFT_CTS_EXIT_SKIP);
}

int weft_cts_run(const char* suite_name, const struct CMUnitTest* tests,
                 size_t count, int argc, char** argv) {
  const char* env = getenv("WEFT_CTS_DRIVER");
  if (env && env[0]) g_device_string = env;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--driver") == 0 && i + 1 < argc) {
      g_device_string = argv[++i];
    } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
      // Runs only the cases whose name matches (cmocka's pattern: * and ?).
      cmocka_set_test_filter(argv[++i]);
    }
  }
  // A device this machine cannot have (a backend the kernel refuses, say)
  // skips the whole suite: exit 77, ctest's SKIP_RETURN_CODE. Any other
  // failure fails each case's setup with the message.
  if (!weft_cts_device_available(suite_name)) return WEFT_CTS_EXIT_SKIP;
  char group_name[256];
  snprintf(group_name, sizeof(group_name), "cts.%s.%s", g_device_string,
           suite_name);
  return _cmocka_run_group_tests(group_name, tests, count, NULL, NULL);
}

void weft_cts_assert_ok_(weft_status_t status, const char* expr,
                         const char* file, int line) {
  if (weft_status_is_ok(status)) return;
  char message[1024];
  weft_status_format(status, message, sizeof(message));
  weft_status_free(status);
  print_error("%s:%d: %s failed: %s\n", file, line, expr, message);
  _fail(file, line);
}

void weft_cts_assert_status_(weft_status_code_t code, weft_status_t status,
                             const char* expr, const char* file, int line) {
  weft_status_code_t actual = weft_status_code(status);
  if (actual == code) {
    weft_status_free(status);
    return;
  }
  char message[1024];
  weft_status_format(status, message, sizeof(message));
  weft_status_free(status);
  print_error("%s:%d: %s: expected %s, got %s\n", file, line, expr,
              weft_status_code_string(code), message);
  _fail(file, line);
}

void weft_cts_assert_status_contains_both(weft_status_t status,
                                          weft_status_code_t code,
                                          const char* needle_a,
                                          const char* needle_b) {
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  weft_status_free(status);
  if (actual != code) {
    fail_msg("expected %s, got: %s", weft_status_code_string(code), text);
  }
  if (needle_a && !strstr(text, needle_a)) {
    fail_msg("expected '%s' in: %s", needle_a, text);
  }
  if (needle_b && !strstr(text, needle_b)) {
    fail_msg("expected '%s' in: %s", needle_b, text);
  }
}

void weft_cts_assert_status_contains(weft_status_t status,
                                     weft_status_code_t code,
                                     const char* needle) {
  weft_cts_assert_status_contains_both(status, code, needle, NULL);
}

void weft_cts_assert_status_message(weft_status_t status,
                                    weft_status_code_t code,
                                    const char* message) {
  char text[2048];
  weft_status_format(status, text, sizeof(text));
  weft_status_code_t actual = weft_status_code(status);
  int same = strcmp(weft_status_message(status), message) == 0;
  weft_status_free(status);
  if (actual != code || !same) {
    fail_msg("expected %s with message '%s', got: %s",
             weft_status_code_string(code), message, text);
  }
}

weft_buffer_t* weft_cts_allocate_buffer(weft_cts_t* cts,
                                        weft_device_size_t length) {
  return weft_cts_allocate_buffer_with_params(cts, (weft_buffer_params_t){0},
                                              length);
}

weft_buffer_t* weft_cts_allocate_buffer_with_params(weft_cts_t* cts,
                                                    weft_buffer_params_t params,
                                                    weft_device_size_t length) {
  weft_buffer_t* buffer = NULL;
  WEFT_ASSERT_OK(
      weft_device_allocate_buffer(cts->device, params, length, &buffer));
  return buffer;
}

weft_semaphore_t* weft_cts_create_semaphore(weft_cts_t* cts,
                                            uint64_t initial_value) {
  weft_semaphore_t* semaphore = NULL;
  WEFT_ASSERT_OK(
      weft_device_create_semaphore(cts->device, initial_value, &semaphore));
  return semaphore;
}

weft_semaphore_list_t weft_cts_list1(weft_semaphore_t** semaphore_storage,
                                     const uint64_t* value_storage) {
  weft_semaphore_list_t list = {1, semaphore_storage, value_storage};
  return list;
}

weft_semaphore_list_t weft_cts_list(uint32_t count,
                                    weft_semaphore_t** semaphores,
                                    const uint64_t* values) {
  weft_semaphore_list_t list = {count, semaphores, values};
  return list;
}

uint64_t weft_cts_query_value(weft_semaphore_t* semaphore) {
  uint64_t value = 0;
  WEFT_ASSERT_OK(weft_semaphore_query(semaphore, &value));
  return value;
}

void weft_cts_assert_not_reached(weft_semaphore_t* semaphore, uint64_t value) {
  WEFT_ASSERT_STATUS(
      DEADLINE_EXCEEDED,
      weft_semaphore_wait(semaphore, value, weft_timeout_immediate()));
  assert_true(weft_cts_query_value(semaphore) < value);
}

// A host-visible buffer of |length| bytes on |device| that its queue copies
// into and out of and the host maps.
static weft_buffer_t* weft_cts_allocate_staging(weft_device_t* device,
                                                weft_device_size_t length) {
  weft_buffer_params_t params = {
      .type = WEFT_MEMORY_TYPE_HOST_VISIBLE | WEFT_MEMORY_TYPE_HOST_COHERENT,
      .access = WEFT_MEMORY_ACCESS_ALL,
      .usage = WEFT_BUFFER_USAGE_TRANSFER | WEFT_BUFFER_USAGE_MAPPING_SCOPED,
  };
  weft_buffer_t* staging = NULL;
  WEFT_ASSERT_OK(weft_device_allocate_buffer(device, params, length, &staging));
  return staging;
}

// Copies |length| bytes with |device|'s queue and waits for the copy.
static void weft_cts_copy_and_wait(weft_device_t* device, weft_buffer_t* source,
                                   weft_device_size_t source_offset,
                                   weft_buffer_t* target,
                                   weft_device_size_t target_offset,
                                   weft_device_size_t length) {
  weft_semaphore_t* copied = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &copied));
  const uint64_t one = 1;
  WEFT_ASSERT_OK(weft_cts_wait_submitted(
      copied, weft_device_queue_copy(
                  device, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
                  weft_cts_list1(&copied, &one), source, source_offset, target,
                  target_offset, length)));
}

void weft_cts_device_read_buffer(weft_device_t* device, weft_buffer_t* buffer,
                                 weft_device_size_t offset, void* out,
                                 weft_device_size_t length) {
  if (length == 0) return;
  weft_buffer_t* staging = weft_cts_allocate_staging(device, length);
  weft_cts_copy_and_wait(device, buffer, offset, staging, 0, length);
  weft_buffer_mapping_t mapping;
  WEFT_ASSERT_OK(weft_buffer_map_range(staging, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_READ, 0, length,
                                       &mapping));
  WEFT_ASSERT_OK(weft_buffer_mapping_invalidate(&mapping, 0, length));
  memcpy(out, mapping.contents, (size_t)length);
  weft_buffer_unmap_range(&mapping);
  weft_buffer_release(staging);
}

// weft_cts_write_buffer on |device|'s queue.
static void weft_cts_device_write_buffer(weft_device_t* device,
                                         weft_buffer_t* buffer,
                                         weft_device_size_t offset,
                                         const void* data,
                                         weft_device_size_t length) {
  if (length == 0) return;
  weft_buffer_t* staging = weft_cts_allocate_staging(device, length);
  weft_buffer_mapping_t mapping;
  WEFT_ASSERT_OK(weft_buffer_map_range(staging, WEFT_MAPPING_MODE_SCOPED,
                                       WEFT_MEMORY_ACCESS_WRITE, 0, length,
                                       &mapping));
  memcpy(mapping.contents, data, (size_t)length);
  WEFT_ASSERT_OK(weft_buffer_mapping_flush(&mapping, 0, length));
  weft_buffer_unmap_range(&mapping);
  weft_cts_copy_and_wait(device, staging, 0, buffer, offset, length);
  weft_buffer_release(staging);
}

void weft_cts_device_fill_buffer(weft_device_t* device, weft_buffer_t* buffer,
                                 weft_device_size_t offset,
                                 weft_device_size_t length, const void* pattern,
                                 uint32_t pattern_length) {
  weft_semaphore_t* filled = NULL;
  WEFT_ASSERT_OK(weft_device_create_semaphore(device, 0, &filled));
  const uint64_t one = 1;
  WEFT_ASSERT_OK(weft_cts_wait_submitted(
      filled, weft_device_queue_fill(device, WEFT_QUEUE_AFFINITY_ANY,
                                     weft_semaphore_list_empty(),
                                     weft_cts_list1(&filled, &one), buffer,
                                     offset, length, pattern, pattern_length)));
}

void weft_cts_read_buffer(weft_cts_t* cts, weft_buffer_t* buffer,
                          weft_device_size_t offset, void* out,
                          weft_device_size_t length) {
  weft_cts_device_read_buffer(cts->device, buffer, offset, out, length);
}

void weft_cts_write_buffer(weft_cts_t* cts, weft_buffer_t* buffer,
                           weft_device_size_t offset, const void* data,
                           weft_device_size_t length) {
  weft_cts_device_write_buffer(cts->device, buffer, offset, data, length);
}

void weft_cts_fill_buffer(weft_cts_t* cts, weft_buffer_t* buffer,
                          weft_device_size_t offset, weft_device_size_t length,
                          const void* pattern, uint32_t pattern_length) {
  weft_cts_device_fill_buffer(cts->device, buffer, offset, length, pattern,
                              pattern_length);
}

void weft_cts_assert_no_memory(weft_cts_t* cts, weft_buffer_t* buffer,
                               const char* needle) {
  weft_buffer_t* staging = weft_cts_allocate_staging(cts->device, 4);
  weft_semaphore_t* copied = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  weft_cts_assert_status_contains(
      weft_cts_wait_submitted(
          copied, weft_device_queue_copy(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                         weft_semaphore_list_empty(),
                                         weft_cts_list1(&copied, &one), buffer,
                                         0, staging, 0, 4)),
      WEFT_STATUS_FAILED_PRECONDITION, needle);
  weft_buffer_release(staging);
}

void weft_cts_queue_fill_u32(weft_cts_t* cts, weft_semaphore_list_t wait_list,
                             weft_semaphore_list_t signal_list,
                             weft_buffer_t* buffer, weft_device_size_t offset,
                             weft_device_size_t length, uint32_t pattern) {
  WEFT_ASSERT_OK(weft_device_queue_fill(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                        wait_list, signal_list, buffer, offset,
                                        length, &pattern, 4));
}

weft_buffer_t* weft_cts_allocate_filled_buffer(weft_cts_t* cts,
                                               weft_device_size_t length,
                                               const void* pattern,
                                               uint32_t pattern_length) {
  weft_buffer_t* buffer = weft_cts_allocate_buffer(cts, length);
  weft_cts_fill_buffer(cts, buffer, 0, length, pattern, pattern_length);
  return buffer;
}

void weft_cts_assert_words(weft_cts_t* cts, weft_buffer_t* buffer,
                           weft_device_size_t offset, uint32_t count,
                           uint32_t expected) {
  uint32_t* words = malloc(count ? count * sizeof(uint32_t) : 1);
  assert_non_null(words);
  weft_cts_read_buffer(cts, buffer, offset, words, count * sizeof(uint32_t));
  for (uint32_t i = 0; i < count; ++i) {
    if (words[i] != expected) {
      uint32_t actual = words[i];
      free(words);
      fail_msg("word %u at byte %llu: 0x%08x, expected 0x%08x", i,
               (unsigned long long)offset, actual, expected);
    }
  }
  free(words);
}

void weft_cts_make_bytes(uint8_t* bytes, size_t length, uint8_t seed,
                         uint8_t stride) {
  for (size_t i = 0; i < length; ++i) {
    bytes[i] = (uint8_t)(seed + i * stride);
  }
}

void weft_cts_assert_bytes_equal(const uint8_t* actual, const uint8_t* expected,
                                 size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (actual[i] != expected[i]) {
      fail_msg("byte %zu: got 0x%02x, expected 0x%02x", i, actual[i],
               expected[i]);
    }
  }
}

void weft_cts_assert_ids(weft_cts_t* cts, weft_buffer_t* buffer,
                         weft_device_size_t offset,
                         const uint32_t workgroups[3]) {
  const uint32_t* n = workgroups;
  size_t total = (size_t)n[0] * n[1] * n[2];
  uint32_t* ids = malloc(total ? total * 16 : 1);
  assert_non_null(ids);
  weft_cts_read_buffer(cts, buffer, offset, ids, total * 16);
  size_t flat = 0;
  for (uint32_t z = 0; z < n[2]; ++z) {
    for (uint32_t y = 0; y < n[1]; ++y) {
      for (uint32_t x = 0; x < n[0]; ++x, ++flat) {
        const uint32_t* id = &ids[flat * 4];
        if (id[0] != x || id[1] != y || id[2] != z || id[3] != flat) {
          uint32_t seen[4] = {id[0], id[1], id[2], id[3]};
          free(ids);
          fail_msg(
              "workgroup (%u, %u, %u) flat %zu of (%u, %u, %u) at byte %llu: "
              "wrote (%u, %u, %u) flat %u",
              x, y, z, flat, n[0], n[1], n[2], (unsigned long long)offset,
              seen[0], seen[1], seen[2], seen[3]);
        }
      }
    }
  }
  free(ids);
}

char* weft_cts_dump_pending(weft_device_t* device) {
  char* text = NULL;
  size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  assert_non_null(stream);
  weft_device_dump_pending(device, stream);
  fclose(stream);
  return text;
}

weft_status_t weft_cts_wait(weft_semaphore_t* semaphore, uint64_t value) {
  return weft_semaphore_wait(semaphore, value,
                             weft_timeout_relative(10ll * 1000 * 1000 * 1000));
}

weft_status_t weft_cts_wait_submitted(weft_semaphore_t* semaphore,
                                      weft_status_t submitted) {
  weft_status_t status = submitted;
  if (weft_status_is_ok(status)) status = weft_cts_wait(semaphore, 1);
  weft_semaphore_release(semaphore);
  return status;
}

uint32_t weft_cts_kernel_ordinal(weft_executable_t* executable,
                                 const char* name) {
  uint32_t ordinal = 0;
  WEFT_ASSERT_OK(weft_executable_lookup_kernel(executable, name, &ordinal));
  return ordinal;
}

uint32_t weft_cts_f32_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

weft_command_buffer_t* weft_cts_create_command_buffer(
    weft_cts_t* cts, weft_command_buffer_mode_t mode,
    weft_command_category_t categories, uint32_t binding_capacity) {
  weft_command_buffer_t* command_buffer = NULL;
  WEFT_ASSERT_OK(weft_command_buffer_create(cts->device, mode, categories,
                                            binding_capacity, &command_buffer));
  return command_buffer;
}

weft_command_buffer_t* weft_cts_begin_command_buffer(
    weft_cts_t* cts, weft_command_buffer_mode_t mode,
    uint32_t binding_capacity) {
  weft_command_buffer_t* command_buffer = weft_cts_create_command_buffer(
      cts, mode, WEFT_COMMAND_CATEGORY_ANY, binding_capacity);
  WEFT_ASSERT_OK(weft_command_buffer_begin(command_buffer));
  return command_buffer;
}

weft_status_t weft_cts_execute_and_wait(weft_cts_t* cts,
                                        weft_command_buffer_t* command_buffer,
                                        weft_binding_table_t table) {
  weft_semaphore_t* semaphore = weft_cts_create_semaphore(cts, 0);
  const uint64_t one = 1;
  return weft_cts_wait_submitted(
      semaphore, weft_device_queue_execute(cts->device, WEFT_QUEUE_AFFINITY_ANY,
                                           weft_semaphore_list_empty(),
                                           weft_cts_list1(&semaphore, &one),
                                           command_buffer, table));
}

// The features each driver does not support, and why. A feature with a
// device query is never listed: weft_cts_supports asks the device. A driver
// that is not listed supports every feature of the table; a driver with
// memory of its own (a GPU driver) will list HOST_MAPPING, for its
// device-local buffers, and CPU_COMMAND_BUFFERS.
typedef struct weft_cts_unsupported_t {
  const char* driver_name;
  weft_cts_feature_t feature;
  const char* why;
} weft_cts_unsupported_t;

static const weft_cts_unsupported_t kUnsupported[] = {
    {"local-sync", WEFT_CTS_FEATURE_QUEUES_OPTION,
     "it has one queue, and runs each op on the thread that makes it ready"},
    {"cuda", WEFT_CTS_FEATURE_HOST_MAPPING,
     "buffers of the default parameters are device memory (HOST_VISIBLE "
     "ones are pinned host memory the host maps)"},
    {"cuda", WEFT_CTS_FEATURE_CPU_COMMAND_BUFFERS,
     "command buffers recorded on a CPU device name CPU kernels, which a GPU "
     "cannot run"},
    {"cuda", WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES,
     "a GPU runs CUDA modules (cuda-ptx, cuda-image), not CPU functions"},
    {"cuda", WEFT_CTS_FEATURE_HOST_DOMAIN,
     "a GPU is a domain of its own: it reaches its own memory and pinned "
     "host memory it mapped, not another device's"},
    {"cuda", WEFT_CTS_FEATURE_FAILED_WAIT_SKIPS_WORK,
     "an op waiting in-stream on a failing op is already queued on the GPU; "
     "its signals still fail"},
    {"vulkan", WEFT_CTS_FEATURE_HOST_MAPPING,
     "buffers of the default parameters are device memory (HOST_VISIBLE "
     "ones are mapped host-visible memory)"},
    {"vulkan", WEFT_CTS_FEATURE_CPU_COMMAND_BUFFERS,
     "command buffers recorded on a CPU device name CPU kernels, which a GPU "
     "cannot run"},
    {"vulkan", WEFT_CTS_FEATURE_CPU_KERNEL_LIBRARIES,
     "a GPU runs SPIR-V, not CPU functions"},
    {"vulkan", WEFT_CTS_FEATURE_HOST_DOMAIN,
     "a GPU is a domain of its own: it reaches its own memory, not another "
     "device's"},
    {"vulkan", WEFT_CTS_FEATURE_FAILED_WAIT_SKIPS_WORK,
     "an op waiting on the GPU on a failing op is already submitted; its "
     "signals still fail"},
};

static const char* const kFeatureNames[WEFT_CTS_FEATURE_COUNT] = {
    "SEVERAL_QUEUES",
    "QUEUES_OPTION",
    "HOST_MAPPING",
    "CPU_COMMAND_BUFFERS",
    "CPU_KERNEL_LIBRARIES",
    "HOST_DOMAIN",
    "FAILED_WAIT_SKIPS_WORK",
};

const char* weft_cts_feature_name(weft_cts_feature_t feature) {
  return feature < WEFT_CTS_FEATURE_COUNT ? kFeatureNames[feature] : "?";
}

// The table's entry saying the case's driver lacks |feature|, or NULL.
static const weft_cts_unsupported_t* weft_cts_find_unsupported(
    const weft_cts_t* cts, weft_cts_feature_t feature) {
  const char* driver_name = weft_device_driver_name(cts->device);
  for (size_t i = 0; i < sizeof(kUnsupported) / sizeof(kUnsupported[0]); ++i) {
    if (kUnsupported[i].feature == feature &&
        strcmp(kUnsupported[i].driver_name, driver_name) == 0) {
      return &kUnsupported[i];
    }
  }
  return NULL;
}

bool weft_cts_supports(const weft_cts_t* cts, weft_cts_feature_t feature) {
  if (feature == WEFT_CTS_FEATURE_SEVERAL_QUEUES) {
    int64_t count = 1;
    WEFT_ASSERT_OK(weft_device_query_i64(cts->device, "queue.count", &count));
    return count >= 2;
  }
  return weft_cts_find_unsupported(cts, feature) == NULL;
}

void weft_cts_require(const weft_cts_t* cts, weft_cts_feature_t feature) {
  if (weft_cts_supports(cts, feature)) return;
  const weft_cts_unsupported_t* entry = weft_cts_find_unsupported(cts, feature);
  print_message("skipped: '%s' does not support %s%s%s\n",
                weft_device_id(cts->device), weft_cts_feature_name(feature),
                entry ? ": " : "", entry ? entry->why : "");
  skip();
}

void weft_cts_device_string_with(const weft_cts_t* cts, const char* option,
                                 char* buffer, size_t capacity) {
  snprintf(buffer, capacity, "%s%s%s", cts->device_string,
           strchr(cts->device_string, '?') ? "&" : "?", option);
}

uint32_t weft_cts_ensure_queues(weft_cts_t* cts) {
  if (weft_cts_supports(cts, WEFT_CTS_FEATURE_SEVERAL_QUEUES) ||
      !weft_cts_supports(cts, WEFT_CTS_FEATURE_QUEUES_OPTION)) {
    return cts->queue_count;
  }
  char device_string[512];
  weft_cts_device_string_with(cts, "queues=4", device_string,
                              sizeof(device_string));
  weft_device_t* device = NULL;
  WEFT_ASSERT_OK(weft_device_create(device_string, cts->allocator, &device));
  int64_t count = 1;
  WEFT_ASSERT_OK(weft_device_query_i64(device, "queue.count", &count));
  if (cts->kernels) {
    // The kernels again, for the new device: a GPU's executables run only
    // on the device that made them.
    weft_executable_release(cts->kernels);
    cts->kernels = NULL;
    WEFT_ASSERT_OK(weft_device_create_executable(
        device, weft_cts_kernel_source(weft_device_driver_name(device)),
        &cts->kernels));
  }
  weft_device_release(cts->device);
  cts->device = device;
  cts->queue_count = weft_cts_clamp_queue_count(count);
  return cts->queue_count;
}

weft_queue_affinity_t weft_cts_queue_bit(const weft_cts_t* cts,
                                         uint32_t index) {
  return (weft_queue_affinity_t)1 << (index % cts->queue_count);
}

static weft_status_t weft_cts_counting_ctl(void* self,
                                           weft_allocator_command_t command,
                                           size_t byte_length,
                                           void** inout_ptr) {
  weft_cts_counting_allocator_t* counter = (weft_cts_counting_allocator_t*)self;
  void* before = *inout_ptr;
  weft_status_t status =
      counter->base.ctl(counter->base.self, command, byte_length, inout_ptr);
  int64_t delta = 0;
  if (weft_status_is_ok(status)) {
    if (command == WEFT_ALLOCATOR_COMMAND_FREE) {
      delta = before ? -1 : 0;
    } else if (command == WEFT_ALLOCATOR_COMMAND_REALLOC) {
      delta = (before ? -1 : 0) + (*inout_ptr ? 1 : 0);
    } else {
      delta = *inout_ptr ? 1 : 0;
    }
  }
  // Seq_cst (the default): a count read after a device's shutdown thread
  // freed its last block sees that free.
  atomic_fetch_add(&counter->live, delta);
  return status;
}

weft_allocator_t weft_cts_counting_allocator_initialize(
    weft_allocator_t base, weft_cts_counting_allocator_t* counter) {
  counter->base = base;
  atomic_init(&counter->live, 0);
  weft_allocator_t allocator = {counter, weft_cts_counting_ctl};
  return allocator;
}

int64_t weft_cts_counting_allocator_live(
    weft_cts_counting_allocator_t* counter) {
  return atomic_load(&counter->live);
}

int64_t weft_cts_counting_allocator_wait_all_freed(
    weft_cts_counting_allocator_t* counter, weft_duration_t timeout_ns) {
  const weft_time_t deadline = weft_time_now() + timeout_ns;
  while (weft_cts_counting_allocator_live(counter) != 0 &&
         weft_time_now() < deadline) {
    weft_sleep_until(weft_time_now() + 100 * 1000);
  }
  return weft_cts_counting_allocator_live(counter);
}
