#include "cli_number.h"

#include <inttypes.h>
#include <stdio.h>

bool weft_cli_try_parse_u64(const char* text, uint64_t min, uint64_t max,
                            uint64_t* out_value) {
  if (!text || !*text) return false;
  // By hand, not strtoull: that takes a sign (and wraps "-1" to 2^64 - 1),
  // leading spaces and, with errno, reports only part of what is wrong.
  uint64_t value = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    const uint64_t digit = (uint64_t)(*p - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (value < min || value > max) return false;
  *out_value = value;
  return true;
}

bool weft_cli_parse_u64(const char* tool, const char* flag, const char* text,
                        uint64_t min, uint64_t max, uint64_t* out_value) {
  if (weft_cli_try_parse_u64(text, min, max, out_value)) return true;
  fprintf(stderr,
          "%s: %s takes an integer from %" PRIu64 " to %" PRIu64
          ", not '%s'\n",
          tool, flag, min, max, text ? text : "");
  return false;
}

bool weft_cli_parse_u32(const char* tool, const char* flag, const char* text,
                        uint32_t min, uint32_t max, uint32_t* out_value) {
  uint64_t value = 0;
  if (!weft_cli_parse_u64(tool, flag, text, min, max, &value)) return false;
  *out_value = (uint32_t)value;
  return true;
}
