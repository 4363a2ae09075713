// weft: parameter streaming (see include/weft/parameter_stream.h).
//
// Built only on the public queue API, so it works on every driver: a client
// of the HAL, not part of it (src/io sits above src/hal; it borrows only the
// HAL's buffer checks and file display names, for identical messages).
//
// Slots. A stream owns min(max_reads_in_flight, chunks) slots; each has its
// own timeline semaphore and a timepoint. A chunk read on a slot signals
// (slot semaphore, v+1); with direct I/O the read lands in the slot's aligned
// staging buffer and a copy that waits v+1 signals v+2. The timepoint on the
// last value reports the chunk's completion, on whatever thread reached it: a
// device thread, or the submitting thread itself on inline drivers, where it
// may even fire inside the register call.
//
// The pump. Completions never start reads themselves (on an inline driver
// that would recurse once per chunk). A completion pushes its slot on the
// |completed| list and asks for a pump: it increments |pump_requests|, and
// only the thread that takes it from 0 pumps. The pumper processes every
// completed slot, starts reads on free slots, and then subtracts the
// requests it has served; a non-zero remainder means someone asked again
// meanwhile (their push happened before their increment), so it pumps
// again. No request is lost and no two threads pump at once. Everything the
// pump touches beyond the atomics below is owned by the pumper.
//
// Lifetime. The end is published by signalling |done| to 1 after storing
// |result|; wait blocks on that semaphore. A timepoint callback still runs
// after its push (it may pump, and may be the pumper that ends the stream),
// so each one is counted in |callbacks_running| from before its push until
// its last access, and release yields until that count is zero before it
// frees the stream. So the stream, and the device reference it holds, are
// always released on the caller's thread, never on a device thread.
#include "weft/parameter_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/arguments.h"
#include "base/atomics.h"
#include "base/mpsc_list.h"
#include "base/thread.h"
#include "hal/buffer_validation.h"
#include "hal/file_impl.h"

// Offsets, lengths and buffer addresses of O_DIRECT reads are multiples of
// this (the largest logical block size in common use).
#define WEFT_PARAMETER_STREAM_DIRECT_ALIGNMENT ((uint64_t)4096)

typedef struct weft_parameter_stream_slot_t {
  // Link on the stream's |completed| list.
  weft_mpsc_entry_t entry;
  weft_parameter_stream_t* stream;
  weft_semaphore_t* semaphore;
  // The value the slot's last operation signals.
  uint64_t value;
  weft_timepoint_t timepoint;
  // The chunk in flight (pumper-owned while the slot is free or being
  // issued; immutable while in flight).
  uint32_t span_index;
  uint64_t file_offset;
  uint64_t length;
  // Set by the timepoint callback before the push; read by the pumper after
  // popping it.
  weft_status_t status;
  // An error met after the read was accepted (its copy was refused): the
  // chunk fails with it once the read is done.
  weft_status_t submit_status;
  // Direct I/O staging: NULL when the stream reads no file directly.
  weft_buffer_t* staging;
  // The first 4096-aligned byte of |staging|.
  weft_device_size_t staging_offset;
  // Next free slot (pumper-owned), UINT32_MAX at the end.
  uint32_t next_free;
} weft_parameter_stream_slot_t;

typedef struct weft_parameter_stream_span_t {
  weft_parameter_span_t span;
  // The same file reopened with O_DIRECT, or NULL.
  weft_file_t* direct_file;
  // Bytes of the span not yet loaded (pumper-owned).
  uint64_t remaining;
} weft_parameter_stream_span_t;

struct weft_parameter_stream_t {
  weft_allocator_t allocator;
  weft_device_t* device;
  weft_queue_affinity_t affinity;
  weft_parameter_progress_fn_t progress_fn;
  void* progress_user_data;
  uint64_t chunk_size;
  uint32_t span_count;
  weft_parameter_stream_span_t* spans;
  uint32_t slot_count;
  weft_parameter_stream_slot_t* slots;
  uint64_t bytes_total;

  // Signalled to 1 once the stream ended and |result| is set.
  weft_semaphore_t* done;
  // The outcome; written once by the pumper before |done| is signalled.
  weft_status_t result;

