// weft VM: operand and value syntax of the text format (see text_syntax.h).
#include "vm/text_syntax.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char* weft_vm_shape_syntax(weft_vm_shape_t shape) {
  // clang-format off
  static const char* const kSyntax[WEFT_VM_SHAPE_COUNT_] = {
      [WEFT_VM_SHAPE_NONE] = "",
      [WEFT_VM_SHAPE_S_S] = "ss",
      [WEFT_VM_SHAPE_S_SS] = "sss",
      [WEFT_VM_SHAPE_S_SSS] = "sSSS",
      [WEFT_VM_SHAPE_S_I32] = "si",
      [WEFT_VM_SHAPE_S_K] = "sk",
      [WEFT_VM_SHAPE_R] = "r",
      [WEFT_VM_SHAPE_R_R] = "rr",
      [WEFT_VM_SHAPE_R_D] = "rd",
      [WEFT_VM_SHAPE_S_R] = "sr",
      [WEFT_VM_SHAPE_R_S] = "rs",
      [WEFT_VM_SHAPE_S_RS] = "srs",
      [WEFT_VM_SHAPE_R_SS] = "rss",
      [WEFT_VM_SHAPE_R_RS] = "rrs",
      [WEFT_VM_SHAPE_R_SR] = "rsr",
      [WEFT_VM_SHAPE_J] = "j",
      [WEFT_VM_SHAPE_S_J] = "sj",
      [WEFT_VM_SHAPE_CALL] = "c",
      [WEFT_VM_SHAPE_CALL_IMPORT] = "m",
      [WEFT_VM_SHAPE_RET] = "t",
      [WEFT_VM_SHAPE_FAIL] = "eM",
  };
  // clang-format on
  return (unsigned)shape < WEFT_VM_SHAPE_COUNT_ ? kSyntax[shape] : NULL;
}

bool weft_vm_opcode_immediate_is_float(const weft_vm_opcode_info_t* info) {
  const size_t length = strlen(info->name);
  return length >= 4 && (strcmp(info->name + length - 4, ".f32") == 0 ||
                         strcmp(info->name + length - 4, ".f64") == 0);
}

