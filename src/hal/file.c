// weft: memory files and fd files, read and written synchronously.
//
// Every OS error is translated once, here, into a status naming the call,
// the file and the offset ("pread of 'w.bin' at offset 4096: Input/output
// error"). Transfers are split below the OS per-call limit and resumed after
// partial results and EINTR until complete.
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/arguments.h"
#include "base/atomics.h"
#include "base/os_error.h"
#include "hal/file_impl.h"
#include "hal/resource.h"

typedef enum weft_file_kind_e {
  WEFT_FILE_KIND_MEMORY = 0,
  WEFT_FILE_KIND_FD = 1,
} weft_file_kind_t;

typedef struct weft_file_vtable_t {
  // Must be first (see resource.h).
  void (*destroy)(weft_file_t* file);
} weft_file_vtable_t;

struct weft_file_t {
  weft_resource_t resource;  // vtable: weft_file_vtable_t
  weft_allocator_t allocator;
  weft_file_kind_t kind;
  weft_file_access_t access;
  // Memory files and regular fd files know their length.
  bool length_known;
  // Non-seekable descriptors transfer sequentially (see file_impl.h).
  bool is_stream;
  // |name| is a path (quoted in messages) rather than "fd N"/"memory file".
  bool name_is_path;
  // The known length; grows as writes extend an fd file. Relaxed: it is a
  // hint checked against operations already ordered by semaphores, and
  // only ever moves up.
  weft_atomic_uint64_t length;
  // For streams: the offset the next transfer must start at.
  weft_atomic_uint64_t stream_position;
  uint64_t max_chunk;
  // Memory files.
  uint8_t* contents;
  weft_file_release_fn_t release_fn;
  void* release_user_data;
  // Fd files: owned descriptor (-1 for memory files).
  int fd;
  // NUL-terminated, allocated with the struct.
  char name[];
};

static void weft_file_destroy(weft_file_t* file) {
  if (file->fd >= 0) {
    // Not retried on EINTR: on Linux the descriptor is closed regardless.
    close(file->fd);
  }
  weft_file_release_fn_t release_fn = file->release_fn;
  void* release_user_data = file->release_user_data;
  void* contents = file->contents;
  weft_allocator_free(file->allocator, file);
  if (release_fn) release_fn(release_user_data, contents);
}

static const weft_file_vtable_t kWeftFileVtable = {
    .destroy = weft_file_destroy,
};

// --- Errors -------------------------------------------------------------------

const char* weft_file_display_name(const weft_file_t* file, char* buffer,
                                   size_t capacity) {
  if (file->name_is_path) {
    snprintf(buffer, capacity, "'%s'", file->name);
  } else {
    snprintf(buffer, capacity, "%s", file->name);
  }
  return buffer;
}

// "pread of 'x.bin' at offset 0: Bad file descriptor".
static weft_status_t weft_file_errno_status(int error, const char* call,
                                            const char* display_name,
                                            bool has_offset, uint64_t offset) {
  char reason_buffer[256];
  // GNU strerror_r (we build with _GNU_SOURCE): returns the message.
  const char* reason = strerror_r(error, reason_buffer, sizeof(reason_buffer));
  weft_status_code_t code = weft_status_code_from_errno(error);
  char where[48] = "";
  if (has_offset) {
    snprintf(where, sizeof(where), " at offset %" PRIu64, offset);
  }
  return weft_status_make_(__FILE__, __LINE__, code, "%s of %s%s: %s", call,
                           display_name, where, reason);
}

// --- Creation -----------------------------------------------------------------

// Allocates a file named |name| with the common fields set.
static weft_status_t weft_file_allocate(weft_file_kind_t kind,
                                        weft_file_access_t access,
                                        const char* name, bool name_is_path,
                                        weft_allocator_t allocator,
                                        weft_file_t** out_file) {
  size_t name_length = strlen(name);
  weft_file_t* file = NULL;
  weft_status_t status = weft_allocator_malloc(
      allocator, sizeof(*file) + name_length + 1, (void**)&file);
  if (weft_status_is_ok(status)) {
    weft_resource_initialize(WEFT_RESOURCE_TYPE_FILE, &kWeftFileVtable,
                             &file->resource);
    file->allocator = allocator;
    file->kind = kind;
    file->access = access;
    file->name_is_path = name_is_path;
    atomic_init(&file->length, 0);
    atomic_init(&file->stream_position, 0);
    file->max_chunk = WEFT_FILE_MAX_CHUNK;
    file->fd = -1;
    memcpy(file->name, name, name_length + 1);
  }
  *out_file = file;
  return status;
}