  // The pump (see the file comment).
  weft_atomic_uint32_t pump_requests;
  weft_mpsc_list_t completed;
  weft_atomic_uint32_t cancel_requested;
  // Timepoint callbacks between their entry and their last access.
  weft_atomic_uint32_t callbacks_running;

  // Pumper-owned.
  uint32_t free_head;
  uint32_t next_span;         // the next chunk: span index...
  uint64_t next_span_offset;  // ...and offset within it
  uint32_t spans_loaded_count;
  uint64_t bytes_loaded_count;
  uint32_t in_flight_count;
  bool stopping;
  bool cancelled;
  bool ended;
  weft_status_t failure;

  // Published copies of the pumper's counters, for progress().
  weft_atomic_uint64_t bytes_loaded;
  weft_atomic_uint32_t spans_loaded;
  weft_atomic_uint32_t reads_in_flight;
  weft_atomic_uint32_t direct_io_used;
};

void weft_parameter_stream_options_initialize(
    weft_parameter_stream_options_t* out_options) {
  if (!out_options) return;
  memset(out_options, 0, sizeof(*out_options));
  out_options->affinity = WEFT_QUEUE_AFFINITY_ANY;
  out_options->max_reads_in_flight =
      WEFT_PARAMETER_STREAM_DEFAULT_READS_IN_FLIGHT;
  out_options->chunk_size = WEFT_PARAMETER_STREAM_DEFAULT_CHUNK_SIZE;
}

//===----------------------------------------------------------------------===//
// Destruction
//===----------------------------------------------------------------------===//

static void weft_parameter_stream_destroy(weft_parameter_stream_t* stream) {
  for (uint32_t i = 0; i < stream->span_count; ++i) {
    weft_parameter_stream_span_t* span = &stream->spans[i];
    if (span->span.file) weft_file_release(span->span.file);
    if (span->span.buffer) weft_buffer_release(span->span.buffer);
    if (span->direct_file) weft_file_release(span->direct_file);
  }
  for (uint32_t i = 0; i < stream->slot_count; ++i) {
    weft_parameter_stream_slot_t* slot = &stream->slots[i];
    if (slot->semaphore) weft_semaphore_release(slot->semaphore);
    if (slot->staging) weft_buffer_release(slot->staging);
    weft_status_free(slot->status);
    weft_status_free(slot->submit_status);
  }
  if (stream->done) weft_semaphore_release(stream->done);
  weft_status_free(stream->result);
  weft_status_free(stream->failure);
  weft_device_t* device = stream->device;
  weft_allocator_free(stream->allocator, stream);
  // Last: everything above was created on the device.
  if (device) weft_device_release(device);
}

//===----------------------------------------------------------------------===//
// Chunks
//===----------------------------------------------------------------------===//

static uint64_t weft_align_down(uint64_t value, uint64_t alignment) {
  return value - value % alignment;
}

// The length of the chunk of |span| that starts |offset| bytes into it.
// With direct I/O every chunk but a span's first ends on an aligned file
// offset, so each aligned read overlaps the previous one by at most nothing.
static uint64_t weft_parameter_stream_chunk_length(
    const weft_parameter_stream_t* stream,
    const weft_parameter_stream_span_t* span, uint64_t offset) {
  uint64_t limit = stream->chunk_size;
  if (span->direct_file) {
    uint64_t file_offset = span->span.file_offset + offset;
    limit -= file_offset % WEFT_PARAMETER_STREAM_DIRECT_ALIGNMENT;
  }
  uint64_t remaining = span->span.length - offset;
  return remaining < limit ? remaining : limit;
}

static void weft_parameter_stream_on_chunk_done(void* user_data,
                                                weft_timepoint_t* timepoint,
                                                weft_status_t status);