bool weft_vm_text_parse_integer(const char* text, size_t length, uint32_t bits,
                                uint64_t* out_bits) {
  size_t i = 0;
  bool negative = false;
  if (i < length && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  uint32_t base = 10;
  if (length - i > 2 && text[i] == '0' &&
      (text[i + 1] == 'x' || text[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  if (i == length) return false;
  uint64_t magnitude = 0;
  for (; i < length; ++i) {
    const char c = text[i];
    uint32_t digit;
    if (c >= '0' && c <= '9') {
      digit = (uint32_t)(c - '0');
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = (uint32_t)(c - 'a' + 10);
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      digit = (uint32_t)(c - 'A' + 10);
    } else {
      return false;
    }
    if (magnitude > (UINT64_MAX - digit) / base) return false;
    magnitude = magnitude * base + digit;
  }
  const uint64_t mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
  const uint64_t most_negative = 1ull << (bits - 1);
  if (negative ? magnitude > most_negative : magnitude > mask) return false;
  *out_bits = (negative ? 0 - magnitude : magnitude) & mask;
  return true;
}

// Sign, exponent and mantissa layout of an IEEE 754 float of |bits|.
typedef struct weft_vm_float_layout_t {
  uint64_t sign;
  uint64_t infinity;  // exponent all ones, mantissa 0
  uint64_t mantissa;  // mask
  uint64_t quiet;     // the canonical NaN's mantissa
} weft_vm_float_layout_t;

static weft_vm_float_layout_t weft_vm_float_layout(uint32_t bits) {
  if (bits == 32) {
    return (weft_vm_float_layout_t){0x80000000u, 0x7f800000u, 0x7fffffu,
                                    0x400000u};
  }
  return (weft_vm_float_layout_t){0x8000000000000000ull, 0x7ff0000000000000ull,
                                  0xfffffffffffffull, 0x8000000000000ull};
}

// Converts |text| (NUL-terminated, all of it) with strtof or strtod.
static bool weft_vm_float_from_decimal(const char* text, uint32_t bits,
                                       uint64_t* out_bits) {
  char* end = NULL;
  if (bits == 32) {
    const float value = strtof(text, &end);
    if (*end != '\0' || isinf(value)) return false;
    uint32_t value_bits;
    memcpy(&value_bits, &value, sizeof(value_bits));
    *out_bits = value_bits;
  } else {
    const double value = strtod(text, &end);
    if (*end != '\0' || isinf(value)) return false;
    memcpy(out_bits, &value, sizeof(*out_bits));
  }
  return true;
}

bool weft_vm_text_parse_float(const char* text, size_t length, uint32_t bits,
                              uint64_t* out_bits) {
  char buffer[64];
  if (length == 0 || length >= sizeof(buffer)) return false;
  memcpy(buffer, text, length);
  buffer[length] = '\0';
  if (memchr(buffer, '\0', length)) return false;
  const weft_vm_float_layout_t layout = weft_vm_float_layout(bits);
  const char* body = buffer;
  uint64_t sign = 0;
  if (*body == '-' || *body == '+') {
    sign = *body == '-' ? layout.sign : 0;
    ++body;
  }
  if (strcmp(body, "inf") == 0) {
    *out_bits = sign | layout.infinity;
    return true;
  }
  if (strcmp(body, "nan") == 0) {
    *out_bits = sign | layout.infinity | layout.quiet;
    return true;
  }
  if (strncmp(body, "nan:", 4) == 0) {
    uint64_t payload = 0;
    const char* digits = body + 4;
    if (strncmp(digits, "0x", 2) != 0 ||
        !weft_vm_text_parse_integer(digits, strlen(digits), 64, &payload) ||
        payload == 0 || payload > layout.mantissa) {
      return false;
    }
    *out_bits = sign | layout.infinity | payload;
    return true;
  }
  // Digits only from here: strtod's own "infinity" and "nan(...)" are not
  // the format's spellings.
  if (!((*body >= '0' && *body <= '9') || *body == '.')) return false;
  return weft_vm_float_from_decimal(buffer, bits, out_bits);
}

void weft_vm_text_format_float(uint64_t bits, uint32_t width, char* buffer,
                               size_t capacity) {
  const weft_vm_float_layout_t layout = weft_vm_float_layout(width);
  const char* sign = (bits & layout.sign) ? "-" : "";
  const uint64_t magnitude = bits & ~layout.sign;
  if (magnitude == layout.infinity) {
    snprintf(buffer, capacity, "%sinf", sign);
    return;
  }
  if (magnitude > layout.infinity) {
    const uint64_t payload = magnitude & layout.mantissa;
    if (payload == layout.quiet) {
      snprintf(buffer, capacity, "%snan", sign);
    } else {
      snprintf(buffer, capacity, "%snan:0x%llx", sign,
               (unsigned long long)payload);
    }
    return;
  }
  double value;
  if (width == 32) {
    const uint32_t value_bits = (uint32_t)bits;
    float single;
    memcpy(&single, &value_bits, sizeof(single));
    value = single;
  } else {
    memcpy(&value, &bits, sizeof(value));
  }
  // The shortest precision that reads back to the same bits.
  const int most = width == 32 ? 9 : 17;
  for (int precision = width == 32 ? 6 : 15; precision <= most; ++precision) {
    snprintf(buffer, capacity, "%.*g", precision, value);
    uint64_t back = 0;
    if (weft_vm_float_from_decimal(buffer, width, &back) && back == bits) {
      return;
    }
  }
}

bool weft_vm_text_parse_status_code(const char* text, size_t length,
                                    uint32_t* out_code) {
  for (uint32_t code = 1; code < WEFT_STATUS_CODE_COUNT_; ++code) {
    const char* name = weft_status_code_string((weft_status_code_t)code);
    if (strlen(name) == length && memcmp(name, text, length) == 0) {
      *out_code = code;
      return true;
    }
  }
  uint64_t value = 0;
  if (length > 0 && text[0] >= '0' && text[0] <= '9' &&
      weft_vm_text_parse_integer(text, length, 32, &value) && value >= 1 &&
      value < WEFT_STATUS_CODE_COUNT_) {
    *out_code = (uint32_t)value;
    return true;
  }
  return false;
}

size_t weft_vm_text_escape_byte(uint8_t byte, char* buffer) {
  switch (byte) {
    case '\n': memcpy(buffer, "\\n", 3); return 2;
    case '\t': memcpy(buffer, "\\t", 3); return 2;
    case '\r': memcpy(buffer, "\\r", 3); return 2;
    case '\\': memcpy(buffer, "\\\\", 3); return 2;
    case '"': memcpy(buffer, "\\\"", 3); return 2;
    default: break;
  }
  if (byte >= 0x20 && byte < 0x7f) {
    buffer[0] = (char)byte;
    buffer[1] = '\0';
    return 1;
  }
  snprintf(buffer, 5, "\\x%02x", byte);
  return 4;
}

void weft_vm_text_describe(const char* line, size_t length, size_t position,
                           char* buffer, size_t capacity) {
  if (position >= length || line[position] == ';') {
    snprintf(buffer, capacity, "end of line");
    return;
  }
  const char* at = line + position;
  const size_t left = length - position;
  size_t token = 0;
  if (*at == '"') {
    // A string: up to its closing quote.
    token = 1;
    while (token < left && at[token] != '"') {
      token += at[token] == '\\' && token + 1 < left ? 2 : 1;
    }
    if (token < left) ++token;
  } else {
    while (token < left) {
      const char c = at[token];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '@' ||
            c == '-' || c == '+' || c == ':')) {
        break;
      }
      ++token;
    }
    if (token == 0) token = 1;
  }
  const size_t shown = token > 48 ? 48 : token;
  size_t used = 0;
  buffer[used++] = '\'';
  for (size_t i = 0; i < shown && used + 6 < capacity; ++i) {
    const unsigned char c = (unsigned char)at[i];
    buffer[used++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  if (shown < token && used + 6 < capacity) {
    memcpy(buffer + used, "...", 3);
    used += 3;
  }
  buffer[used++] = '\'';
  buffer[used] = '\0';
}