static weft_status_t weft_file_validate_access_bits(weft_file_access_t access,
                                                    const char* what) {
  if (access == 0 ||
      (access & ~(weft_file_access_t)(WEFT_FILE_ACCESS_READ |
                                      WEFT_FILE_ACCESS_WRITE)) != 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "%s: access 0x%" PRIx32
                       " must be READ, WRITE or both",
                       what, access);
  }
  return WEFT_OK;
}

weft_status_t weft_file_wrap_memory(weft_file_access_t access, void* contents,
                                    uint64_t length,
                                    weft_file_release_fn_t release_fn,
                                    void* release_user_data,
                                    weft_allocator_t allocator,
                                    weft_file_t** out_file) {
  if (out_file) *out_file = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_file", (const void* const[]){out_file}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_file_validate_access_bits(access, "weft_file_wrap_memory");
  }
  if (weft_status_is_ok(status) && !contents && length != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_file_wrap_memory: contents are NULL for %" PRIu64
                         " bytes",
                         length);
  }
  if (weft_status_is_ok(status) && length > SIZE_MAX) {
    status = WEFT_STATUS(OUT_OF_RANGE,
                         "weft_file_wrap_memory: %" PRIu64
                         " bytes do not fit in host memory",
                         length);
  }
  weft_file_t* file = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_file_allocate(WEFT_FILE_KIND_MEMORY, access, "memory file",
                                /*name_is_path=*/false, allocator, &file);
  }
  if (weft_status_is_ok(status)) {
    file->length_known = true;
    atomic_init(&file->length, length);
    file->contents = (uint8_t*)contents;
    file->release_fn = release_fn;
    file->release_user_data = release_user_data;
    *out_file = file;
  }
  return status;
}

// Wraps descriptor |fd| (taking ownership only on success) named |name|.
static weft_status_t weft_file_create_fd(int fd, weft_file_access_t access,
                                         const char* name, bool name_is_path,
                                         weft_allocator_t allocator,
                                         weft_file_t** out_file) {
  char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
  snprintf(display_name, sizeof(display_name), name_is_path ? "'%s'" : "%s",
           name);
  weft_status_t status = WEFT_OK;
  struct stat info;
  if (fstat(fd, &info) != 0) {
    status = weft_file_errno_status(errno, "fstat", display_name,
                                    /*has_offset=*/false, 0);
  } else if (S_ISDIR(info.st_mode)) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "%s is a directory, not a file",
                         display_name);
  }
  bool is_stream = false;
  if (weft_status_is_ok(status) && !S_ISREG(info.st_mode)) {
    // Pipes, sockets and terminals cannot seek: transfer sequentially.
    is_stream = lseek(fd, 0, SEEK_CUR) < 0 && errno == ESPIPE;
  }
  weft_file_t* file = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_file_allocate(WEFT_FILE_KIND_FD, access, name, name_is_path,
                                allocator, &file);
  }
  if (weft_status_is_ok(status)) {
    file->fd = fd;
    file->is_stream = is_stream;
    file->length_known = S_ISREG(info.st_mode);
    atomic_init(&file->length,
                file->length_known ? (uint64_t)info.st_size : 0);
    *out_file = file;
  }
  return status;
}