// Submits the chunk recorded in |slot| (span, offsets, length set). The
// slot's timepoint is registered only when the read was accepted; an error
// returned here means nothing is in flight on the slot.
static weft_status_t weft_parameter_stream_submit(
    weft_parameter_stream_t* stream, weft_parameter_stream_slot_t* slot) {
  const weft_parameter_stream_span_t* span = &stream->spans[slot->span_index];
  const uint64_t offset_in_span = slot->file_offset - span->span.file_offset;
  const weft_device_size_t target_offset =
      span->span.buffer_offset + offset_in_span;
  const uint64_t alignment = WEFT_PARAMETER_STREAM_DIRECT_ALIGNMENT;
  const uint64_t aligned_start = weft_align_down(slot->file_offset, alignment);
  const uint64_t aligned_end = weft_align_down(
      slot->file_offset + slot->length + alignment - 1, alignment);
  // The unaligned tail of a file cannot be read with O_DIRECT (the aligned
  // read would come back short): it goes through the normal file.
  const bool direct = span->direct_file && slot->staging &&
                      aligned_end <= weft_file_length(span->direct_file);

  weft_semaphore_t* semaphores[1] = {slot->semaphore};
  uint64_t read_value = slot->value + 1;
  weft_semaphore_list_t read_signal = {1, semaphores, &read_value};
  weft_status_t status = WEFT_OK;
  if (direct) {
    status = weft_device_queue_read(
        stream->device, stream->affinity, weft_semaphore_list_empty(),
        read_signal, span->direct_file, aligned_start, slot->staging,
        slot->staging_offset, aligned_end - aligned_start);
  } else {
    status = weft_device_queue_read(
        stream->device, stream->affinity, weft_semaphore_list_empty(),
        read_signal, span->span.file, slot->file_offset, span->span.buffer,
        target_offset, slot->length);
  }
  if (weft_status_is_ok(status)) {
    slot->value = read_value;
    if (direct) {
      // Relaxed: a flag for queries, ordered with nothing.
      weft_atomic_store(&stream->direct_io_used, 1u, memory_order_relaxed);
      uint64_t copy_value = read_value + 1;
      weft_semaphore_list_t copy_signal = {1, semaphores, &copy_value};
      weft_semaphore_list_t copy_wait = {1, semaphores, &read_value};
      weft_status_t copy_status = weft_device_queue_copy(
          stream->device, stream->affinity, copy_wait, copy_signal,
          slot->staging,
          slot->staging_offset + (slot->file_offset - aligned_start),
          span->span.buffer, target_offset, slot->length);
      if (weft_status_is_ok(copy_status)) {
        slot->value = copy_value;
      } else {
        // The read is in flight: let it finish, then fail the chunk.
        slot->submit_status = copy_status;
      }
    }
    slot->timepoint.fn = weft_parameter_stream_on_chunk_done;
    slot->timepoint.user_data = slot;
    weft_semaphore_register_timepoint(slot->semaphore, slot->value,
                                      &slot->timepoint);
  }
  return status;
}

// Annotates a chunk's error with the span it belongs to.
static weft_status_t weft_parameter_stream_annotate(
    const weft_parameter_stream_t* stream, uint32_t span_index,
    uint64_t file_offset, weft_status_t status) {
  char name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
  return weft_status_annotate(
      status, "while streaming span %u (file %s, offset %" PRIu64 ")",
      span_index,
      weft_file_display_name(stream->spans[span_index].span.file, name,
                             sizeof(name)),
      file_offset);
}

// Keeps the first failure (and stops the stream); later ones are freed.
static void weft_parameter_stream_record_failure(
    weft_parameter_stream_t* stream, weft_status_t status) {
  if (weft_status_is_ok(stream->failure)) {
    stream->failure = status;
  } else {
    weft_status_free(status);
  }
  stream->stopping = true;
}

static void weft_parameter_stream_publish_counts(
    weft_parameter_stream_t* stream) {
  // Relaxed: progress snapshots are advisory; the end is published by
  // |done|.
  weft_atomic_store(&stream->bytes_loaded, stream->bytes_loaded_count,
                    memory_order_relaxed);
  weft_atomic_store(&stream->spans_loaded, stream->spans_loaded_count,
                    memory_order_relaxed);
  weft_atomic_store(&stream->reads_in_flight, stream->in_flight_count,
                    memory_order_relaxed);
}

