// weft vulkan driver: what weft reads of a SPIR-V module (spirv_module.h).
#include "drivers/vulkan/spirv_module.h"

#include <string.h>

enum {
  kHeaderWords = 5,
  kOpEntryPoint = 15,
  kOpExecutionMode = 16,
  kOpDecorate = 71,
  kExecutionModeLocalSize = 17,
  kDecorationBuiltIn = 11,
  kBuiltInWorkgroupSize = 25,
};

weft_status_t weft_spirv_module_check(const uint32_t* words, size_t word_count,
                                      const char* name) {
  if (word_count < kHeaderWords) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "SPIR-V module '%s' has %zu words, fewer than its "
                       "header's 5",
                       name, word_count);
  }
  if (words[0] != WEFT_SPIRV_MAGIC) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "'%s' is not a SPIR-V module: its first word is "
                       "%#010x, not the magic number %#010x",
                       name, words[0], WEFT_SPIRV_MAGIC);
  }
  for (size_t at = kHeaderWords; at < word_count;) {
    const uint32_t length = words[at] >> 16;
    if (length == 0 || length > word_count - at) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "SPIR-V module '%s' is malformed: the instruction at "
                         "word %zu (opcode %u) claims %u words, %zu remain",
                         name, at, words[at] & 0xFFFFu, length,
                         word_count - at);
    }
    at += length;
  }
  // A constant decorated BuiltIn WorkgroupSize sets the workgroup size of
  // every entry point of the module, whatever their LocalSize: with more
  // than one kernel in the module, all but one would run at the wrong
  // size. glslang emits one for every shader with a local_size.
  uint32_t entry_points = 0;
  bool workgroup_size_builtin = false;
  for (size_t at = kHeaderWords; at < word_count; at += words[at] >> 16) {
    const uint32_t opcode = words[at] & 0xFFFFu;
    const uint32_t length = words[at] >> 16;
    if (opcode == kOpEntryPoint) ++entry_points;
    if (opcode == kOpDecorate && length >= 4 &&
        words[at + 2] == kDecorationBuiltIn &&
        words[at + 3] == kBuiltInWorkgroupSize) {
      workgroup_size_builtin = true;
    }
  }
  if (workgroup_size_builtin && entry_points > 1) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "SPIR-V module '%s' has %u entry points and a "
                       "WorkgroupSize built-in, which would set the "
                       "workgroup size of all of them (strip it from each "
                       "shader before linking: spirv-opt "
                       "--eliminate-dead-const)",
                       name, entry_points);
  }
  return WEFT_OK;
}

// The literal string at |words|, |length| words at most: its length in
// bytes when NUL-terminated within them, or SIZE_MAX.
static size_t weft_spirv_string_length(const uint32_t* words, size_t length) {
  const char* bytes = (const char*)words;
  const size_t limit = length * sizeof(uint32_t);
  const char* end = memchr(bytes, '\0', limit);
  return end ? (size_t)(end - bytes) : SIZE_MAX;
}

void weft_spirv_module_find_entry_point(const uint32_t* words,
                                        size_t word_count,
                                        const char* entry_name,
                                        weft_spirv_entry_point_t* out_entry) {
  memset(out_entry, 0, sizeof(*out_entry));
  uint32_t id = 0;
  const size_t name_length = strlen(entry_name);
  // OpEntryPoint comes before OpExecutionMode (the module's layout rules),
  // but one pass for each keeps this independent of that.
  for (size_t at = kHeaderWords; at < word_count && !out_entry->found;
       at += words[at] >> 16) {
    const uint32_t length = words[at] >> 16;
    if ((words[at] & 0xFFFFu) != kOpEntryPoint || length < 4) continue;
    if (weft_spirv_string_length(&words[at + 3], length - 3) == name_length &&
        memcmp(&words[at + 3], entry_name, name_length) == 0) {
      out_entry->found = true;
      out_entry->execution_model = words[at + 1];
      id = words[at + 2];
    }
  }
  if (!out_entry->found) return;
  for (size_t at = kHeaderWords; at < word_count; at += words[at] >> 16) {
    const uint32_t length = words[at] >> 16;
    if ((words[at] & 0xFFFFu) == kOpExecutionMode && length >= 6 &&
        words[at + 1] == id && words[at + 2] == kExecutionModeLocalSize) {
      out_entry->has_local_size = true;
      memcpy(out_entry->local_size, &words[at + 3], 3 * sizeof(uint32_t));
    }
  }
}

void weft_spirv_module_list_entry_points(const uint32_t* words,
                                         size_t word_count, char* buffer,
                                         size_t capacity) {
  size_t used = 0;
  buffer[0] = '\0';
  for (size_t at = kHeaderWords; at < word_count; at += words[at] >> 16) {
    const uint32_t length = words[at] >> 16;
    if ((words[at] & 0xFFFFu) != kOpEntryPoint || length < 4 ||
        words[at + 1] != WEFT_SPIRV_EXECUTION_MODEL_GLCOMPUTE) {
      continue;
    }
    const size_t name_length =
        weft_spirv_string_length(&words[at + 3], length - 3);
    if (name_length == SIZE_MAX) continue;
    const char* separator = used ? ", " : "";
    const size_t needed = strlen(separator) + name_length;
    if (used + needed + 1 > capacity) {
      if (capacity > used + 4) memcpy(buffer + used, "...", 4);
      return;
    }
    memcpy(buffer + used, separator, strlen(separator));
    memcpy(buffer + used + strlen(separator), &words[at + 3], name_length);
    used += needed;
    buffer[used] = '\0';
  }
  if (!used && capacity > 6) memcpy(buffer, "none", 5);
}