weft_status_t weft_file_open(const char* path, weft_file_access_t access,
                             weft_file_open_flags_t flags,
                             weft_allocator_t allocator,
                             weft_file_t** out_file) {
  if (out_file) *out_file = NULL;
  weft_status_t status =
      weft_arguments_require(__func__, "path,out_file",
                             (const void* const[]){path, out_file}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_file_validate_access_bits(access, "weft_file_open");
  }
  if (weft_status_is_ok(status) && !path[0]) {
    status = WEFT_STATUS(INVALID_ARGUMENT, "weft_file_open: path is empty");
  }
  const weft_file_open_flags_t known_flags =
      WEFT_FILE_OPEN_FLAG_CREATE | WEFT_FILE_OPEN_FLAG_TRUNCATE;
  if (weft_status_is_ok(status) && (flags & ~known_flags) != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_file_open: unknown flags 0x%" PRIx32 " for '%s'",
                         flags & ~known_flags, path);
  }
  if (weft_status_is_ok(status) && (flags & known_flags) != 0 &&
      !(access & WEFT_FILE_ACCESS_WRITE)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_file_open: CREATE and TRUNCATE need WRITE access "
                         "(opening '%s')",
                         path);
  }
  int fd = -1;
  if (weft_status_is_ok(status)) {
    int open_flags = O_CLOEXEC;
    if ((access & WEFT_FILE_ACCESS_READ) && (access & WEFT_FILE_ACCESS_WRITE)) {
      open_flags |= O_RDWR;
    } else if (access & WEFT_FILE_ACCESS_WRITE) {
      open_flags |= O_WRONLY;
    } else {
      open_flags |= O_RDONLY;
    }
    if (flags & WEFT_FILE_OPEN_FLAG_CREATE) open_flags |= O_CREAT;
    if (flags & WEFT_FILE_OPEN_FLAG_TRUNCATE) open_flags |= O_TRUNC;
    do {
      fd = open(path, open_flags, 0666);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
      snprintf(display_name, sizeof(display_name), "'%s'", path);
      status = weft_file_errno_status(errno, "open", display_name,
                                      /*has_offset=*/false, 0);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_file_create_fd(fd, access, path, /*name_is_path=*/true,
                                 allocator, out_file);
    if (!weft_status_is_ok(status)) close(fd);
  }
  return status;
}

weft_status_t weft_file_from_fd(int fd, weft_file_access_t access,
                                weft_allocator_t allocator,
                                weft_file_t** out_file) {
  if (out_file) *out_file = NULL;
  char name[32];
  snprintf(name, sizeof(name), "fd %d", fd);
  weft_status_t status = weft_arguments_require(
      __func__, "out_file", (const void* const[]){out_file}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_file_validate_access_bits(access, "weft_file_from_fd");
  }
  if (weft_status_is_ok(status) && fd < 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_file_from_fd: %d is not a file descriptor", fd);
  }
  int fd_flags = 0;
  if (weft_status_is_ok(status)) {
    fd_flags = fcntl(fd, F_GETFL);
    if (fd_flags < 0) {
      status = weft_file_errno_status(errno, "fcntl(F_GETFL)", name,
                                      /*has_offset=*/false, 0);
    }
  }
  if (weft_status_is_ok(status)) {
    int mode = fd_flags & O_ACCMODE;
    if ((access & WEFT_FILE_ACCESS_READ) && mode == O_WRONLY) {
      status = WEFT_STATUS(PERMISSION_DENIED,
                           "weft_file_from_fd: %s is open write-only but READ "
                           "access was requested",
                           name);
    } else if ((access & WEFT_FILE_ACCESS_WRITE) && mode == O_RDONLY) {
      status = WEFT_STATUS(PERMISSION_DENIED,
                           "weft_file_from_fd: %s is open read-only but WRITE "
                           "access was requested",
                           name);
    } else if ((access & WEFT_FILE_ACCESS_WRITE) && (fd_flags & O_APPEND)) {
      // Linux pwrite ignores the offset on O_APPEND descriptors.
      status = WEFT_STATUS(INVALID_ARGUMENT,
                           "weft_file_from_fd: %s is open with O_APPEND, so "
                           "positioned writes would append",
                           name);
    }
  }
  int own_fd = -1;
  if (weft_status_is_ok(status)) {
    own_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own_fd < 0) {
      status = weft_file_errno_status(errno, "dup", name,
                                      /*has_offset=*/false, 0);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_file_create_fd(own_fd, access, name, /*name_is_path=*/false,
                                 allocator, out_file);
    if (!weft_status_is_ok(status)) close(own_fd);
  }
  return status;
}

void weft_file_retain(weft_file_t* file) { weft_resource_retain(file); }

void weft_file_release(weft_file_t* file) { weft_resource_release(file); }

// --- Queries ------------------------------------------------------------------

weft_file_access_t weft_file_access(const weft_file_t* file) {
  return file ? file->access : 0;
}

uint64_t weft_file_length(const weft_file_t* file) {
  return file ? weft_atomic_load(&((weft_file_t*)file)->length,
                                 memory_order_relaxed)
              : 0;
}

bool weft_file_length_is_known(const weft_file_t* file) {
  return file && file->length_known;
}

void* weft_file_memory(const weft_file_t* file) {
  return file && file->kind == WEFT_FILE_KIND_MEMORY ? file->contents : NULL;
}