// Starts chunks on free slots until none is free, every chunk is issued or
// the stream is stopping.
static void weft_parameter_stream_issue(weft_parameter_stream_t* stream) {
  // Relaxed: the flag carries no data, and the cancel's pump request
  // (acq_rel) makes the pumper come back here after it was set.
  if (!stream->stopping &&
      weft_atomic_load(&stream->cancel_requested, memory_order_relaxed)) {
    stream->cancelled = true;
    stream->stopping = true;
  }
  for (;;) {
    // Skip finished (and zero-length) spans first, so that the end check
    // sees next_span == span_count even when no slot is free.
    while (stream->next_span < stream->span_count &&
           stream->next_span_offset >=
               stream->spans[stream->next_span].span.length) {
      ++stream->next_span;
      stream->next_span_offset = 0;
    }
    if (stream->stopping || stream->free_head == UINT32_MAX ||
        stream->next_span >= stream->span_count) {
      break;
    }
    weft_parameter_stream_span_t* span = &stream->spans[stream->next_span];
    weft_parameter_stream_slot_t* slot = &stream->slots[stream->free_head];
    uint64_t length = weft_parameter_stream_chunk_length(
        stream, span, stream->next_span_offset);
    slot->span_index = stream->next_span;
    slot->file_offset = span->span.file_offset + stream->next_span_offset;
    slot->length = length;
    stream->free_head = slot->next_free;
    stream->next_span_offset += length;
    ++stream->in_flight_count;
    weft_status_t status = weft_parameter_stream_submit(stream, slot);
    if (!weft_status_is_ok(status)) {
      --stream->in_flight_count;
      slot->next_free = stream->free_head;
      stream->free_head = (uint32_t)(slot - stream->slots);
      weft_parameter_stream_record_failure(
          stream, weft_parameter_stream_annotate(stream, slot->span_index,
                                                 slot->file_offset, status));
    }
  }
  weft_parameter_stream_publish_counts(stream);
}

// Accounts one completed slot and returns it to the free list. Returns true
// when the chunk loaded.
static bool weft_parameter_stream_retire(weft_parameter_stream_t* stream,
                                         weft_parameter_stream_slot_t* slot) {
  weft_status_t status = slot->status;
  slot->status = WEFT_OK;
  if (!weft_status_is_ok(slot->submit_status)) {
    weft_status_free(status);
    status = slot->submit_status;
    slot->submit_status = WEFT_OK;
  }
  --stream->in_flight_count;
  slot->next_free = stream->free_head;
  stream->free_head = (uint32_t)(slot - stream->slots);
  bool loaded = weft_status_is_ok(status);
  if (loaded) {
    weft_parameter_stream_span_t* span = &stream->spans[slot->span_index];
    stream->bytes_loaded_count += slot->length;
    span->remaining -= slot->length;
    if (span->remaining == 0) ++stream->spans_loaded_count;
  } else {
    weft_parameter_stream_record_failure(
        stream, weft_parameter_stream_annotate(stream, slot->span_index,
                                               slot->file_offset, status));
  }
  return loaded;
}

static weft_parameter_progress_t weft_parameter_stream_snapshot(
    weft_parameter_stream_t* stream) {
  weft_parameter_progress_t progress;
  memset(&progress, 0, sizeof(progress));
  progress.bytes_total = stream->bytes_total;
  progress.span_count = stream->span_count;
  // Relaxed: see weft_parameter_stream_publish_counts.
  progress.bytes_loaded =
      weft_atomic_load(&stream->bytes_loaded, memory_order_relaxed);
  progress.spans_loaded =
      weft_atomic_load(&stream->spans_loaded, memory_order_relaxed);
  progress.reads_in_flight =
      weft_atomic_load(&stream->reads_in_flight, memory_order_relaxed);
  return progress;
}

// One round of the pump: retire what completed (refilling each freed slot
// before reporting progress, so snapshots show the reads really in
// flight), start what can start, and end the stream when nothing is left.
static void weft_parameter_stream_pump_once(weft_parameter_stream_t* stream) {
  weft_mpsc_entry_t* entry = weft_mpsc_list_pop_all(&stream->completed);
  while (entry) {
    weft_parameter_stream_slot_t* slot =
        weft_container_of(entry, weft_parameter_stream_slot_t, entry);
    entry = entry->next;
    bool loaded = weft_parameter_stream_retire(stream, slot);
    weft_parameter_stream_issue(stream);
    if (loaded && stream->progress_fn) {
      weft_parameter_progress_t progress =
          weft_parameter_stream_snapshot(stream);
      stream->progress_fn(stream->progress_user_data, &progress);
    }
  }
  weft_parameter_stream_issue(stream);
  if (!stream->ended && stream->in_flight_count == 0 &&
      (stream->stopping || stream->next_span >= stream->span_count)) {
    stream->ended = true;
    if (!weft_status_is_ok(stream->failure)) {
      stream->result = stream->failure;
      stream->failure = WEFT_OK;
    } else if (stream->cancelled) {
      stream->result =
          WEFT_STATUS(CANCELLED,
                      "parameter stream cancelled after %" PRIu64 " of %" PRIu64
                      " bytes (%u of %u spans loaded)",
                      stream->bytes_loaded_count, stream->bytes_total,
                      stream->spans_loaded_count, stream->span_count);
    }
    // Publishes |result| (the semaphore's release) to waiters. It cannot
    // fail: nobody else signals or fails |done|.
    weft_status_ignore(weft_semaphore_signal(stream->done, 1));
  }
}

