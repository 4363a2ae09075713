// weft: command buffer recording and submit-time validation (see
// command_buffer_impl.h).
//
// Recording appends tagged commands to a growable array; variable-sized
// payloads (update bytes, dispatch constants and bindings) live in chunks
// owned by the command buffer, so command pointers stay valid as the array
// grows. Every record call validates first, then reserves everything it
// needs (the only fallible step), then commits: a failing call records
// nothing and retains nothing.
//
// Indirect references are summarised per binding-table slot while
// recording (the usage the bound buffer needs and how much of it the
// commands touch), so a submission checks its table in O(slots used) rather
// than O(commands). Fills and copies through the table also need the
// resolved ranges (alignment, lengths, overlap); their indices are kept in a
// short list checked in full at submit.
#include <stdio.h>
#include <string.h>

#include "base/atomics.h"
#include "hal/buffer_validation.h"
#include "hal/command_buffer_impl.h"
#include "hal/device_impl.h"
#include "hal/executable_impl.h"
#include "hal/resource.h"

// Payload chunks hold at least this many bytes.
#define WEFT_COMMAND_BUFFER_CHUNK_SIZE 4096
// Payload allocations are aligned to this.
#define WEFT_COMMAND_BUFFER_DATA_ALIGNMENT 16

typedef enum weft_command_buffer_state_e {
  WEFT_COMMAND_BUFFER_STATE_INITIAL = 0,
  WEFT_COMMAND_BUFFER_STATE_RECORDING = 1,
  WEFT_COMMAND_BUFFER_STATE_ENDED = 2,
} weft_command_buffer_state_t;

// A block of payload memory; the payload follows the (padded) header.
typedef struct weft_command_buffer_chunk_t {
  struct weft_command_buffer_chunk_t* next;
  size_t capacity;
  size_t used;
} weft_command_buffer_chunk_t;

#define WEFT_COMMAND_BUFFER_CHUNK_HEADER_SIZE                                  \
  ((sizeof(weft_command_buffer_chunk_t) + WEFT_COMMAND_BUFFER_DATA_ALIGNMENT - \
    1) &                                                                       \
   ~(size_t)(WEFT_COMMAND_BUFFER_DATA_ALIGNMENT - 1))

// How the recorded commands use one binding-table slot.
typedef struct weft_command_buffer_slot_use_t {
  // Usage bits the bound buffer needs; 0 when the slot is unused.
  weft_buffer_usage_t usage;
  // The command touching the most of the slot and the range it touches
  // (|length| may be WEFT_WHOLE_BUFFER: from |offset| to the end).
  uint32_t command_index;
  weft_device_size_t offset;
  weft_device_size_t length;
  // The bound range must be at least this long.
  weft_device_size_t min_length;
} weft_command_buffer_slot_use_t;

typedef struct weft_command_buffer_vtable_t {
  // Must be first (see resource.h).
  void (*destroy)(weft_command_buffer_t* command_buffer);
} weft_command_buffer_vtable_t;

struct weft_command_buffer_t {
  weft_resource_t resource;
  weft_device_t* device;  // retained
  weft_allocator_t allocator;
  weft_command_buffer_mode_t mode;
  weft_command_category_t categories;
  uint32_t binding_capacity;
  // Only touched by the recording thread; read-only after end().
  weft_command_buffer_state_t state;
  // The first recording error (owned), returned again (cloned) by end().
  weft_status_t recording_status;

  weft_command_t* commands;
  uint32_t command_count;
  uint32_t command_capacity;

  weft_command_buffer_chunk_t* chunks;  // newest first

  // One entry per slot up to the highest slot used.
  weft_command_buffer_slot_use_t* slot_uses;
  uint32_t slot_use_count;
  uint32_t slot_use_capacity;

  // Indices of fills and copies that go through the binding table.
  uint32_t* table_checks;
  uint32_t table_check_count;
  uint32_t table_check_capacity;

  // One-shot buffers: set by the first submission that passes validation.
  weft_atomic_uint32_t submitted;

  // The driver's compiled form, attached at end (see
  // weft_command_buffer_set_driver_data).
  void* driver_data;
  void (*driver_data_destroy)(void* data);
};

_Static_assert(offsetof(weft_command_buffer_t, resource) == 0,
               "the resource must be at offset 0");

static void weft_command_buffer_destroy(weft_command_buffer_t* command_buffer);

static const weft_command_buffer_vtable_t kCommandBufferVtable = {
    weft_command_buffer_destroy,
};

// --- Lifetime
// -----------------------------------------------------------------

weft_status_t weft_command_buffer_create(
    weft_device_t* device, weft_command_buffer_mode_t mode,
    weft_command_category_t categories, uint32_t binding_capacity,
    weft_command_buffer_t** out_command_buffer) {
  weft_status_t status = WEFT_OK;
  if (out_command_buffer) *out_command_buffer = NULL;
  if (!out_command_buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_command_buffer_create: out_command_buffer is NULL");
  } else if (!device) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT, "weft_command_buffer_create: device is NULL");
  } else if (mode != WEFT_COMMAND_BUFFER_MODE_ONE_SHOT &&
             mode != WEFT_COMMAND_BUFFER_MODE_REUSABLE) {
    status =
        WEFT_STATUS(INVALID_ARGUMENT,
                    "weft_command_buffer_create: mode 0x%x is not ONE_SHOT "
                    "(0x%x) or REUSABLE (0x%x)",
                    (unsigned)mode, (unsigned)WEFT_COMMAND_BUFFER_MODE_ONE_SHOT,
                    (unsigned)WEFT_COMMAND_BUFFER_MODE_REUSABLE);
  } else if (categories == 0 ||
             (categories &
              ~(weft_command_category_t)WEFT_COMMAND_CATEGORY_ANY) != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_command_buffer_create: categories 0x%x must be a "
                         "non-empty set of TRANSFER (0x%x) and DISPATCH "
                         "(0x%x)",
                         (unsigned)categories,
                         (unsigned)WEFT_COMMAND_CATEGORY_TRANSFER,
                         (unsigned)WEFT_COMMAND_CATEGORY_DISPATCH);
  }
  weft_command_buffer_t* command_buffer = NULL;
  if (weft_status_is_ok(status)) {
    status =
        weft_allocator_malloc(device->host_allocator, sizeof(*command_buffer),
                              (void**)&command_buffer);
  }
  if (weft_status_is_ok(status)) {
    weft_resource_initialize(WEFT_RESOURCE_TYPE_COMMAND_BUFFER,
                             &kCommandBufferVtable, &command_buffer->resource);
    command_buffer->device = device;
    weft_device_retain(device);
    command_buffer->allocator = device->host_allocator;
    command_buffer->mode = mode;
    command_buffer->categories = categories;
    command_buffer->binding_capacity = binding_capacity;
    command_buffer->state = WEFT_COMMAND_BUFFER_STATE_INITIAL;
    atomic_init(&command_buffer->submitted, 0);
    *out_command_buffer = command_buffer;
  }
  return status;
}

