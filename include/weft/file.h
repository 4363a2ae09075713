// weft: files read and written by queue operations.
//
// A memory file wraps host memory; an fd file wraps a file descriptor (from
// a path or given). A file has a length when it is known (0 = unknown, e.g.
// a pipe). Synchronous transfers here split every call below 2 GiB and
// resubmit until complete; a zero-byte read before the end is OUT_OF_RANGE
// ("short read at byte N").
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_FILE_H_
#define WEFT_FILE_H_

#include <stdbool.h>
#include <stdint.h>

#include "weft/allocator.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_file_t weft_file_t;

typedef enum weft_file_access_bits_e {
  WEFT_FILE_ACCESS_READ = 1u << 0,
  WEFT_FILE_ACCESS_WRITE = 1u << 1,
} weft_file_access_bits_t;
typedef uint32_t weft_file_access_t;

typedef enum weft_file_open_flag_bits_e {
  WEFT_FILE_OPEN_FLAG_NONE = 0,
  // Create the file if missing (with WRITE access).
  WEFT_FILE_OPEN_FLAG_CREATE = 1u << 0,
  // Truncate to zero length on open (with WRITE access).
  WEFT_FILE_OPEN_FLAG_TRUNCATE = 1u << 1,
} weft_file_open_flag_bits_t;
typedef uint32_t weft_file_open_flags_t;

// Called when a memory file is destroyed, to release its memory.
typedef void (*weft_file_release_fn_t)(void* user_data, void* contents);

// Wraps |length| bytes at |contents|. |release_fn| runs at destroy.
// WRITE access requires writable memory. |contents| may be NULL when
// |length| is 0. |release_fn| may be NULL. |release_user_data| may be NULL.
weft_status_t weft_file_wrap_memory(weft_file_access_t access, void* contents,
                                    uint64_t length,
                                    weft_file_release_fn_t release_fn,
                                    void* release_user_data,
                                    weft_allocator_t allocator,
                                    weft_file_t** out_file);

// Opens |path|. NOT_FOUND / PERMISSION_DENIED / ... with the path and the
// OS's reason when it cannot be opened. The length is taken from fstat for
// regular files (updated as writes extend the file).
weft_status_t weft_file_open(const char* path, weft_file_access_t access,
                             weft_file_open_flags_t flags,
                             weft_allocator_t allocator,
                             weft_file_t** out_file);

// Wraps descriptor |fd| (dup'd; the caller keeps its own). |length| 0 means
// unknown unless fstat reports a regular file.
weft_status_t weft_file_from_fd(int fd, weft_file_access_t access,
                                weft_allocator_t allocator,
                                weft_file_t** out_file);

void weft_file_retain(weft_file_t* file);
void weft_file_release(weft_file_t* file);

weft_file_access_t weft_file_access(const weft_file_t* file);
// The known length in bytes (0 when unknown).
uint64_t weft_file_length(const weft_file_t* file);
// True when the length is known (memory files and regular fd files).
bool weft_file_length_is_known(const weft_file_t* file);
// The host memory of a memory file, NULL for fd files.
void* weft_file_memory(const weft_file_t* file);
// The descriptor of an fd file, -1 for memory files.
int weft_file_fd(const weft_file_t* file);
// A name for messages: the path, "fd N" or "memory file".
const char* weft_file_name(const weft_file_t* file);

// Checks that [offset, offset+length) may be read: READ access, and within
// the known length (OUT_OF_RANGE naming the file and its length).
weft_status_t weft_file_validate_read(const weft_file_t* file, uint64_t offset,
                                      uint64_t length);
// Checks WRITE access (and range for memory files, which cannot grow).
weft_status_t weft_file_validate_write(const weft_file_t* file,
                                       uint64_t offset, uint64_t length);

// Synchronously reads |length| bytes at |offset| into |target|. |target|
// may be NULL when |length| is 0.
weft_status_t weft_file_read(weft_file_t* file, uint64_t offset, void* target,
                             uint64_t length);
// Synchronously writes |length| bytes from |source| at |offset|. |source|
// may be NULL when |length| is 0.
weft_status_t weft_file_write(weft_file_t* file, uint64_t offset,
                              const void* source, uint64_t length);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_FILE_H_