int weft_file_fd(const weft_file_t* file) { return file ? file->fd : -1; }

const char* weft_file_name(const weft_file_t* file) {
  return file ? file->name : "";
}

bool weft_file_is_stream(const weft_file_t* file) { return file->is_stream; }

void weft_file_set_max_chunk_for_testing(weft_file_t* file,
                                         uint64_t max_chunk) {
  file->max_chunk = max_chunk ? max_chunk : 1;
}

// Raises the known length to at least |end| (it never shrinks).
static void weft_file_extend_length(weft_file_t* file, uint64_t end) {
  uint64_t current = weft_atomic_load(&file->length, memory_order_relaxed);
  // Relaxed: see |length|; the loop only needs atomicity of the maximum.
  while (current < end &&
         !weft_atomic_compare_exchange_weak(&file->length, &current, end,
                                            memory_order_relaxed,
                                            memory_order_relaxed)) {
  }
}

void weft_file_note_written(weft_file_t* file, uint64_t end) {
  if (file->length_known) weft_file_extend_length(file, end);
}

// --- Validation ---------------------------------------------------------------

// Checks what reads and writes share: access, and the range fits in a file
// offset. Names are formatted only on the error paths. (A stream's position
// is checked when the transfer runs: queued transfers advance it in order.)
static weft_status_t weft_file_validate_common(const weft_file_t* file,
                                               weft_file_access_t access,
                                               const char* verb,
                                               uint64_t offset,
                                               uint64_t length) {
  char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
  weft_status_t status = WEFT_OK;
  if (!(file->access & access)) {
    status = WEFT_STATUS(
        PERMISSION_DENIED, "%s of %s: the file was opened without %s access",
        verb, weft_file_display_name(file, display_name, sizeof(display_name)),
        access == WEFT_FILE_ACCESS_READ ? "READ" : "WRITE");
  } else if (length > (uint64_t)INT64_MAX ||
             offset > (uint64_t)INT64_MAX - length) {
    status = WEFT_STATUS(
        OUT_OF_RANGE,
        "%s of %" PRIu64 " bytes at offset %" PRIu64
        " of %s is past the largest file offset",
        verb, length, offset,
        weft_file_display_name(file, display_name, sizeof(display_name)));
  }
  return status;
}

weft_status_t weft_file_validate_read(const weft_file_t* file, uint64_t offset,
                                      uint64_t length) {
  weft_status_t status = weft_arguments_require(
      __func__, "file", (const void* const[]){file}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_file_validate_common(file, WEFT_FILE_ACCESS_READ, "read",
                                       offset, length);
  }
  if (weft_status_is_ok(status) && file->length_known) {
    uint64_t end = offset + length;
    uint64_t known = weft_file_length(file);
    if (end > known && file->kind == WEFT_FILE_KIND_FD) {
      // Someone else may have grown the file since we last looked.
      struct stat info;
      if (fstat(file->fd, &info) == 0 && (uint64_t)info.st_size > known) {
        weft_file_extend_length((weft_file_t*)file, (uint64_t)info.st_size);
        known = weft_file_length(file);
      }
    }
    if (end > known) {
      char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
      status = WEFT_STATUS(
          OUT_OF_RANGE,
          "read of [%" PRIu64 ", %" PRIu64
          ") is past the end of %s (%" PRIu64 " bytes)",
          offset, end,
          weft_file_display_name(file, display_name, sizeof(display_name)),
          known);
    }
  }
  return status;
}

weft_status_t weft_file_validate_write(const weft_file_t* file,
                                       uint64_t offset, uint64_t length) {
  weft_status_t status = weft_arguments_require(
      __func__, "file", (const void* const[]){file}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_file_validate_common(file, WEFT_FILE_ACCESS_WRITE, "write",
                                       offset, length);
  }
  if (weft_status_is_ok(status) && file->kind == WEFT_FILE_KIND_MEMORY) {
    uint64_t known = weft_file_length(file);
    if (offset + length > known) {
      char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
      status = WEFT_STATUS(
          OUT_OF_RANGE,
          "write of [%" PRIu64 ", %" PRIu64
          ") is past the end of %s (%" PRIu64
          " bytes); memory files cannot grow",
          offset, offset + length,
          weft_file_display_name(file, display_name, sizeof(display_name)),
          known);
    }
  }
  return status;
}

// --- Transfers ----------------------------------------------------------------