// Asks for a pump; runs it when no other thread is pumping.
static void weft_parameter_stream_pump(weft_parameter_stream_t* stream) {
  // Acq_rel: the increment publishes this thread's completed push to the
  // pumper, and taking the count from 0 acquires the last pumper's writes.
  // Otherwise the current pumper sees the request and goes around again.
  if (weft_atomic_fetch_add(&stream->pump_requests, 1, memory_order_acq_rel) ==
      0) {
    uint32_t requests = 1;
    do {
      weft_parameter_stream_pump_once(stream);
      // Acq_rel: releases this round's writes to the next pumper and
      // acquires the pushes behind the requests that arrived meanwhile.
      requests = weft_atomic_fetch_sub(&stream->pump_requests, requests,
                                       memory_order_acq_rel) -
                 requests;
    } while (requests != 0);
  }
}

static void weft_parameter_stream_on_chunk_done(void* user_data,
                                                weft_timepoint_t* timepoint,
                                                weft_status_t status) {
  (void)timepoint;
  weft_parameter_stream_slot_t* slot = (weft_parameter_stream_slot_t*)user_data;
  weft_parameter_stream_t* stream = slot->stream;
  // Counted before the push: until then the slot is in flight, so the
  // stream cannot have ended and nobody is freeing it. Relaxed: the push
  // (release) orders it before any pump that could end the stream.
  weft_atomic_fetch_add(&stream->callbacks_running, 1, memory_order_relaxed);
  slot->status = status;
  weft_mpsc_list_push(&stream->completed, &slot->entry);
  weft_parameter_stream_pump(stream);
  // Release: the last access; release's acquire load then sees everything
  // this callback did before it frees the stream.
  weft_atomic_fetch_sub(&stream->callbacks_running, 1, memory_order_release);
}

//===----------------------------------------------------------------------===//
// Start
//===----------------------------------------------------------------------===//

// Returns |status| (consumed) with "parameter_stream_start: span I: "
// before its message.
static weft_status_t weft_parameter_stream_prefix(uint32_t span_index,
                                                  weft_status_t status) {
  weft_status_t prefixed = WEFT_OK;
  if (!weft_status_is_ok(status)) {
    prefixed = weft_status_make_(__FILE__, __LINE__, weft_status_code(status),
                                 "parameter_stream_start: span %u: %s",
                                 span_index, weft_status_message(status));
    weft_status_free(status);
  }
  return prefixed;
}

static weft_status_t weft_parameter_stream_validate_span(
    const weft_parameter_span_t* span, uint32_t index) {
  weft_status_t status = WEFT_OK;
  char what[64];
  snprintf(what, sizeof(what), "parameter_stream_start: span %u", index);
  if (!span->file || !span->buffer) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s: %s is NULL", what,
                         span->file ? "buffer" : "file");
  }
  if (weft_status_is_ok(status)) {
    status = weft_parameter_stream_prefix(
        index,
        weft_file_validate_read(span->file, span->file_offset, span->length));
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_usage(
        span->buffer, WEFT_BUFFER_USAGE_TRANSFER_TARGET, what);
  }
  if (weft_status_is_ok(status) && span->length == WEFT_WHOLE_BUFFER) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: the length must be given, not "
                         "WEFT_WHOLE_BUFFER",
                         what);
  }
  weft_device_size_t length = 0;
  if (weft_status_is_ok(status)) {
    status = weft_buffer_validate_range(span->buffer, span->buffer_offset,
                                        span->length, what, &length);
  }
  return status;
}