// Releases the resources one command retained.
static void weft_command_release_resources(const weft_command_t* command) {
  switch (command->type) {
    case WEFT_COMMAND_TYPE_FILL:
      if (command->fill.target.buffer) {
        weft_buffer_release(command->fill.target.buffer);
      }
      break;
    case WEFT_COMMAND_TYPE_UPDATE:
      if (command->update.target.buffer) {
        weft_buffer_release(command->update.target.buffer);
      }
      break;
    case WEFT_COMMAND_TYPE_COPY:
      if (command->copy.source.buffer) {
        weft_buffer_release(command->copy.source.buffer);
      }
      if (command->copy.target.buffer) {
        weft_buffer_release(command->copy.target.buffer);
      }
      break;
    case WEFT_COMMAND_TYPE_DISPATCH:
      for (uint32_t i = 0; i < command->dispatch.binding_count; ++i) {
        if (command->dispatch.bindings[i].buffer) {
          weft_buffer_release(command->dispatch.bindings[i].buffer);
        }
      }
      weft_executable_release(command->dispatch.executable);
      break;
    case WEFT_COMMAND_TYPE_BARRIER:
      break;
  }
}

static void weft_command_buffer_destroy(weft_command_buffer_t* command_buffer) {
  weft_allocator_t allocator = command_buffer->allocator;
  weft_device_t* device = command_buffer->device;
  if (command_buffer->driver_data_destroy) {
    command_buffer->driver_data_destroy(command_buffer->driver_data);
  }
  for (uint32_t i = 0; i < command_buffer->command_count; ++i) {
    weft_command_release_resources(&command_buffer->commands[i]);
  }
  weft_command_buffer_chunk_t* chunk = command_buffer->chunks;
  while (chunk) {
    weft_command_buffer_chunk_t* next = chunk->next;
    weft_allocator_free(allocator, chunk);
    chunk = next;
  }
  weft_allocator_free(allocator, command_buffer->commands);
  weft_allocator_free(allocator, command_buffer->slot_uses);
  weft_allocator_free(allocator, command_buffer->table_checks);
  weft_status_free(command_buffer->recording_status);
  weft_allocator_free(allocator, command_buffer);
  weft_device_release(device);
}

void weft_command_buffer_retain(weft_command_buffer_t* command_buffer) {
  weft_resource_retain(command_buffer);
}

void weft_command_buffer_release(weft_command_buffer_t* command_buffer) {
  weft_resource_release(command_buffer);
}

weft_command_buffer_mode_t weft_command_buffer_mode(
    const weft_command_buffer_t* command_buffer) {
  return command_buffer ? command_buffer->mode : 0;
}

uint32_t weft_command_buffer_binding_capacity(
    const weft_command_buffer_t* command_buffer) {
  return command_buffer ? command_buffer->binding_capacity : 0;
}

uint32_t weft_command_buffer_command_count(
    const weft_command_buffer_t* command_buffer) {
  return command_buffer ? command_buffer->command_count : 0;
}

const weft_command_t* weft_command_buffer_commands(
    const weft_command_buffer_t* command_buffer, uint32_t* out_count) {
  *out_count = command_buffer->command_count;
  return command_buffer->commands;
}

weft_device_t* weft_command_buffer_device(
    const weft_command_buffer_t* command_buffer) {
  return command_buffer->device;
}

void weft_command_buffer_set_driver_data(weft_command_buffer_t* command_buffer,
                                         void* data,
                                         void (*destroy)(void* data)) {
  command_buffer->driver_data = data;
  command_buffer->driver_data_destroy = destroy;
}

void* weft_command_buffer_driver_data(
    const weft_command_buffer_t* command_buffer,
    void (*destroy)(void* data)) {
  return command_buffer->driver_data_destroy == destroy
             ? command_buffer->driver_data
             : NULL;
}

uint32_t weft_command_buffer_required_binding_count(
    const weft_command_buffer_t* command_buffer) {
  return command_buffer->slot_use_count;
}

const char* weft_command_describe(const weft_command_t* command, char* buffer,
                                  size_t capacity) {
  snprintf(buffer, capacity, "command type %d", (int)command->type);
  switch (command->type) {
    case WEFT_COMMAND_TYPE_BARRIER:
      snprintf(buffer, capacity, "barrier");
      break;
    case WEFT_COMMAND_TYPE_FILL:
      snprintf(buffer, capacity, "fill");
      break;
    case WEFT_COMMAND_TYPE_UPDATE:
      snprintf(buffer, capacity, "update");
      break;
    case WEFT_COMMAND_TYPE_COPY:
      snprintf(buffer, capacity, "copy");
      break;
    case WEFT_COMMAND_TYPE_DISPATCH: {
      const weft_kernel_info_t* kernel = weft_executable_kernel_info(
          command->dispatch.executable, command->dispatch.kernel_ordinal);
      snprintf(buffer, capacity, "dispatch '%s'", kernel ? kernel->name : "?");
      break;
    }
  }
  return buffer;
}