// Reads or writes |length| bytes of an fd file at |offset| in calls of at
// most max_chunk bytes, resuming after partial results and EINTR.
static weft_status_t weft_file_transfer_fd(weft_file_t* file, bool is_write,
                                           uint64_t offset, uint8_t* bytes,
                                           uint64_t length) {
  weft_status_t status = WEFT_OK;
  if (file->is_stream) {
    uint64_t position =
        weft_atomic_load(&file->stream_position, memory_order_relaxed);
    if (offset != position) {
      char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
      status = WEFT_STATUS(
          INVALID_ARGUMENT,
          "%s at offset %" PRIu64 " of %s: the stream can only continue at "
          "byte %" PRIu64,
          is_write ? "write" : "read", offset,
          weft_file_display_name(file, display_name, sizeof(display_name)),
          position);
    }
  }
  uint64_t done = 0;
  while (weft_status_is_ok(status) && done < length) {
    uint64_t remaining = length - done;
    size_t chunk =
        (size_t)(remaining < file->max_chunk ? remaining : file->max_chunk);
    off_t position = (off_t)(offset + done);
    ssize_t result = 0;
    if (is_write) {
      result = file->is_stream ? write(file->fd, bytes + done, chunk)
                               : pwrite(file->fd, bytes + done, chunk,
                                        position);
    } else {
      result = file->is_stream ? read(file->fd, bytes + done, chunk)
                               : pread(file->fd, bytes + done, chunk,
                                       position);
    }
    if (result > 0) {
      done += (uint64_t)result;
    } else if (result < 0 && errno == EINTR) {
      // Interrupted before transferring anything: try again.
    } else if (result < 0) {
      char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
      const char* call = is_write ? (file->is_stream ? "write" : "pwrite")
                               : (file->is_stream ? "read" : "pread");
      status = weft_file_errno_status(
          errno, call,
          weft_file_display_name(file, display_name, sizeof(display_name)),
          /*has_offset=*/true, offset + done);
    } else {
      char display_name[WEFT_FILE_DISPLAY_NAME_CAPACITY];
      weft_file_display_name(file, display_name, sizeof(display_name));
      // A zero-byte read before the end: the file is shorter than we knew
      // (truncated behind our back, or a stream hit end of file).
      status = weft_status_make_(
          __FILE__, __LINE__,
          is_write ? WEFT_STATUS_RESOURCE_EXHAUSTED : WEFT_STATUS_OUT_OF_RANGE,
          "short %s at byte %" PRIu64 " of %s (%s [%" PRIu64 ", %" PRIu64
          "))",
          is_write ? "write" : "read", offset + done, display_name,
          is_write ? "writing" : "reading", offset, offset + length);
    }
  }
  if (file->is_stream) {
    weft_atomic_fetch_add(&file->stream_position, done, memory_order_relaxed);
  }
  if (is_write && file->length_known && done != 0) {
    weft_file_extend_length(file, offset + done);
  }
  return status;
}

weft_status_t weft_file_read(weft_file_t* file, uint64_t offset, void* target,
                             uint64_t length) {
  weft_status_t status = weft_arguments_require(
      __func__, "file,target",
      (const void* const[]){file, length ? target : file}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_file_validate_read(file, offset, length);
  }
  if (weft_status_is_ok(status) && length != 0) {
    if (file->kind == WEFT_FILE_KIND_MEMORY) {
      memcpy(target, file->contents + offset, (size_t)length);
    } else {
      status = weft_file_transfer_fd(file, /*write=*/false, offset,
                                     (uint8_t*)target, length);
    }
  }
  return status;
}

weft_status_t weft_file_write(weft_file_t* file, uint64_t offset,
                              const void* source, uint64_t length) {
  weft_status_t status = weft_arguments_require(
      __func__, "file,source",
      (const void* const[]){file, length ? source : file}, 2);
  if (weft_status_is_ok(status)) {
    status = weft_file_validate_write(file, offset, length);
  }
  if (weft_status_is_ok(status) && length != 0) {
    if (file->kind == WEFT_FILE_KIND_MEMORY) {
      memcpy(file->contents + offset, source, (size_t)length);
    } else {
      // The transfer only reads |source| when writing.
      status = weft_file_transfer_fd(file, /*write=*/true, offset,
                                     (uint8_t*)(uintptr_t)source, length);
    }
  }
  return status;
}