static weft_status_t weft_parameter_stream_validate_options(
    const weft_parameter_stream_options_t* options) {
  weft_status_t status = WEFT_OK;
  if (options->max_reads_in_flight == 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "parameter_stream_start: max_reads_in_flight must "
                         "be at least 1");
  } else if (options->chunk_size == 0 || options->chunk_size > UINT64_MAX / 4) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "parameter_stream_start: chunk_size %" PRIu64
                         " must be above 0 and below 2^62",
                         options->chunk_size);
  }
  return status;
}

// Opens |file| again with O_DIRECT. NULL (no error) when it cannot be: a
// memory file, a stream, or a file system without O_DIRECT (EINVAL).
static weft_file_t* weft_parameter_stream_open_direct(
    weft_file_t* file, weft_allocator_t allocator) {
  weft_file_t* direct_file = NULL;
  int fd = weft_file_fd(file);
  if (fd >= 0 && !weft_file_is_stream(file) &&
      weft_file_length_is_known(file)) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int direct_fd = -1;
    do {
      direct_fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    } while (direct_fd < 0 && errno == EINTR);
    if (direct_fd >= 0) {
      // Dups the descriptor; ours is closed either way.
      weft_status_t status = weft_file_from_fd(direct_fd, WEFT_FILE_ACCESS_READ,
                                               allocator, &direct_file);
      if (!weft_status_is_ok(status)) {
        weft_status_ignore(status);  // read normally instead
        direct_file = NULL;
      }
      close(direct_fd);
    }
  }
  return direct_file;
}

// Finds or opens the direct twin of every span's file (one per distinct
// file; each span holds its own reference).
static void weft_parameter_stream_open_direct_files(
    weft_parameter_stream_t* stream) {
  for (uint32_t i = 0; i < stream->span_count; ++i) {
    weft_parameter_stream_span_t* span = &stream->spans[i];
    if (span->span.length == 0) continue;
    bool seen = false;
    for (uint32_t j = i; j-- > 0 && !seen;) {
      if (stream->spans[j].span.file == span->span.file &&
          stream->spans[j].span.length != 0) {
        seen = true;
        span->direct_file = stream->spans[j].direct_file;
        if (span->direct_file) weft_file_retain(span->direct_file);
      }
    }
    if (!seen) {
      span->direct_file =
          weft_parameter_stream_open_direct(span->span.file, stream->allocator);
    }
  }
}

// Gives every slot an aligned staging buffer of chunk_size + 2 alignments
// (room for a chunk's unaligned head and tail).
static weft_status_t weft_parameter_stream_allocate_staging(
    weft_parameter_stream_t* stream) {
  const uint64_t alignment = WEFT_PARAMETER_STREAM_DIRECT_ALIGNMENT;
  weft_buffer_params_t params;
  memset(&params, 0, sizeof(params));
  params.type = WEFT_MEMORY_TYPE_DEVICE_LOCAL | WEFT_MEMORY_TYPE_HOST_VISIBLE;
  params.usage = WEFT_BUFFER_USAGE_TRANSFER | WEFT_BUFFER_USAGE_MAPPING_SCOPED;
  // One more alignment so the aligned part fits wherever the memory starts.
  const weft_device_size_t size = stream->chunk_size + 3 * alignment;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < stream->slot_count;
       ++i) {
    weft_parameter_stream_slot_t* slot = &stream->slots[i];
    status = weft_device_allocate_buffer(stream->device, params, size,
                                         &slot->staging);
    weft_buffer_mapping_t mapping;
    memset(&mapping, 0, sizeof(mapping));
    if (weft_status_is_ok(status)) {
      status = weft_buffer_map_range(slot->staging, WEFT_MAPPING_MODE_SCOPED,
                                     WEFT_MEMORY_ACCESS_WRITE, 0, alignment,
                                     &mapping);
    }
    if (weft_status_is_ok(status)) {
      uintptr_t address = (uintptr_t)mapping.contents;
      slot->staging_offset = (alignment - address % alignment) % alignment;
      weft_buffer_unmap_range(&mapping);
    }
  }
  return status;
}