weft_status_t weft_command_buffer_annotate_command(
    const weft_command_buffer_t* command_buffer, uint32_t command_index,
    weft_status_t status) {
  if (!weft_status_is_ok(status) &&
      command_index < command_buffer->command_count) {
    char description[96];
    status = weft_status_annotate(
        status, "while executing command %u (%s)", command_index,
        weft_command_describe(&command_buffer->commands[command_index],
                              description, sizeof(description)));
  }
  return status;
}

// --- Recording helpers
// --------------------------------------------------------

// Checks that recording calls are allowed now. Not a recording error: it is
// returned but not kept for end().
static weft_status_t weft_command_buffer_check_recording(
    const weft_command_buffer_t* command_buffer, const char* what) {
  weft_status_t status = WEFT_OK;
  if (!command_buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: command_buffer is NULL", what);
  } else if (command_buffer->state == WEFT_COMMAND_BUFFER_STATE_INITIAL) {
    status = WEFT_STATUS(FAILED_PRECONDITION,
                         "%s: command buffer is not recording (call begin "
                         "first)",
                         what);
  } else if (command_buffer->state == WEFT_COMMAND_BUFFER_STATE_ENDED) {
    status = WEFT_STATUS(FAILED_PRECONDITION,
                         "%s: command buffer is not recording (end was "
                         "already called)",
                         what);
  }
  return status;
}

// Keeps a clone of the first recording error for end(); returns |status|.
static weft_status_t weft_command_buffer_keep_error(
    weft_command_buffer_t* command_buffer, weft_status_t status) {
  if (!weft_status_is_ok(status) &&
      weft_status_is_ok(command_buffer->recording_status)) {
    command_buffer->recording_status = weft_status_clone(status);
  }
  return status;
}

static weft_status_t weft_command_buffer_check_category(
    const weft_command_buffer_t* command_buffer,
    weft_command_category_t category, const char* what) {
  weft_status_t status = WEFT_OK;
  if ((command_buffer->categories & category) == 0) {
    status = WEFT_STATUS(
        INVALID_ARGUMENT,
        "%s: command buffer was created without the %s "
        "category",
        what,
        category == WEFT_COMMAND_CATEGORY_DISPATCH ? "DISPATCH" : "TRANSFER");
  }
  return status;
}

// Checks one reference at record time. Direct: |usage| and the range
// against the buffer; |out_length| receives the resolved length. Indirect:
// the slot against the capacity and the range for overflow; |out_length|
// receives the length as given (possibly WEFT_WHOLE_BUFFER). |role| names
// the reference in messages ("target", "binding 2").
static weft_status_t weft_command_buffer_check_ref(
    const weft_command_buffer_t* command_buffer, weft_buffer_ref_t ref,
    weft_buffer_usage_t usage, const char* what, const char* role,
    weft_device_size_t* out_length) {
  weft_status_t status = WEFT_OK;
  *out_length = ref.length;
  if (ref.buffer) {
    status = weft_buffer_validate_usage(ref.buffer, usage, what);
    if (weft_status_is_ok(status)) {
      status =
          weft_buffer_validate_reach(ref.buffer, command_buffer->device->domain,
                                     command_buffer->device->id, what);
    }
    if (weft_status_is_ok(status)) {
      status = weft_buffer_validate_range(ref.buffer, ref.offset, ref.length,
                                          what, out_length);
    }
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "for the %s", role);
    }
  } else if (ref.slot >= command_buffer->binding_capacity) {
    status =
        WEFT_STATUS(OUT_OF_RANGE,
                    "%s: %s uses binding table slot %u but the command "
                    "buffer was created with binding capacity %u",
                    what, role, ref.slot, command_buffer->binding_capacity);
  } else if (ref.length != WEFT_WHOLE_BUFFER &&
             ref.offset > WEFT_WHOLE_BUFFER - ref.length) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "%s: %s range at offset %llu with length %llu "
                         "overflows",
                         what, role, (unsigned long long)ref.offset,
                         (unsigned long long)ref.length);
  }
  return status;
}

// Reserves room for one more command that uses slots below |slot_limit|
// and, if |table_check|, needs a table check. The only fallible step of a
// record call after validation.
static weft_status_t weft_command_buffer_reserve(
    weft_command_buffer_t* command_buffer, uint32_t slot_limit,
    bool table_check) {
  weft_status_t status = WEFT_OK;
  if (command_buffer->command_count == command_buffer->command_capacity) {
    uint32_t capacity = command_buffer->command_capacity
                            ? command_buffer->command_capacity * 2
                            : 16;
    void* commands = command_buffer->commands;
    status =
        weft_allocator_realloc(command_buffer->allocator,
                               capacity * sizeof(weft_command_t), &commands);
    if (weft_status_is_ok(status)) {
      command_buffer->commands = commands;
      command_buffer->command_capacity = capacity;
    }
  }
  if (weft_status_is_ok(status) &&
      slot_limit > command_buffer->slot_use_capacity) {
    uint32_t capacity = command_buffer->slot_use_capacity * 2;
    if (capacity < slot_limit) capacity = slot_limit;
    if (capacity > command_buffer->binding_capacity) {
      capacity = command_buffer->binding_capacity;
    }
    void* slot_uses = command_buffer->slot_uses;
    status = weft_allocator_realloc(
        command_buffer->allocator,
        (size_t)capacity * sizeof(weft_command_buffer_slot_use_t), &slot_uses);
    if (weft_status_is_ok(status)) {
      command_buffer->slot_uses = slot_uses;
      memset(command_buffer->slot_uses + command_buffer->slot_use_capacity, 0,
             (capacity - command_buffer->slot_use_capacity) *
                 sizeof(weft_command_buffer_slot_use_t));
      command_buffer->slot_use_capacity = capacity;
    }
  }
  if (weft_status_is_ok(status) && table_check &&
      command_buffer->table_check_count ==
          command_buffer->table_check_capacity) {
    uint32_t capacity = command_buffer->table_check_capacity
                            ? command_buffer->table_check_capacity * 2
                            : 8;
    void* table_checks = command_buffer->table_checks;
    status = weft_allocator_realloc(command_buffer->allocator,
                                    capacity * sizeof(uint32_t), &table_checks);
    if (weft_status_is_ok(status)) {
      command_buffer->table_checks = table_checks;
      command_buffer->table_check_capacity = capacity;
    }
  }
  return status;
}

