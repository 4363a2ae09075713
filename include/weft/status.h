// weft: status values.
//
// A status is pointer-sized. NULL (WEFT_OK) means success. A non-OK status is
// either a bare code (a small integer cast to a pointer: allocates nothing) or
// a heap record holding the code, a message, the source location and any
// annotations added as the status travelled up the stack.
//
// Ownership: a function returning weft_status_t hands the status to its
// caller, who must return it, hand it on, or free it (weft_status_free /
// weft_status_ignore). Functions taking a status "consume" it unless the
// header says otherwise.
//
// NULL arguments, the same in every header of weft:
//  - A pointer argument (object handle, array with a non-zero count,
//    out-parameter, function) is required unless the function's comment
//    says "|x| may be NULL"; "|x| may be NULL when ..." allows it only then.
//  - A function returning a status answers a NULL required argument with
//    INVALID_ARGUMENT naming itself and the argument ("weft_device_queue_fill:
//    target is NULL") and changes nothing: no semaphore is signalled or
//    failed, nothing is allocated. A (semaphore, value) list or binding
//    table with a non-zero count needs its arrays and no NULL entry.
//  - Out-parameters are set to NULL (or 0) on any failure, once the
//    out-parameter itself is known to be there, so a caller may release
//    what it holds after any call.
//  - A function returning no status does nothing given a NULL object and
//    returns 0, false, NULL or "" (retain and release of NULL are no-ops);
//    one that consumes a status frees it all the same.
//  - A weft_allocator_t with no ctl function (a zeroed one) is refused with
//    INVALID_ARGUMENT by the first allocation made with it.
#ifndef WEFT_STATUS_H_
#define WEFT_STATUS_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_status_code_e {
  WEFT_STATUS_OK = 0,
  WEFT_STATUS_CANCELLED = 1,
  WEFT_STATUS_UNKNOWN = 2,
  WEFT_STATUS_INVALID_ARGUMENT = 3,
  WEFT_STATUS_DEADLINE_EXCEEDED = 4,
  WEFT_STATUS_NOT_FOUND = 5,
  WEFT_STATUS_ALREADY_EXISTS = 6,
  WEFT_STATUS_PERMISSION_DENIED = 7,
  WEFT_STATUS_RESOURCE_EXHAUSTED = 8,
  WEFT_STATUS_FAILED_PRECONDITION = 9,
  WEFT_STATUS_ABORTED = 10,
  WEFT_STATUS_OUT_OF_RANGE = 11,
  WEFT_STATUS_UNIMPLEMENTED = 12,
  WEFT_STATUS_INTERNAL = 13,
  WEFT_STATUS_UNAVAILABLE = 14,
  WEFT_STATUS_DATA_LOSS = 15,
  WEFT_STATUS_UNAUTHENTICATED = 16,
  // Not an error: "not yet, resume me later".
  WEFT_STATUS_DEFERRED = 17,
  WEFT_STATUS_CODE_COUNT_ = 18,
} weft_status_code_t;

typedef struct weft_status_record_t* weft_status_t;

#define WEFT_OK ((weft_status_t)NULL)

// Returns a status carrying only |code|; allocates nothing.
static inline weft_status_t weft_status_from_code(weft_status_code_t code) {
  return (weft_status_t)(uintptr_t)code;
}

// Returns the code of |status| (WEFT_STATUS_OK for NULL). Does not consume.
weft_status_code_t weft_status_code(weft_status_t status);

static inline bool weft_status_is_ok(weft_status_t status) {
  return status == WEFT_OK;
}

// True when |status| has the given |code|. Does not consume.
static inline bool weft_status_is(weft_status_t status,
                                  weft_status_code_t code) {
  return weft_status_code(status) == code;
}

// Returns the canonical name of |code|, e.g. "OUT_OF_RANGE".
const char* weft_status_code_string(weft_status_code_t code);

// Creates a status with |code| and a printf-style message recorded with the
// source location. Use the WEFT_STATUS() macro. If the record cannot be
// allocated the result is the bare code (never NULL for a non-OK code).
// |file| may be NULL (no location). A NULL |format| gives INVALID_ARGUMENT
// saying so.
weft_status_t weft_status_make_(const char* file, int line,
                                weft_status_code_t code, const char* format,
                                ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
// As weft_status_make_, with a va_list. |file| may be NULL.
weft_status_t weft_status_make_v_(const char* file, int line,
                                  weft_status_code_t code, const char* format,
                                  va_list args);

#define WEFT_STATUS(code, ...) \
  weft_status_make_(__FILE__, __LINE__, WEFT_STATUS_##code, __VA_ARGS__)

// Returns the primary message of |status| ("" when there is none). The string
// lives as long as the status. Does not consume.
const char* weft_status_message(weft_status_t status);

// Appends an annotation ("; while ...") to |status| and returns it. Consumes
// |status| and returns the annotated status (OK stays OK, untouched).
// |format| may be NULL: nothing is appended.
weft_status_t weft_status_annotate(weft_status_t status, const char* format,
                                   ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// Returns an independent copy of |status| (same code, message, location and
// annotations). Does not consume. Used to fan one failure out to many waiters.
weft_status_t weft_status_clone(weft_status_t status);

// Joins two statuses: OK if both are OK, otherwise the first failure with the
// second's text appended as an annotation. Consumes both.
weft_status_t weft_status_join(weft_status_t a, weft_status_t b);

// Frees |status|. NULL and bare codes are no-ops.
void weft_status_free(weft_status_t status);

// Frees |status| and returns its code.
weft_status_code_t weft_status_consume_code(weft_status_t status);

// Formats "CODE: message; annotations [file:line]" into |buffer| (always
// NUL-terminated when |buffer_capacity| > 0). Returns the full length that
// would have been written. Does not consume. |buffer| may be NULL: nothing
// is written (measure first, then allocate).
size_t weft_status_format(weft_status_t status, char* buffer,
                          size_t buffer_capacity);

// Writes the formatted status and a newline to |stream| (nothing when
// |stream| is NULL). Does not consume.
void weft_status_fprint(FILE* stream, weft_status_t status);

// Explicitly drops a status that is being ignored on purpose.
static inline void weft_status_ignore(weft_status_t status) {
  weft_status_free(status);
}

// Returns the status of |expr| from the enclosing function if it failed.
#define WEFT_RETURN_IF_ERROR(expr)          \
  do {                                      \
    weft_status_t weft_status__ = (expr);   \
    if (!weft_status_is_ok(weft_status__)) \
      return weft_status__;                 \
  } while (0)

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_STATUS_H_