// Allocates the stream and copies and retains the spans.
static weft_status_t weft_parameter_stream_allocate(
    weft_device_t* device, const weft_parameter_span_t* spans,
    uint32_t span_count, uint32_t slot_count, weft_allocator_t allocator,
    weft_parameter_stream_t** out_stream) {
  const size_t spans_size =
      (size_t)span_count * sizeof(weft_parameter_stream_span_t);
  const size_t slots_size =
      (size_t)slot_count * sizeof(weft_parameter_stream_slot_t);
  weft_parameter_stream_t* stream = NULL;
  weft_status_t status = weft_allocator_malloc(
      allocator, sizeof(*stream) + spans_size + slots_size, (void**)&stream);
  if (weft_status_is_ok(status)) {
    stream->allocator = allocator;
    stream->device = device;
    weft_device_retain(device);
    stream->span_count = span_count;
    stream->spans = (weft_parameter_stream_span_t*)(stream + 1);
    stream->slot_count = slot_count;
    stream->slots =
        (weft_parameter_stream_slot_t*)((uint8_t*)stream->spans + spans_size);
    atomic_init(&stream->pump_requests, 0);
    atomic_init(&stream->cancel_requested, 0);
    atomic_init(&stream->callbacks_running, 0);
    atomic_init(&stream->bytes_loaded, 0);
    atomic_init(&stream->spans_loaded, 0);
    atomic_init(&stream->reads_in_flight, 0);
    atomic_init(&stream->direct_io_used, 0);
    weft_mpsc_list_initialize(&stream->completed);
    for (uint32_t i = 0; i < span_count; ++i) {
      weft_parameter_stream_span_t* span = &stream->spans[i];
      span->span = spans[i];
      span->remaining = spans[i].length;
      weft_file_retain(span->span.file);
      weft_buffer_retain(span->span.buffer);
      stream->bytes_total += spans[i].length;
      if (spans[i].length == 0) ++stream->spans_loaded_count;
    }
    stream->free_head = slot_count ? 0 : UINT32_MAX;
    for (uint32_t i = 0; i < slot_count; ++i) {
      stream->slots[i].stream = stream;
      stream->slots[i].next_free = i + 1 < slot_count ? i + 1 : UINT32_MAX;
    }
  }
  *out_stream = stream;
  return status;
}

weft_status_t weft_parameter_stream_start(
    weft_device_t* device, const weft_parameter_span_t* spans,
    uint32_t span_count, const weft_parameter_stream_options_t* options,
    weft_allocator_t allocator, weft_parameter_stream_t** out_stream) {
  if (out_stream) *out_stream = NULL;
  weft_parameter_stream_options_t default_options;
  if (!options) {
    weft_parameter_stream_options_initialize(&default_options);
    options = &default_options;
  }
  weft_status_t status = weft_arguments_require(
      __func__, "device,spans,out_stream",
      (const void* const[]){device, span_count ? (const void*)spans : "",
                            out_stream},
      3);
  if (weft_status_is_ok(status)) {
    status = weft_parameter_stream_validate_options(options);
  }
  uint64_t chunk_size = options->chunk_size;
  if (options->direct_io) {
    const uint64_t alignment = WEFT_PARAMETER_STREAM_DIRECT_ALIGNMENT;
    chunk_size = (chunk_size + alignment - 1) / alignment * alignment;
  }
  // Slots: no more than the chunks (an upper bound: with direct I/O a
  // span's unaligned start may add one), and one when any file is a stream,
  // whose reads must run one after another in order.
  uint64_t chunk_count = 0;
  bool has_stream_file = false;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < span_count; ++i) {
    status = weft_parameter_stream_validate_span(&spans[i], i);
    if (weft_status_is_ok(status)) {
      uint64_t length = spans[i].length;
      chunk_count += length / chunk_size + (length % chunk_size != 0) +
                     (options->direct_io && length != 0);
      has_stream_file |= weft_file_is_stream(spans[i].file);
    }
  }
  uint32_t slot_count = has_stream_file ? 1u : options->max_reads_in_flight;
  if (chunk_count < slot_count) slot_count = (uint32_t)chunk_count;

  weft_parameter_stream_t* stream = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_parameter_stream_allocate(device, spans, span_count,
                                            slot_count, allocator, &stream);
  }
  if (weft_status_is_ok(status)) {
    stream->affinity = options->affinity;
    stream->progress_fn = options->progress_fn;
    stream->progress_user_data = options->progress_user_data;
    stream->chunk_size = chunk_size;
    status = weft_device_create_semaphore(device, 0, &stream->done);
  }
  for (uint32_t i = 0; weft_status_is_ok(status) && i < slot_count; ++i) {
    status =
        weft_device_create_semaphore(device, 0, &stream->slots[i].semaphore);
  }
  if (weft_status_is_ok(status) && options->direct_io) {
    weft_parameter_stream_open_direct_files(stream);
    bool any_direct = false;
    for (uint32_t i = 0; i < span_count && !any_direct; ++i) {
      any_direct = stream->spans[i].direct_file != NULL;
    }
    if (any_direct) status = weft_parameter_stream_allocate_staging(stream);
  }
  if (weft_status_is_ok(status)) {
    *out_stream = stream;
    weft_parameter_stream_pump(stream);
  } else if (stream) {
    weft_parameter_stream_destroy(stream);
  }
  return status;
}