// Allocates |byte_length| bytes of payload living as long as the command
// buffer (NULL for 0 bytes).
static weft_status_t weft_command_buffer_allocate_data(
    weft_command_buffer_t* command_buffer, size_t byte_length, void** out_ptr) {
  *out_ptr = NULL;
  weft_status_t status = WEFT_OK;
  size_t aligned_length =
      (byte_length + WEFT_COMMAND_BUFFER_DATA_ALIGNMENT - 1) &
      ~(size_t)(WEFT_COMMAND_BUFFER_DATA_ALIGNMENT - 1);
  weft_command_buffer_chunk_t* chunk = command_buffer->chunks;
  if (byte_length == 0) {
    // Nothing to allocate.
  } else if (aligned_length < byte_length) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "command buffer payload of %zu bytes is too large",
                         byte_length);
  } else if (!chunk || chunk->capacity - chunk->used < aligned_length) {
    size_t capacity = aligned_length > WEFT_COMMAND_BUFFER_CHUNK_SIZE
                          ? aligned_length
                          : WEFT_COMMAND_BUFFER_CHUNK_SIZE;
    status = weft_allocator_malloc_uninitialized(
        command_buffer->allocator,
        WEFT_COMMAND_BUFFER_CHUNK_HEADER_SIZE + capacity, (void**)&chunk);
    if (weft_status_is_ok(status)) {
      chunk->capacity = capacity;
      chunk->used = 0;
      chunk->next = command_buffer->chunks;
      command_buffer->chunks = chunk;
    }
  }
  if (weft_status_is_ok(status) && byte_length > 0) {
    *out_ptr =
        (uint8_t*)chunk + WEFT_COMMAND_BUFFER_CHUNK_HEADER_SIZE + chunk->used;
    chunk->used += aligned_length;
  }
  return status;
}

// Records how command |command_index| uses the slot of indirect |ref|
// (|length| as given, possibly WEFT_WHOLE_BUFFER). Space was reserved.
static void weft_command_buffer_note_slot_use(
    weft_command_buffer_t* command_buffer, weft_buffer_ref_t ref,
    weft_buffer_usage_t usage, uint32_t command_index) {
  if (ref.buffer) return;
  weft_command_buffer_slot_use_t* use = &command_buffer->slot_uses[ref.slot];
  weft_device_size_t min_length =
      ref.length == WEFT_WHOLE_BUFFER ? ref.offset : ref.offset + ref.length;
  if (use->usage == 0 || min_length > use->min_length) {
    use->command_index = command_index;
    use->offset = ref.offset;
    use->length = ref.length;
    use->min_length = min_length;
  }
  use->usage |= usage;
  if (ref.slot + 1 > command_buffer->slot_use_count) {
    command_buffer->slot_use_count = ref.slot + 1;
  }
}

// Slot limit (one past the slot) of |ref|, 0 for a direct reference.
static uint32_t weft_buffer_ref_slot_limit(weft_buffer_ref_t ref) {
  return ref.buffer ? 0 : ref.slot + 1;
}

// Appends |command| (space reserved) and returns its index.
static uint32_t weft_command_buffer_append(
    weft_command_buffer_t* command_buffer, const weft_command_t* command,
    bool table_check) {
  uint32_t index = command_buffer->command_count++;
  command_buffer->commands[index] = *command;
  if (table_check) {
    command_buffer->table_checks[command_buffer->table_check_count++] = index;
  }
  return index;
}

// --- Recording
// ----------------------------------------------------------------

weft_status_t weft_command_buffer_begin(weft_command_buffer_t* command_buffer) {
  weft_status_t status = WEFT_OK;
  if (!command_buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_command_buffer_begin: command_buffer is NULL");
  } else if (command_buffer->state == WEFT_COMMAND_BUFFER_STATE_RECORDING) {
    status = WEFT_STATUS(FAILED_PRECONDITION,
                         "weft_command_buffer_begin: command buffer is already "
                         "recording");
  } else if (command_buffer->state == WEFT_COMMAND_BUFFER_STATE_ENDED) {
    status = WEFT_STATUS(FAILED_PRECONDITION,
                         "weft_command_buffer_begin: command buffer was already "
                         "recorded (a command buffer is recorded once)");
  } else {
    command_buffer->state = WEFT_COMMAND_BUFFER_STATE_RECORDING;
  }
  return status;
}

weft_status_t weft_command_buffer_end(weft_command_buffer_t* command_buffer) {
  weft_status_t status = WEFT_OK;
  if (!command_buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_command_buffer_end: command_buffer is NULL");
  } else if (command_buffer->state != WEFT_COMMAND_BUFFER_STATE_RECORDING) {
    status =
        WEFT_STATUS(FAILED_PRECONDITION,
                    "weft_command_buffer_end: command buffer is not "
                    "recording (%s)",
                    command_buffer->state == WEFT_COMMAND_BUFFER_STATE_INITIAL
                        ? "begin was not called"
                        : "end was already called");
  } else {
    command_buffer->state = WEFT_COMMAND_BUFFER_STATE_ENDED;
    if (!weft_status_is_ok(command_buffer->recording_status)) {
      status = weft_status_annotate(
          weft_status_clone(command_buffer->recording_status),
          "first recording error, reported again by command_buffer_end");
    } else if (weft_device_vtable(command_buffer->device)
                   ->command_buffer_finalize) {
      // The driver compiles the recording now; a failure makes the
      // command buffer unsubmittable like any recording error.
      status = weft_command_buffer_keep_error(
          command_buffer,
          weft_device_vtable(command_buffer->device)
              ->command_buffer_finalize(command_buffer->device,
                                        command_buffer));
    }
    // Recorded: the device is no longer needed. Not holding it means a
    // queue_execute still waiting when the user lets go of everything
    // (device, command buffer, semaphores) cannot keep the device, and so
    // itself, alive through the command buffer.
    weft_device_release(command_buffer->device);
    command_buffer->device = NULL;
  }
  return status;
}

