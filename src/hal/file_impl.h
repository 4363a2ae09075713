// weft: file internals shared with tests.
#ifndef WEFT_HAL_FILE_IMPL_H_
#define WEFT_HAL_FILE_IMPL_H_

#include <stddef.h>
#include <stdint.h>

#include "weft/file.h"

// The largest single pread/pwrite (or read/write) a synchronous transfer
// issues: below the 2 GiB Linux limit (0x7ffff000 bytes per call) with room
// to spare; larger transfers loop.
#define WEFT_FILE_MAX_CHUNK ((uint64_t)1 << 30)

// Lowers |file|'s per-call limit so tests can exercise the split and resume
// loop without gigabyte transfers. |max_chunk| must be > 0. Not thread-safe
// with transfers in flight on |file|.
void weft_file_set_max_chunk_for_testing(weft_file_t* file,
                                         uint64_t max_chunk);

// True for descriptors that cannot seek (pipes, sockets, terminals): such
// files transfer sequentially with read/write, and each transfer's offset
// must be the stream position when it runs (INVALID_ARGUMENT otherwise;
// submit-time validation cannot know it, as earlier transfers may be
// queued). Concurrent transfers on one stream are the caller's error.
bool weft_file_is_stream(const weft_file_t* file);

// Room for any display name: a quoted path of up to PATH_MAX bytes.
#define WEFT_FILE_DISPLAY_NAME_CAPACITY 4200

// Writes |file|'s name as messages show it ('path', fd N, memory file) into
// |buffer| (truncated to |capacity|) and returns |buffer|.
const char* weft_file_display_name(const weft_file_t* file, char* buffer,
                                   size_t capacity);

// Records that bytes up to |end| of |file| were written by a transfer that
// did not go through weft_file_write (an asynchronous write on a proactor):
// raises the known length of a file that has one to at least |end|. Any
// thread.
void weft_file_note_written(weft_file_t* file, uint64_t end);

#endif  // WEFT_HAL_FILE_IMPL_H_