//===----------------------------------------------------------------------===//
// Control and queries
//===----------------------------------------------------------------------===//

void weft_parameter_stream_cancel(weft_parameter_stream_t* stream) {
  if (!stream) return;
  // Relaxed: see weft_parameter_stream_issue.
  weft_atomic_store(&stream->cancel_requested, 1u, memory_order_relaxed);
  weft_parameter_stream_pump(stream);
}

weft_status_t weft_parameter_stream_wait(weft_parameter_stream_t* stream,
                                         weft_timeout_t timeout) {
  weft_status_t status = weft_arguments_require(
      __func__, "stream", (const void* const[]){stream}, 1);
  const bool checked = weft_status_is_ok(status);
  if (checked) status = weft_semaphore_wait(stream->done, 1, timeout);
  if (!checked) {
    // The argument check's error.
  } else if (weft_status_is_ok(status)) {
    // |result| was written before |done| was signalled and never changes.
    status = weft_status_clone(stream->result);
  } else if (weft_status_is(status, WEFT_STATUS_DEADLINE_EXCEEDED)) {
    weft_status_free(status);
    weft_parameter_progress_t progress = weft_parameter_stream_snapshot(stream);
    status = WEFT_STATUS(
        DEADLINE_EXCEEDED,
        "parameter_stream_wait: the stream is still running (%" PRIu64
        " of %" PRIu64 " bytes loaded, %u reads in flight)",
        progress.bytes_loaded, progress.bytes_total, progress.reads_in_flight);
  }
  return status;
}

weft_parameter_progress_t weft_parameter_stream_progress(
    weft_parameter_stream_t* stream) {
  weft_parameter_progress_t none;
  memset(&none, 0, sizeof(none));
  return stream ? weft_parameter_stream_snapshot(stream) : none;
}

bool weft_parameter_stream_direct_io_used(weft_parameter_stream_t* stream) {
  // Relaxed: see weft_parameter_stream_submit.
  return stream &&
         weft_atomic_load(&stream->direct_io_used, memory_order_relaxed) != 0;
}

void weft_parameter_stream_release(weft_parameter_stream_t* stream) {
  if (stream) {
    weft_parameter_stream_cancel(stream);
    weft_status_ignore(
        weft_parameter_stream_wait(stream, weft_timeout_infinite()));
    // The stream ended, so no callback can start; the ones still inside
    // are a few instructions from their end (one pump round at most).
    // Acquire: pairs with the callbacks' release decrement.
    while (weft_atomic_load(&stream->callbacks_running, memory_order_acquire)) {
      weft_thread_yield();
    }
    weft_parameter_stream_destroy(stream);
  }
}

weft_status_t weft_parameter_stream_load(
    weft_device_t* device, const weft_parameter_span_t* spans,
    uint32_t span_count, const weft_parameter_stream_options_t* options,
    weft_allocator_t allocator) {
  weft_parameter_stream_t* stream = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "device,spans",
      (const void* const[]){device, span_count ? (const void*)spans : ""}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_parameter_stream_start(device, spans, span_count, options,
                                         allocator, &stream);
  }
  if (weft_status_is_ok(status)) {
    status = weft_parameter_stream_wait(stream, weft_timeout_infinite());
    weft_parameter_stream_release(stream);
  }
  return status;
}