weft_status_t weft_command_buffer_barrier(
    weft_command_buffer_t* command_buffer) {
  weft_status_t status = weft_command_buffer_check_recording(
      command_buffer, "weft_command_buffer_barrier");
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_keep_error(
        command_buffer, weft_command_buffer_reserve(command_buffer, 0, false));
  }
  if (weft_status_is_ok(status)) {
    weft_command_t command;
    memset(&command, 0, sizeof(command));
    command.type = WEFT_COMMAND_TYPE_BARRIER;
    weft_command_buffer_append(command_buffer, &command, false);
  }
  return status;
}

static weft_status_t weft_command_buffer_record_fill(
    weft_command_buffer_t* command_buffer, weft_buffer_ref_t target,
    const void* pattern, uint32_t pattern_length) {
  const char* what = "weft_command_buffer_fill";
  weft_status_t status = weft_command_buffer_check_category(
      command_buffer, WEFT_COMMAND_CATEGORY_TRANSFER, what);
  if (weft_status_is_ok(status) && !pattern) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: pattern is NULL", what);
  }
  if (weft_status_is_ok(status)) {
    // The pattern length alone first, for a clear message.
    status = weft_buffer_validate_fill_pattern(0, 0, pattern_length, what);
  }
  weft_device_size_t length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_check_ref(command_buffer, target,
                                           WEFT_BUFFER_USAGE_TRANSFER_TARGET,
                                           what, "target", &length);
  }
  if (weft_status_is_ok(status)) {
    // Indirect: what is known now; the table's offset is checked at submit.
    status = weft_buffer_validate_fill_pattern(
        target.offset, length == WEFT_WHOLE_BUFFER ? 0 : length, pattern_length,
        what);
  }
  bool table_check = target.buffer == NULL;
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_reserve(
        command_buffer, weft_buffer_ref_slot_limit(target), table_check);
  }
  if (weft_status_is_ok(status)) {
    weft_command_t command;
    memset(&command, 0, sizeof(command));
    command.type = WEFT_COMMAND_TYPE_FILL;
    command.fill.target = target;
    command.fill.target.length = length;
    memcpy(&command.fill.pattern, pattern, pattern_length);
    command.fill.pattern_length = pattern_length;
    if (target.buffer) weft_buffer_retain(target.buffer);
    uint32_t index =
        weft_command_buffer_append(command_buffer, &command, table_check);
    weft_command_buffer_note_slot_use(command_buffer, command.fill.target,
                                      WEFT_BUFFER_USAGE_TRANSFER_TARGET, index);
  }
  return status;
}

weft_status_t weft_command_buffer_fill(weft_command_buffer_t* command_buffer,
                                       weft_buffer_ref_t target,
                                       const void* pattern,
                                       uint32_t pattern_length) {
  weft_status_t status = weft_command_buffer_check_recording(
      command_buffer, "weft_command_buffer_fill");
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_keep_error(
        command_buffer, weft_command_buffer_record_fill(
                            command_buffer, target, pattern, pattern_length));
  }
  return status;
}

static weft_status_t weft_command_buffer_record_update(
    weft_command_buffer_t* command_buffer, const void* source,
    weft_buffer_ref_t target) {
  const char* what = "weft_command_buffer_update";
  weft_status_t status = weft_command_buffer_check_category(
      command_buffer, WEFT_COMMAND_CATEGORY_TRANSFER, what);
  weft_device_size_t length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_check_ref(command_buffer, target,
                                           WEFT_BUFFER_USAGE_TRANSFER_TARGET,
                                           what, "target", &length);
  }
  if (weft_status_is_ok(status) && length == WEFT_WHOLE_BUFFER) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: an update through binding table slot %u needs "
                         "an explicit length (the size of the host data), "
                         "not WEFT_WHOLE_BUFFER",
                         what, target.slot);
  }
  if (weft_status_is_ok(status) && length > SIZE_MAX) {
    status =
        WEFT_STATUS(OUT_OF_RANGE, "%s: %llu bytes do not fit in host memory",
                    what, (unsigned long long)length);
  }
  if (weft_status_is_ok(status) && length > 0 && !source) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: source is NULL for %llu bytes",
                         what, (unsigned long long)length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_reserve(
        command_buffer, weft_buffer_ref_slot_limit(target), false);
  }
  void* data = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_allocate_data(command_buffer, (size_t)length,
                                               &data);
  }
  if (weft_status_is_ok(status)) {
    if (length > 0) memcpy(data, source, (size_t)length);
    weft_command_t command;
    memset(&command, 0, sizeof(command));
    command.type = WEFT_COMMAND_TYPE_UPDATE;
    command.update.target = target;
    command.update.target.length = length;
    command.update.source = data;
    if (target.buffer) weft_buffer_retain(target.buffer);
    uint32_t index =
        weft_command_buffer_append(command_buffer, &command, false);
    weft_command_buffer_note_slot_use(command_buffer, command.update.target,
                                      WEFT_BUFFER_USAGE_TRANSFER_TARGET, index);
  }
  return status;
}

weft_status_t weft_command_buffer_update(weft_command_buffer_t* command_buffer,
                                         const void* source,
                                         weft_buffer_ref_t target) {
  weft_status_t status = weft_command_buffer_check_recording(
      command_buffer, "weft_command_buffer_update");
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_keep_error(
        command_buffer,
        weft_command_buffer_record_update(command_buffer, source, target));
  }
  return status;
}

