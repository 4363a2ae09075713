// weft: status values (see include/weft/status.h).
//
// A non-OK status is either a bare code (a small integer cast to a pointer)
// or a pointer to one heap record. The record keeps its text in one buffer:
//   message '\0' annotations '\0'
// where annotations is a sequence of "; text" pieces. Annotating reallocates
// the record, which is why annotate consumes and returns the status.
// Records use the C library allocator directly: a status must be creatable
// when every other allocator has failed, and a failed record allocation
// degrades to the bare code instead of failing.

#include "weft/status.h"

#include <stdlib.h>
#include <string.h>

struct weft_status_record_t {
  weft_status_code_t code;
  int line;
  // Source file (a string literal from __FILE__; never freed).
  const char* file;
  // Length of the primary message, excluding its terminator.
  size_t message_length;
  // Length of the annotation text ("; a; b"), excluding its terminator.
  size_t annotations_length;
  // message '\0' annotations '\0'
  char text[];
};

typedef struct weft_status_record_t weft_status_record_t;

static const char* const weft_status_code_names[WEFT_STATUS_CODE_COUNT_] = {
    [WEFT_STATUS_OK] = "OK",
    [WEFT_STATUS_CANCELLED] = "CANCELLED",
    [WEFT_STATUS_UNKNOWN] = "UNKNOWN",
    [WEFT_STATUS_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
    [WEFT_STATUS_DEADLINE_EXCEEDED] = "DEADLINE_EXCEEDED",
    [WEFT_STATUS_NOT_FOUND] = "NOT_FOUND",
    [WEFT_STATUS_ALREADY_EXISTS] = "ALREADY_EXISTS",
    [WEFT_STATUS_PERMISSION_DENIED] = "PERMISSION_DENIED",
    [WEFT_STATUS_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED",
    [WEFT_STATUS_FAILED_PRECONDITION] = "FAILED_PRECONDITION",
    [WEFT_STATUS_ABORTED] = "ABORTED",
    [WEFT_STATUS_OUT_OF_RANGE] = "OUT_OF_RANGE",
    [WEFT_STATUS_UNIMPLEMENTED] = "UNIMPLEMENTED",
    [WEFT_STATUS_INTERNAL] = "INTERNAL",
    [WEFT_STATUS_UNAVAILABLE] = "UNAVAILABLE",
    [WEFT_STATUS_DATA_LOSS] = "DATA_LOSS",
    [WEFT_STATUS_UNAUTHENTICATED] = "UNAUTHENTICATED",
    [WEFT_STATUS_DEFERRED] = "DEFERRED",
};

// True when |status| is a bare code rather than a record pointer.
static bool weft_status_is_bare(weft_status_t status) {
  return (uintptr_t)status < (uintptr_t)WEFT_STATUS_CODE_COUNT_;
}

static weft_status_record_t* weft_status_record(weft_status_t status) {
  return weft_status_is_bare(status) ? NULL : (weft_status_record_t*)status;
}

static size_t weft_status_record_size(size_t message_length,
                                      size_t annotations_length) {
  return sizeof(weft_status_record_t) + message_length + 1 +
         annotations_length + 1;
}

const char* weft_status_code_string(weft_status_code_t code) {
  const char* name = "UNRECOGNIZED_CODE";
  if ((unsigned)code < (unsigned)WEFT_STATUS_CODE_COUNT_) {
    name = weft_status_code_names[code];
  }
  return name;
}

weft_status_code_t weft_status_code(weft_status_t status) {
  weft_status_record_t* record = weft_status_record(status);
  return record ? record->code : (weft_status_code_t)(uintptr_t)status;
}

weft_status_t weft_status_make_v_(const char* file, int line,
                                  weft_status_code_t code, const char* format,
                                  va_list args) {
  weft_status_t result = weft_status_from_code(code);
  if (!format) {
    // A status that says what went wrong with this call instead.
    result = weft_status_make_(__FILE__, __LINE__,
                               WEFT_STATUS_INVALID_ARGUMENT,
                               "weft_status_make_v_: format is NULL (for a %s "
                               "status made at %s:%d)",
                               weft_status_code_string(code),
                               file ? file : "?", line);
  } else if (code != WEFT_STATUS_OK) {
    va_list measure_args;
    va_copy(measure_args, args);
    int length = vsnprintf(NULL, 0, format, measure_args);
    va_end(measure_args);
    if (length < 0) length = 0;
    weft_status_record_t* record =
        (weft_status_record_t*)malloc(weft_status_record_size((size_t)length, 0));
    if (record) {
      record->code = code;
      record->line = line;
      record->file = file;
      record->message_length = (size_t)length;
      record->annotations_length = 0;
      if (length > 0) {
        vsnprintf(record->text, (size_t)length + 1, format, args);
      } else {
        record->text[0] = '\0';
      }
      record->text[length + 1] = '\0';
      result = (weft_status_t)record;
    }
  }
  return result;
}

weft_status_t weft_status_make_(const char* file, int line,
                                weft_status_code_t code, const char* format,
                                ...) {
  va_list args;
  va_start(args, format);
  weft_status_t status = weft_status_make_v_(file, line, code, format, args);
  va_end(args);
  return status;
}

const char* weft_status_message(weft_status_t status) {
  weft_status_record_t* record = weft_status_record(status);
  return record ? record->text : "";
}

// Appends "; <text>" (|text_length| bytes) to |status|. A bare code gains a
// record with an empty message. If memory runs out the status is returned
// unannotated: losing an annotation beats losing the error.
static weft_status_t weft_status_append(weft_status_t status, const char* text,
                                        size_t text_length) {
  weft_status_t result = status;
  weft_status_record_t* record = weft_status_record(status);
  if (!record) {
    record = (weft_status_record_t*)malloc(
        weft_status_record_size(0, text_length + 2));
    if (record) {
      record->code = weft_status_code(status);
      record->line = 0;
      record->file = NULL;
      record->message_length = 0;
      record->annotations_length = 0;
      record->text[0] = '\0';
    }
  } else {
    weft_status_record_t* grown = (weft_status_record_t*)realloc(
        record, weft_status_record_size(
                    record->message_length,
                    record->annotations_length + text_length + 2));
    record = grown;
  }
  if (record) {
    char* annotations = record->text + record->message_length + 1;
    char* tail = annotations + record->annotations_length;
    tail[0] = ';';
    tail[1] = ' ';
    memcpy(tail + 2, text, text_length);
    tail[2 + text_length] = '\0';
    record->annotations_length += text_length + 2;
    result = (weft_status_t)record;
  }
  return result;
}

weft_status_t weft_status_annotate(weft_status_t status, const char* format,
                                   ...) {
  weft_status_t result = status;
  if (!weft_status_is_ok(status) && format) {
    char small[256];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(small, sizeof(small), format, args);
    va_end(args);
    if (length >= 0 && (size_t)length < sizeof(small)) {
      result = weft_status_append(status, small, (size_t)length);
    } else if (length >= 0) {
      char* large = (char*)malloc((size_t)length + 1);
      if (large) {
        va_start(args, format);
        vsnprintf(large, (size_t)length + 1, format, args);
        va_end(args);
        result = weft_status_append(status, large, (size_t)length);
        free(large);
      }
    }
  }
  return result;
}

weft_status_t weft_status_clone(weft_status_t status) {
  weft_status_t result = status;
  weft_status_record_t* record = weft_status_record(status);
  if (record) {
    size_t size = weft_status_record_size(record->message_length,
                                          record->annotations_length);
    weft_status_record_t* copy = (weft_status_record_t*)malloc(size);
    result = weft_status_from_code(record->code);
    if (copy) {
      memcpy(copy, record, size);
      result = (weft_status_t)copy;
    }
  }
  return result;
}

weft_status_t weft_status_join(weft_status_t a, weft_status_t b) {
  weft_status_t result = a;
  if (weft_status_is_ok(a)) {
    result = b;
  } else if (!weft_status_is_ok(b)) {
    size_t length = weft_status_format(b, NULL, 0);
    char small[256];
    char* text = length < sizeof(small) ? small : (char*)malloc(length + 1);
    if (text) {
      weft_status_format(b, text, length + 1);
      result = weft_status_append(a, text, length);
      if (text != small) free(text);
    }
    weft_status_free(b);
  }
  return result;
}

void weft_status_free(weft_status_t status) {
  free(weft_status_record(status));
}

weft_status_code_t weft_status_consume_code(weft_status_t status) {
  weft_status_code_t code = weft_status_code(status);
  weft_status_free(status);
  return code;
}

// Appends |length| bytes of |text| at |*inout_offset| into |buffer|, never
// writing past |capacity| - 1, and always advances the offset in full.
static void weft_status_format_append(char* buffer, size_t capacity,
                                      size_t* inout_offset, const char* text,
                                      size_t length) {
  size_t offset = *inout_offset;
  if (capacity > 0 && offset < capacity - 1) {
    size_t room = capacity - 1 - offset;
    memcpy(buffer + offset, text, length < room ? length : room);
  }
  *inout_offset = offset + length;
}

static const char* weft_status_basename(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

size_t weft_status_format(weft_status_t status, char* buffer,
                          size_t buffer_capacity) {
  if (!buffer) buffer_capacity = 0;
  size_t offset = 0;
  weft_status_code_t code = weft_status_code(status);
  const char* name = weft_status_code_string(code);
  weft_status_format_append(buffer, buffer_capacity, &offset, name,
                            strlen(name));
  weft_status_record_t* record = weft_status_record(status);
  if (record) {
    if (record->message_length > 0) {
      weft_status_format_append(buffer, buffer_capacity, &offset, ": ", 2);
      weft_status_format_append(buffer, buffer_capacity, &offset, record->text,
                                record->message_length);
    }
    weft_status_format_append(buffer, buffer_capacity, &offset,
                              record->text + record->message_length + 1,
                              record->annotations_length);
    if (record->file) {
      char location[64];
      const char* base = weft_status_basename(record->file);
      int length = snprintf(location, sizeof(location), ":%d]", record->line);
      weft_status_format_append(buffer, buffer_capacity, &offset, " [", 2);
      weft_status_format_append(buffer, buffer_capacity, &offset, base,
                                strlen(base));
      weft_status_format_append(buffer, buffer_capacity, &offset, location,
                                length > 0 ? (size_t)length : 0);
    }
  }
  if (buffer_capacity > 0) {
    buffer[offset < buffer_capacity ? offset : buffer_capacity - 1] = '\0';
  }
  return offset;
}

void weft_status_fprint(FILE* stream, weft_status_t status) {
  if (!stream) return;
  char small[512];
  size_t length = weft_status_format(status, small, sizeof(small));
  char* text = small;
  if (length >= sizeof(small)) {
    char* large = (char*)malloc(length + 1);
    if (large) {
      weft_status_format(status, large, length + 1);
      text = large;
    }
  }
  fprintf(stream, "%s\n", text);
  if (text != small) free(text);
}
