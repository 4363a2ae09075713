// weft: file reads and writes of device memory through host staging pieces,
// what every GPU driver's queue_read and queue_write share.
//
// A GPU's memory is not the host's, so a READ or WRITE moves through a ring
// of host-visible staging pieces (pinned, say), several at once, so the disk
// and the device's copy engine work at the same time:
//   READ   up to |piece_count| pieces are read from the file at once (on a
//          proactor, src/async, when one is given and the file allows it);
//          each, as it lands and in order, is handed to the device (|copy|
//          staging -> buffer); a piece is read into again only once the
//          device says its last copy finished (|wait_piece|).
//   WRITE  copies buffer -> staging are queued ahead into every free piece
//          (its last copy, maybe an earlier transfer's, waited for first);
//          each piece, once its copy landed and in order, is written to the
//          file (again several writes in flight); a piece takes a copy again
//          once its write completed.
// The driver supplies the device side (the two hooks) and the staging; this
// file owns the pipeline and the file side. A READ returns with its last
// copies queued, not done: the driver orders what follows behind them (the
// cuda driver records the op's completion event after them).
#ifndef WEFT_HAL_GPU_STAGED_TRANSFER_H_
#define WEFT_HAL_GPU_STAGED_TRANSFER_H_

#include <stdbool.h>
#include <stdint.h>

#include "async/proactor.h"
#include "hal/queue_op.h"
#include "weft/driver.h"

// The device side of a staged transfer.
typedef struct weft_staged_transfer_device_t {
  void* self;
  // Queues a copy of |length| bytes between staging piece |piece| and the
  // op's buffer at |buffer_offset| (from its start): staging -> buffer when
  // |to_buffer|, else buffer -> staging. The copy is the piece's last use
  // until the next one; it is only asked for once |wait_piece| said the
  // piece's previous copy finished.
  weft_status_t (*copy)(void* self, uint32_t piece, bool to_buffer,
                        uint64_t buffer_offset, uint64_t length);
  // Blocks until the last copy queued on |piece| finished (OK at once when
  // there is none).
  weft_status_t (*wait_piece)(void* self, uint32_t piece);
} weft_staged_transfer_device_t;

// A GPU driver's staging ring unless its device string says otherwise:
// 8 pieces of 4 MiB.
#define WEFT_STAGING_DEFAULT_PIECE_SIZE (4u << 20)
#define WEFT_STAGING_DEFAULT_PIECES 8u

// Reads the device-string options every GPU driver takes for its staging
// ring, "staging_piece=BYTES" (at least 4096) and "staging_pieces=N" (at
// least 1), into |*piece_size| and |*pieces| (left as they are when
// absent). INVALID_ARGUMENT naming |device_string| otherwise.
weft_status_t weft_staging_options_parse(const char* device_string,
                                         const weft_device_options_t* options,
                                         uint32_t* piece_size,
                                         uint32_t* pieces);

// The staging ring: |piece_count| pieces of |piece_size| bytes at |host|.
typedef struct weft_staging_ring_t {
  uint8_t* host;
  uint64_t piece_size;
  uint32_t piece_count;
} weft_staging_ring_t;

// Runs the READ or WRITE |op| through |ring| on the calling thread. The file
// side goes through |proactor| (may be NULL) when the file is a descriptor
// that can seek, with up to |ring->piece_count| transfers in flight;
// otherwise (a memory file, a stream, no proactor) it reads and writes
// synchronously, piece by piece, still overlapping the device's copies.
// Returns the first error (a short read names the file and the offset);
// nothing of the op's is in flight on the file when it returns.
weft_status_t weft_staged_transfer_run(
    const weft_staging_ring_t* ring,
    const weft_staged_transfer_device_t* device, weft_proactor_t* proactor,
    const weft_queue_op_t* op);

#endif  // WEFT_HAL_GPU_STAGED_TRANSFER_H_