static weft_status_t weft_command_buffer_record_copy(
    weft_command_buffer_t* command_buffer, weft_buffer_ref_t source,
    weft_buffer_ref_t target) {
  const char* what = "weft_command_buffer_copy";
  weft_status_t status = weft_command_buffer_check_category(
      command_buffer, WEFT_COMMAND_CATEGORY_TRANSFER, what);
  // One whole-buffer side takes the other side's length; when both are
  // whole each resolves to the end of its buffer and they must match.
  if (source.length == WEFT_WHOLE_BUFFER) source.length = target.length;
  if (target.length == WEFT_WHOLE_BUFFER) target.length = source.length;
  if (weft_status_is_ok(status) && source.length != target.length) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: source length %llu and target length %llu "
                         "differ",
                         what, (unsigned long long)source.length,
                         (unsigned long long)target.length);
  }
  weft_device_size_t source_length = 0;
  weft_device_size_t target_length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_check_ref(command_buffer, source,
                                           WEFT_BUFFER_USAGE_TRANSFER_SOURCE,
                                           what, "source", &source_length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_check_ref(command_buffer, target,
                                           WEFT_BUFFER_USAGE_TRANSFER_TARGET,
                                           what, "target", &target_length);
  }
  // Copies through the binding table are checked in full at submit; with
  // both lengths whole they stay whole until then.
  bool table_check = !source.buffer || !target.buffer;
  if (weft_status_is_ok(status) && !table_check) {
    if (source_length != target_length) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: whole-buffer source (%llu bytes from offset "
                           "%llu) and target (%llu bytes from offset %llu) "
                           "differ in length",
                           what, (unsigned long long)source_length,
                           (unsigned long long)source.offset,
                           (unsigned long long)target_length,
                           (unsigned long long)target.offset);
    } else {
      status = weft_buffer_validate_copy_overlap(source.buffer, source.offset,
                                                 target.buffer, target.offset,
                                                 source_length, what);
    }
    source.length = source_length;
    target.length = target_length;
  }
  if (weft_status_is_ok(status)) {
    uint32_t slot_limit = weft_buffer_ref_slot_limit(source);
    if (weft_buffer_ref_slot_limit(target) > slot_limit) {
      slot_limit = weft_buffer_ref_slot_limit(target);
    }
    status =
        weft_command_buffer_reserve(command_buffer, slot_limit, table_check);
  }
  if (weft_status_is_ok(status)) {
    weft_command_t command;
    memset(&command, 0, sizeof(command));
    command.type = WEFT_COMMAND_TYPE_COPY;
    command.copy.source = source;
    command.copy.target = target;
    if (source.buffer) weft_buffer_retain(source.buffer);
    if (target.buffer) weft_buffer_retain(target.buffer);
    uint32_t index =
        weft_command_buffer_append(command_buffer, &command, table_check);
    weft_command_buffer_note_slot_use(command_buffer, source,
                                      WEFT_BUFFER_USAGE_TRANSFER_SOURCE, index);
    weft_command_buffer_note_slot_use(command_buffer, target,
                                      WEFT_BUFFER_USAGE_TRANSFER_TARGET, index);
  }
  return status;
}

weft_status_t weft_command_buffer_copy(weft_command_buffer_t* command_buffer,
                                       weft_buffer_ref_t source,
                                       weft_buffer_ref_t target) {
  weft_status_t status = weft_command_buffer_check_recording(
      command_buffer, "weft_command_buffer_copy");
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_keep_error(
        command_buffer,
        weft_command_buffer_record_copy(command_buffer, source, target));
  }
  return status;
}

static weft_status_t weft_command_buffer_record_dispatch(
    weft_command_buffer_t* command_buffer, weft_executable_t* executable,
    uint32_t kernel_ordinal, const uint32_t workgroup_count[3],
    uint32_t constant_count, const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings) {
  const char* what = "weft_command_buffer_dispatch";
  weft_status_t status = weft_command_buffer_check_category(
      command_buffer, WEFT_COMMAND_CATEGORY_DISPATCH, what);
  if (weft_status_is_ok(status)) {
    status = weft_dispatch_validate(executable, kernel_ordinal, workgroup_count,
                                    constant_count, binding_count, what);
  }
  if (weft_status_is_ok(status)) {
    status = weft_executable_validate_domain(executable,
                                             command_buffer->device->domain,
                                             command_buffer->device->id, what);
  }
  if (weft_status_is_ok(status) && constant_count > 0 && !constants) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: %u constants given but the constants array is "
                         "NULL",
                         what, constant_count);
  }
  if (weft_status_is_ok(status) && binding_count > 0 && !bindings) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: %u bindings given but the bindings array is "
                         "NULL",
                         what, binding_count);
  }
  uint32_t slot_limit = 0;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < binding_count; ++i) {
    char role[32];
    snprintf(role, sizeof(role), "binding %u", i);
    weft_device_size_t length = 0;
    status = weft_command_buffer_check_ref(command_buffer, bindings[i],
                                           WEFT_BUFFER_USAGE_DISPATCH_STORAGE,
                                           what, role, &length);
    uint32_t limit = weft_buffer_ref_slot_limit(bindings[i]);
    if (limit > slot_limit) slot_limit = limit;
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_reserve(command_buffer, slot_limit, false);
  }
  uint32_t* constants_copy = NULL;
  weft_buffer_ref_t* bindings_copy = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_allocate_data(
        command_buffer, (size_t)constant_count * sizeof(uint32_t),
        (void**)&constants_copy);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_allocate_data(
        command_buffer, (size_t)binding_count * sizeof(weft_buffer_ref_t),
        (void**)&bindings_copy);
  }
  if (weft_status_is_ok(status)) {
    if (constant_count > 0) {
      memcpy(constants_copy, constants, constant_count * sizeof(uint32_t));
    }
    for (uint32_t i = 0; i < binding_count; ++i) {
      bindings_copy[i] = bindings[i];
      if (bindings[i].buffer) {
        // The range was checked above; a whole length resolves to the end.
        if (bindings[i].length == WEFT_WHOLE_BUFFER) {
          bindings_copy[i].length =
              weft_buffer_byte_length(bindings[i].buffer) - bindings[i].offset;
        }
        bindings_copy[i].slot = 0;
        weft_buffer_retain(bindings[i].buffer);
      }
    }
    weft_executable_retain(executable);
    weft_command_t command;
    memset(&command, 0, sizeof(command));
    command.type = WEFT_COMMAND_TYPE_DISPATCH;
    command.dispatch.executable = executable;
    command.dispatch.kernel_ordinal = kernel_ordinal;
    memcpy(command.dispatch.workgroup_count, workgroup_count,
           sizeof(command.dispatch.workgroup_count));
    command.dispatch.constant_count = constant_count;
    command.dispatch.constants = constants_copy;
    command.dispatch.binding_count = binding_count;
    command.dispatch.bindings = bindings_copy;
    uint32_t index =
        weft_command_buffer_append(command_buffer, &command, false);
    for (uint32_t i = 0; i < binding_count; ++i) {
      weft_command_buffer_note_slot_use(command_buffer, bindings_copy[i],
                                        WEFT_BUFFER_USAGE_DISPATCH_STORAGE,
                                        index);
    }
  }
  return status;
}

