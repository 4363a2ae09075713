// weft: parameter streaming, many file ranges loaded into device buffers.
//
// A model's parameters are a few large files (or many small ones) whose
// ranges belong in device buffers. Reading them one after another leaves the
// storage idle between requests; a stream keeps up to |max_reads_in_flight|
// queue reads outstanding at once (each span split into chunks of at most
// |chunk_size| bytes) and starts the next chunk as each one completes, on
// whichever thread completed it. Nothing blocks a thread but the caller's
// own wait.
//
//   weft_parameter_span_t spans[] = {
//       {file, 0, weights0, 0, 4 << 20},
//       {file, 4 << 20, weights1, 0, 1 << 20},
//   };
//   weft_parameter_stream_options_t options;
//   weft_parameter_stream_options_initialize(&options);
//   options.max_reads_in_flight = 32;
//   WEFT_RETURN_IF_ERROR(weft_parameter_stream_load(device, spans, 2,
//                                                   &options, allocator));
//
// Progress is reported through a callback after each chunk. Cancelling stops
// new reads; those in flight finish, and the stream ends with CANCELLED. A
// failed read (a truncated file: OUT_OF_RANGE naming the byte; an unreadable
// one: the OS's reason and the file's name) ends the stream with that error,
// annotated with the span it belonged to; no new reads start after it.
//
// Direct I/O (|direct_io|): where the file system supports O_DIRECT, chunks
// are read with it into aligned staging buffers and copied into place, so
// cold reads bypass the page cache instead of filling it. Where it does not
// (or the file is a memory file or a stream), the stream reads normally;
// weft_parameter_stream_direct_io_used says which happened.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_PARAMETER_STREAM_H_
#define WEFT_PARAMETER_STREAM_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/device.h"
#include "weft/file.h"
#include "weft/semaphore.h"
#include "weft/status.h"
#include "weft/time.h"

#ifdef __cplusplus
extern "C" {
#endif

// One range of a file and where it goes.
typedef struct weft_parameter_span_t {
  weft_file_t* file;
  uint64_t file_offset;
  weft_buffer_t* buffer;  // needs TRANSFER usage
  weft_device_size_t buffer_offset;
  weft_device_size_t length;
} weft_parameter_span_t;

// A snapshot of a stream's progress.
typedef struct weft_parameter_progress_t {
  uint64_t bytes_loaded;
  uint64_t bytes_total;
  uint32_t spans_loaded;
  uint32_t span_count;
  uint32_t reads_in_flight;
} weft_parameter_progress_t;

// Called after every completed chunk, on the thread that completed it (a
// device thread, or the caller's for inline drivers). Must not block or
// release the stream.
typedef void (*weft_parameter_progress_fn_t)(
    void* user_data, const weft_parameter_progress_t* progress);

typedef struct weft_parameter_stream_options_t {
  // The queue the reads go to.
  weft_queue_affinity_t affinity;
  // The most reads outstanding at once (>= 1).
  uint32_t max_reads_in_flight;
  // The most bytes one read moves (> 0; rounded up to the direct-I/O
  // alignment when |direct_io|).
  uint64_t chunk_size;
  // Read through O_DIRECT where supported (see above).
  bool direct_io;
  weft_parameter_progress_fn_t progress_fn;
  void* progress_user_data;
} weft_parameter_stream_options_t;

#define WEFT_PARAMETER_STREAM_DEFAULT_READS_IN_FLIGHT 16u
#define WEFT_PARAMETER_STREAM_DEFAULT_CHUNK_SIZE ((uint64_t)4 << 20)

// Sets the defaults above, any queue, no direct I/O, no progress callback.
void weft_parameter_stream_options_initialize(
    weft_parameter_stream_options_t* out_options);

typedef struct weft_parameter_stream_t weft_parameter_stream_t;

// Validates every span (READ access, ranges within the file's known length
// and the buffer, TRANSFER usage: the first bad span is named by index) and
// starts the reads. |options| may be NULL (the defaults). |spans| may be
// NULL when |span_count| is 0. The spans array is copied; files and buffers are
// retained until the stream is released. |*out_stream| is set before the
// first read starts, so a progress callback may reach the stream through
// the caller's variable (on an inline driver such as local-sync the whole
// stream may run inside this call).
weft_status_t weft_parameter_stream_start(
    weft_device_t* device, const weft_parameter_span_t* spans,
    uint32_t span_count, const weft_parameter_stream_options_t* options,
    weft_allocator_t allocator, weft_parameter_stream_t** out_stream);

// Stops starting reads; those in flight complete. The stream then ends with
// CANCELLED (unless it already ended). Any thread, any number of times.
void weft_parameter_stream_cancel(weft_parameter_stream_t* stream);

// Waits until the stream ended: OK when every span is loaded, otherwise the
// first error (or CANCELLED). DEADLINE_EXCEEDED when |timeout| passes first
// (the stream goes on).
weft_status_t weft_parameter_stream_wait(weft_parameter_stream_t* stream,
                                         weft_timeout_t timeout);

// The current progress.
weft_parameter_progress_t weft_parameter_stream_progress(
    weft_parameter_stream_t* stream);

// True when at least one chunk was read with O_DIRECT.
bool weft_parameter_stream_direct_io_used(weft_parameter_stream_t* stream);

// Cancels the stream if it is still running, waits for its reads to finish
// and frees it.
void weft_parameter_stream_release(weft_parameter_stream_t* stream);

// Start, wait without a deadline, release: returns the stream's result.
// |options| may be NULL (the defaults). |spans| may be NULL when
// |span_count| is 0.
weft_status_t weft_parameter_stream_load(
    weft_device_t* device, const weft_parameter_span_t* spans,
    uint32_t span_count, const weft_parameter_stream_options_t* options,
    weft_allocator_t allocator);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_PARAMETER_STREAM_H_
