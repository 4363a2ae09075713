// weft VM: canonical signature text (see signature_text.h).
#include "vm/signature_text.h"

#include <string.h>

// Appends |text| at |*used|, truncating at |capacity| - 1.
static void weft_vm_text_append(char* buffer, size_t capacity, size_t* used,
                                const char* text) {
  const size_t length = strlen(text);
  if (*used + 1 < capacity) {
    size_t room = capacity - 1 - *used;
    memcpy(buffer + *used, text, length < room ? length : room);
  }
  *used += length;
}

size_t weft_vm_signature_types_text(uint32_t arg_count, uint32_t ret_count,
                                    const uint8_t* types, char* buffer,
                                    size_t capacity) {
  static const char* const kNames[WEFT_VM_TYPE_COUNT_] = {"i32", "i64", "f32",
                                                          "f64", "r?"};
  size_t used = 0;
  for (uint32_t list = 0; list < 2; ++list) {
    const uint32_t first = list ? arg_count : 0;
    const uint32_t count = list ? ret_count : arg_count;
    weft_vm_text_append(buffer, capacity, &used, list ? "->(" : "(");
    for (uint32_t i = 0; i < count; ++i) {
      if (i) weft_vm_text_append(buffer, capacity, &used, ",");
      const uint8_t type = types[first + i];
      weft_vm_text_append(buffer, capacity, &used,
                          type < WEFT_VM_TYPE_COUNT_ ? kNames[type] : "?");
    }
    weft_vm_text_append(buffer, capacity, &used, ")");
  }
  if (capacity > 0) buffer[used < capacity ? used : capacity - 1] = '\0';
  return used;
}

size_t weft_vm_signature_canonical_text(weft_vm_signature_t signature,
                                        char* buffer, size_t capacity) {
  if (!signature.text) {
    return weft_vm_signature_types_text(signature.arg_count,
                                        signature.ret_count, signature.types,
                                        buffer, capacity);
  }
  size_t used = 0;
  weft_vm_text_append(buffer, capacity, &used, signature.text);
  if (capacity > 0) buffer[used < capacity ? used : capacity - 1] = '\0';
  return used;
}

int weft_vm_parsed_signature_is_plain(
    const weft_vm_parsed_signature_t* parsed) {
  char plain[sizeof(parsed->canonical)];
  const size_t length =
      weft_vm_signature_types_text(parsed->arg_count, parsed->ret_count,
                                   parsed->types, plain, sizeof(plain));
  return length < sizeof(plain) && strcmp(plain, parsed->canonical) == 0;
}