weft_status_t weft_command_buffer_dispatch(
    weft_command_buffer_t* command_buffer, weft_executable_t* executable,
    uint32_t kernel_ordinal, const uint32_t workgroup_count[3],
    uint32_t constant_count, const uint32_t* constants, uint32_t binding_count,
    const weft_buffer_ref_t* bindings) {
  weft_status_t status = weft_command_buffer_check_recording(
      command_buffer, "weft_command_buffer_dispatch");
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_keep_error(
        command_buffer,
        weft_command_buffer_record_dispatch(
            command_buffer, executable, kernel_ordinal, workgroup_count,
            constant_count, constants, binding_count, bindings));
  }
  return status;
}

// --- Resolution and submit-time validation
// ------------------------------------

// Resolves an indirect |ref| against its binding-table entry.
static weft_status_t weft_command_buffer_resolve_indirect_ref(
    weft_buffer_ref_t ref, weft_binding_table_t binding_table, const char* what,
    weft_buffer_binding_t* out_binding) {
  weft_status_t status = WEFT_OK;
  const weft_buffer_binding_t* entry = NULL;
  if (ref.slot >= binding_table.count) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "%s: binding table slot %u is past the end of the "
                         "table (%u entries)",
                         what, ref.slot, binding_table.count);
  } else {
    entry = &binding_table.bindings[ref.slot];
    if (!entry->buffer) {
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "%s: binding table slot %u has no buffer", what,
                           ref.slot);
    }
  }
  weft_device_size_t entry_length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_buffer_validate_range(entry->buffer, entry->offset, entry->length,
                                   what, &entry_length),
        "binding table slot %u", ref.slot);
  }
  if (weft_status_is_ok(status)) {
    if (ref.offset > entry_length || (ref.length != WEFT_WHOLE_BUFFER &&
                                      ref.length > entry_length - ref.offset)) {
      status = WEFT_STATUS(
          OUT_OF_RANGE,
          "%s: range [%llu, %s%llu) is past the end of binding table slot "
          "%u (%llu bytes bound)",
          what, (unsigned long long)ref.offset,
          ref.length == WEFT_WHOLE_BUFFER ? "end of " : "",
          (unsigned long long)(ref.length == WEFT_WHOLE_BUFFER
                                   ? entry_length
                                   : ref.offset + ref.length),
          ref.slot, (unsigned long long)entry_length);
    } else {
      out_binding->buffer = entry->buffer;
      out_binding->offset = entry->offset + ref.offset;
      out_binding->length = ref.length == WEFT_WHOLE_BUFFER
                                ? entry_length - ref.offset
                                : ref.length;
    }
  }
  return status;
}

weft_status_t weft_command_buffer_resolve_ref(
    weft_buffer_ref_t ref, weft_binding_table_t binding_table, const char* what,
    weft_buffer_binding_t* out_binding) {
  weft_status_t status = WEFT_OK;
  memset(out_binding, 0, sizeof(*out_binding));
  if (ref.buffer) {
    weft_device_size_t length = 0;
    status = weft_buffer_validate_range(ref.buffer, ref.offset, ref.length,
                                        what, &length);
    if (weft_status_is_ok(status)) {
      out_binding->buffer = ref.buffer;
      out_binding->offset = ref.offset;
      out_binding->length = length;
    }
  } else {
    status = weft_command_buffer_resolve_indirect_ref(ref, binding_table, what,
                                                      out_binding);
  }
  return status;
}

weft_status_t weft_command_buffer_resolve_fill(
    const weft_command_fill_t* fill, weft_binding_table_t binding_table,
    const char* what, weft_buffer_binding_t* out_target) {
  weft_status_t status = weft_command_buffer_resolve_ref(
      fill->target, binding_table, what, out_target);
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_fill_pattern(
        out_target->offset, out_target->length, fill->pattern_length, what);
  }
  return status;
}

weft_status_t weft_command_buffer_resolve_copy(
    const weft_command_copy_t* copy, weft_binding_table_t binding_table,
    const char* what, weft_buffer_binding_t* out_source,
    weft_buffer_binding_t* out_target) {
  weft_buffer_ref_t source = copy->source;
  weft_buffer_ref_t target = copy->target;
  if (source.length == WEFT_WHOLE_BUFFER) source.length = target.length;
  if (target.length == WEFT_WHOLE_BUFFER) target.length = source.length;
  weft_status_t status = weft_status_annotate(
      weft_command_buffer_resolve_ref(source, binding_table, what, out_source),
      "copy source");
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(weft_command_buffer_resolve_ref(
                                      target, binding_table, what, out_target),
                                  "copy target");
  }
  if (weft_status_is_ok(status) && out_source->length != out_target->length) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: copy source (%llu bytes) and target (%llu "
                         "bytes) differ in length",
                         what, (unsigned long long)out_source->length,
                         (unsigned long long)out_target->length);
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_copy_overlap(
        out_source->buffer, out_source->offset, out_target->buffer,
        out_target->offset, out_source->length, what);
  }
  return status;
}

// Checks the table entry of slot |slot| against how the commands use it.
static weft_status_t weft_command_buffer_validate_slot(
    const weft_command_buffer_t* command_buffer, uint32_t slot,
    weft_binding_table_t binding_table, const char* what) {
  const weft_command_buffer_slot_use_t* use = &command_buffer->slot_uses[slot];
  const weft_buffer_binding_t* entry = &binding_table.bindings[slot];
  weft_status_t status = WEFT_OK;
  if (!entry->buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: binding table slot %u has no buffer but "
                         "command %u uses it",
                         what, slot, use->command_index);
  }
  weft_device_size_t entry_length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_buffer_validate_range(entry->buffer, entry->offset, entry->length,
                                   what, &entry_length),
        "binding table slot %u", slot);
  }
  if (weft_status_is_ok(status)) {
    status = weft_status_annotate(
        weft_buffer_validate_usage(entry->buffer, use->usage, what),
        "binding table slot %u", slot);
  }
  if (weft_status_is_ok(status) && entry_length < use->min_length) {
    char description[96];
    const weft_command_t* command =
        &command_buffer->commands[use->command_index];
    if (use->length == WEFT_WHOLE_BUFFER) {
      status = WEFT_STATUS(
          OUT_OF_RANGE,
          "%s: binding table slot %u binds %llu bytes but "
          "command %u (%s) uses it from offset %llu",
          what, slot, (unsigned long long)entry_length, use->command_index,
          weft_command_describe(command, description, sizeof(description)),
          (unsigned long long)use->offset);
    } else {
      status = WEFT_STATUS(
          OUT_OF_RANGE,
          "%s: binding table slot %u binds %llu bytes but "
          "command %u (%s) uses [%llu, %llu) of it",
          what, slot, (unsigned long long)entry_length, use->command_index,
          weft_command_describe(command, description, sizeof(description)),
          (unsigned long long)use->offset,
          (unsigned long long)(use->offset + use->length));
    }
  }
  return status;
}

// Checks a fill or copy that goes through the binding table in full.
static weft_status_t weft_command_buffer_validate_table_command(
    const weft_command_buffer_t* command_buffer, uint32_t index,
    weft_binding_table_t binding_table, const char* what) {
  const weft_command_t* command = &command_buffer->commands[index];
  weft_buffer_binding_t source;
  weft_buffer_binding_t target;
  weft_status_t status = WEFT_OK;
  if (command->type == WEFT_COMMAND_TYPE_FILL) {
    status = weft_command_buffer_resolve_fill(&command->fill, binding_table,
                                              what, &target);
  } else if (command->type == WEFT_COMMAND_TYPE_COPY) {
    status = weft_command_buffer_resolve_copy(&command->copy, binding_table,
                                              what, &source, &target);
  }
  if (!weft_status_is_ok(status)) {
    char description[96];
    status = weft_status_annotate(
        status, "in command %u (%s)", index,
        weft_command_describe(command, description, sizeof(description)));
  }
  return status;
}

weft_status_t weft_command_buffer_validate_submit(
    weft_command_buffer_t* command_buffer, weft_binding_table_t binding_table) {
  const char* what = "weft_device_queue_execute";
  weft_status_t status = WEFT_OK;
  if (!command_buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: command_buffer is NULL", what);
  } else if (command_buffer->state != WEFT_COMMAND_BUFFER_STATE_ENDED) {
    status = WEFT_STATUS(
        FAILED_PRECONDITION, "%s: command buffer is not ready (%s)", what,
        command_buffer->state == WEFT_COMMAND_BUFFER_STATE_INITIAL
            ? "it was never recorded: call begin and end"
            : "it is still recording: call end");
  } else if (!weft_status_is_ok(command_buffer->recording_status)) {
    char message[512];
    weft_status_format(command_buffer->recording_status, message,
                       sizeof(message));
    status =
        WEFT_STATUS(FAILED_PRECONDITION,
                    "%s: command buffer recording failed: %s", what, message);
  } else if (command_buffer->mode == WEFT_COMMAND_BUFFER_MODE_ONE_SHOT &&
             weft_atomic_load(&command_buffer->submitted,
                              memory_order_relaxed)) {
    status =
        WEFT_STATUS(FAILED_PRECONDITION,
                    "%s: one-shot command buffer was already submitted", what);
  } else if (binding_table.count > 0 && !binding_table.bindings) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: binding_table has %u entries but "
                         "binding_table.bindings is NULL",
                         what, binding_table.count);
  } else if (binding_table.count < command_buffer->slot_use_count) {
    uint32_t slot = command_buffer->slot_use_count - 1;
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "%s: command %u uses binding table slot %u but the "
                         "table has %u entries",
                         what, command_buffer->slot_uses[slot].command_index,
                         slot, binding_table.count);
  }
  for (uint32_t slot = 0;
       weft_status_is_ok(status) && slot < command_buffer->slot_use_count;
       ++slot) {
    if (command_buffer->slot_uses[slot].usage == 0) continue;
    status = weft_command_buffer_validate_slot(command_buffer, slot,
                                               binding_table, what);
  }
  for (uint32_t i = 0;
       weft_status_is_ok(status) && i < command_buffer->table_check_count;
       ++i) {
    status = weft_command_buffer_validate_table_command(
        command_buffer, command_buffer->table_checks[i], binding_table, what);
  }
  if (weft_status_is_ok(status) &&
      command_buffer->mode == WEFT_COMMAND_BUFFER_MODE_ONE_SHOT) {
    // Relaxed: only the exchange's atomicity matters (exactly one
    // submission wins); it publishes no other data.
    if (weft_atomic_exchange(&command_buffer->submitted, 1u,
                             memory_order_relaxed)) {
      status = WEFT_STATUS(FAILED_PRECONDITION,
                           "%s: one-shot command buffer was already "
                           "submitted",
                           what);
    }
  }
  return status;
}
