// Tests for src/vm/binary: write and load round trip; every truncated
// prefix and thousands of deterministic byte flips are refused cleanly (or
// load a valid module), never read out of bounds (run under the asan
// preset); corrupt fields are named with their offset.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_compare.h"
#include "vm/assembler.h"
#include "vm/binary.h"
#include "vm/disassembler.h"

#ifndef WEFT_VM_TEST_DATA_DIR
#error "WEFT_VM_TEST_DATA_DIR must name tests/vm/data"
#endif

// The example module (tests/vm/data/example.wvm), assembled.
static weft_vm_bytecode_t* assemble_example(void) {
  const char* path = WEFT_VM_TEST_DATA_DIR "/example.wvm";
  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  static char text[1 << 16];
  const size_t length = fread(text, 1, sizeof(text), file);
  fclose(file);
  weft_vm_bytecode_t* bytecode = NULL;
  weft_status_t status = weft_vm_assemble("example.wvm", text, length,
                                          weft_allocator_system(), &bytecode);
  if (!weft_status_is_ok(status)) {
    fail_msg("example.wvm: %s", weft_status_message(status));
  }
  return bytecode;
}

static void write_binary(const weft_vm_bytecode_t* bytecode, uint8_t** data,
                         size_t* length) {
  weft_status_t status =
      weft_vm_binary_write(bytecode, weft_allocator_system(), data, length);
  if (!weft_status_is_ok(status)) {
    fail_msg("write: %s", weft_status_message(status));
  }
}

// Loads |length| bytes copied into a heap block of exactly that size, so
// AddressSanitizer sees any read past the end.
static weft_status_t load_exact(const uint8_t* data, size_t length,
                                weft_vm_bytecode_t** out_bytecode) {
  uint8_t* copy = malloc(length ? length : 1);
  assert_non_null(copy);
  if (length) memcpy(copy, data, length);
  weft_status_t status =
      weft_vm_binary_load(copy, length, weft_allocator_system(), out_bytecode);
  free(copy);
  return status;
}

static void round_trip(void** state) {
  weft_vm_bytecode_t* original = assemble_example();
  uint8_t* data = NULL;
  size_t length = 0;
  write_binary(original, &data, &length);
  assert_memory_equal(data, WEFT_VM_BINARY_MAGIC, WEFT_VM_BINARY_MAGIC_SIZE);
  weft_vm_bytecode_t* loaded = NULL;
  weft_status_t status = load_exact(data, length, &loaded);
  if (!weft_status_is_ok(status)) {
    fail_msg("load: %s", weft_status_message(status));
  }
  char why[256];
  if (!weft_vm_test_modules_equal(original, loaded, true, why, sizeof(why))) {
    fail_msg("loaded module differs: %s", why);
  }
  assert_string_equal(loaded->source_name, "example.wvm");
  assert_int_equal(loaded->functions[0].flags, WEFT_VM_FUNCTION_FLAG_EXPORT);
  // @matvec's declarations came back (module_compare compares them all).
  const weft_vm_function_decls_t* decls =
      weft_vm_bytecode_function_decls(loaded, 3);
  assert_non_null(decls);
  assert_null(weft_vm_bytecode_function_decls(loaded, 0));
  assert_int_equal(decls->symbol_count, 2);
  assert_string_equal(decls->symbols[1], "K");
  assert_string_equal(decls->args[1].name, "x");
  assert_int_equal(decls->args[1].dims[0].symbol, 1);
  assert_int_equal(decls->results[1].dims[1].size, 4);
  // Writing is deterministic: the loaded module gives the same bytes.
  uint8_t* again = NULL;
  size_t again_length = 0;
  write_binary(loaded, &again, &again_length);
  assert_int_equal(again_length, length);
  assert_memory_equal(again, data, length);
  free(again);
  free(data);
  weft_vm_bytecode_free(weft_allocator_system(), loaded);
  weft_vm_bytecode_free(weft_allocator_system(), original);
}

// The ids of the sections a binary holds, as a bit set.
static uint32_t section_ids(const uint8_t* data);

// A module without imports, rodata, constants, lines or declarations
// still round trips (absent sections); without declarations the file has
// none of their sections, so it is what the format wrote before them.
static void minimal_module(void** state) {
  static const char kText[] = "module tiny\nfunc @f() -> ()\n  ret ()\nend\n";
  weft_vm_bytecode_t* original = NULL;
  assert_true(weft_status_is_ok(weft_vm_assemble(
      NULL, kText, strlen(kText), weft_allocator_system(), &original)));
  uint8_t* data = NULL;
  size_t length = 0;
  write_binary(original, &data, &length);
  assert_int_equal(section_ids(data),
                   (1u << 1) | (1u << 2) | (1u << 3) | (1u << 6) | (1u << 7) |
                       (1u << 12));
  weft_vm_bytecode_t* loaded = NULL;
  assert_true(weft_status_is_ok(load_exact(data, length, &loaded)));
  assert_null(loaded->function_decls);
  char why[256];
  assert_true(
      weft_vm_test_modules_equal(original, loaded, true, why, sizeof(why)));
  free(data);
  weft_vm_bytecode_free(weft_allocator_system(), loaded);
  weft_vm_bytecode_free(weft_allocator_system(), original);
}

static void every_truncated_prefix_is_refused(void** state) {
  weft_vm_bytecode_t* original = assemble_example();
  uint8_t* data = NULL;
  size_t length = 0;
  write_binary(original, &data, &length);
  for (size_t prefix = 0; prefix < length; ++prefix) {
    weft_vm_bytecode_t* loaded = NULL;
    weft_status_t status = load_exact(data, prefix, &loaded);
    if (!weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) || loaded) {
      fail_msg(
          "prefix of %zu of %zu bytes: %s", prefix, length,
          weft_status_is_ok(status) ? "loaded" : weft_status_message(status));
    }
    assert_non_null(strstr(weft_status_message(status), "binary module: "));
    weft_status_free(status);
  }
  free(data);
  weft_vm_bytecode_free(weft_allocator_system(), original);
}

// xorshift64*: the same sequence on every run.
static uint64_t next_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 2685821657736338717ull;
}

// A loaded module validates, writes, and its disassembly assembles to a
// module whose disassembly is the same text (what the fuzz target checks).
static void expect_sound(const weft_vm_bytecode_t* loaded, int iteration) {
  assert_true(weft_status_is_ok(weft_vm_bytecode_validate(loaded)));
  char* text = NULL;
  size_t text_length = 0;
  weft_status_t status =
      weft_vm_disassemble(loaded, weft_allocator_system(), &text, &text_length);
  assert_true(weft_status_is_ok(status));
  weft_vm_bytecode_t* assembled = NULL;
  status = weft_vm_assemble("flip.wvm", text, text_length,
                            weft_allocator_system(), &assembled);
  if (!weft_status_is_ok(status)) {
    fail_msg("iteration %d: the disassembly does not assemble: %s\n%s",
             iteration, weft_status_message(status), text);
  }
  char* again = NULL;
  size_t again_length = 0;
  assert_true(weft_status_is_ok(weft_vm_disassemble(
      assembled, weft_allocator_system(), &again, &again_length)));
  assert_string_equal(again, text);
  free(again);
  weft_vm_bytecode_free(weft_allocator_system(), assembled);
  free(text);
  uint8_t* rewritten = NULL;
  size_t rewritten_length = 0;
  write_binary(loaded, &rewritten, &rewritten_length);
  free(rewritten);
}

// Loads a mutated binary: a module that loads must be sound (|iteration|
// names it there); anything else must be INVALID_ARGUMENT (|what| names
// the mutation in the failure). Returns 1 when it loaded, else 0.
static int load_mutant(const uint8_t* mutated, size_t length, int iteration,
                       const char* what) {
  weft_vm_bytecode_t* loaded = NULL;
  weft_status_t status = load_exact(mutated, length, &loaded);
  if (weft_status_is_ok(status)) {
    expect_sound(loaded, iteration);
    weft_vm_bytecode_free(weft_allocator_system(), loaded);
    return 1;
  }
  if (!weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT)) {
    fail_msg("%s: %s", what, weft_status_message(status));
  }
  assert_null(loaded);
  weft_status_free(status);
  return 0;
}

// Flips 1 to 4 bytes at a time, thousands of times: each result loads a
// module that validates, disassembles and writes, or fails with
// INVALID_ARGUMENT.
static void byte_flips_never_crash(void** state) {
  weft_vm_bytecode_t* original = assemble_example();
  uint8_t* data = NULL;
  size_t length = 0;
  write_binary(original, &data, &length);
  uint8_t* mutated = malloc(length);
  assert_non_null(mutated);
  uint64_t random = 0x9e3779b97f4a7c15ull;
  int loaded_count = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    memcpy(mutated, data, length);
    const int flips = 1 + (int)(next_random(&random) % 4);
    for (int i = 0; i < flips; ++i) {
      const uint64_t bits = next_random(&random);
      // Half the flips hit the header and section table, where one byte
      // decides the most.
      const size_t span = (bits & 1) ? length : (length < 256 ? length : 256);
      mutated[(bits >> 8) % span] ^= (uint8_t)(1 + (bits >> 40) % 255);
    }
    char what[48];
    snprintf(what, sizeof(what), "iteration %d", iteration);
    loaded_count += load_mutant(mutated, length, iteration, what);
  }
  // Some flips (rodata bytes, line numbers) leave a valid module.
  assert_true(loaded_count > 0);
  free(mutated);
  free(data);
  weft_vm_bytecode_free(weft_allocator_system(), original);
}

static uint32_t get_u32(const uint8_t* p);
static uint32_t section_offset(const uint8_t* data, uint32_t id);

// Every byte of the declaration sections (13 to 16) and of the string
// table, each changed to a few values: the loader refuses the result with
// INVALID_ARGUMENT or loads a sound module (names and symbols the text
// format can write back).
static void declaration_flips_never_crash(void** state) {
  weft_vm_bytecode_t* original = assemble_example();
  uint8_t* data = NULL;
  size_t length = 0;
  write_binary(original, &data, &length);
  uint8_t* mutated = malloc(length);
  assert_non_null(mutated);
  // The declaration sections are written last and back to back; the
  // string table holds their names.
  const uint32_t first = section_offset(data, 13);
  const uint32_t strings = section_offset(data, 2);
  const uint32_t strings_end = section_offset(data, 3);
  int loaded_count = 0;
  int iteration = 0;
  for (size_t at = strings; at < length; ++at) {
    if (at == strings_end) at = first;
    static const uint8_t kValues[] = {0x00, 0x01, 0x02, 0x30, 0x41,
                                      0x61, 0x78, 0x7f, 0xff};
    for (size_t v = 0; v < sizeof(kValues); ++v, ++iteration) {
      if (data[at] == kValues[v]) continue;
      memcpy(mutated, data, length);
      mutated[at] = kValues[v];
      char what[48];
      snprintf(what, sizeof(what), "byte %zu = 0x%02x", at, kValues[v]);
      loaded_count += load_mutant(mutated, length, iteration, what);
    }
  }
  // Some changes leave a valid module (a size, an element type).
  assert_true(loaded_count > 0);
  free(mutated);
  free(data);
  weft_vm_bytecode_free(weft_allocator_system(), original);
}

static uint32_t get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t* p, uint32_t value) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(value >> (8 * i));
}

static uint32_t section_ids(const uint8_t* data) {
  uint32_t ids = 0;
  const uint32_t count = get_u32(data + 16);
  for (uint32_t i = 0; i < count; ++i) ids |= 1u << get_u32(data + 24 + 16 * i);
  return ids;
}

// The offset of section |id| (docs/VM.md: 24-byte header, then 16-byte
// entries id, offset, size, count).
static uint32_t section_offset(const uint8_t* data, uint32_t id) {
  const uint32_t count = get_u32(data + 16);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* entry = data + 24 + 16 * i;
    if (get_u32(entry) == id) return get_u32(entry + 4);
  }
  fail_msg("no section %u", id);
  return 0;
}

// Corrupts the example's binary with |edit| and expects |needle|.
static void expect_refused(void (*edit)(uint8_t* data, size_t length),
                           const char* needle) {
  weft_vm_bytecode_t* original = assemble_example();
  uint8_t* data = NULL;
  size_t length = 0;
  write_binary(original, &data, &length);
  edit(data, length);
  weft_vm_bytecode_t* loaded = NULL;
  weft_status_t status = load_exact(data, length, &loaded);
  if (!weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) ||
      !strstr(weft_status_message(status), needle)) {
    fail_msg("expected INVALID_ARGUMENT with '%s', got: %s", needle,
             weft_status_is_ok(status) ? "OK" : weft_status_message(status));
  }
  weft_status_free(status);
  free(data);
  weft_vm_bytecode_free(weft_allocator_system(), original);
}

static void edit_magic(uint8_t* data, size_t length) { data[3] = 'X'; }
static void edit_version(uint8_t* data, size_t length) { put_u32(data + 8, 7); }
static void edit_section_id(uint8_t* data, size_t length) {
  put_u32(data + 24, 99);
}
static void edit_section_size(uint8_t* data, size_t length) {
  put_u32(data + 24 + 8, get_u32(data + 24 + 8) + 1);
}
static void edit_section_offset(uint8_t* data, size_t length) {
  put_u32(data + 24 + 4, (uint32_t)length);
}
static void edit_function_name(uint8_t* data, size_t length) {
  put_u32(data + section_offset(data, 6), 0x7fffffff);
}
static void edit_function_signature(uint8_t* data, size_t length) {
  put_u32(data + section_offset(data, 6) + 4, 1000);
}
static void edit_string_table_end(uint8_t* data, size_t length) {
  // The last string loses its NUL.
  const uint32_t count = get_u32(data + 16);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* entry = data + 24 + 16 * i;
    if (get_u32(entry) == 2) {
      data[get_u32(entry + 4) + get_u32(entry + 8) - 1] = 'x';
    }
  }
}
static void edit_opcode(uint8_t* data, size_t length) {
  data[section_offset(data, 7)] = 250;
}
static void edit_signature_type(uint8_t* data, size_t length) {
  data[section_offset(data, 4)] = 9;
}
static void edit_signature_text(uint8_t* data, size_t length) {
  // Signature 0's text now points at the module name: not a signature.
  put_u32(data + section_offset(data, 3) + 8, 0);
}

// Declarations (sections 13 to 16; example.wvm's @matvec, function 3,
// declares 4 arguments and 2 results, symbols M and K).
static void edit_declared_function(uint8_t* data, size_t length) {
  put_u32(data + section_offset(data, 13), 9);
}
static void edit_declared_bits(uint8_t* data, size_t length) {
  put_u32(data + section_offset(data, 13) + 4, 4);
}
static void edit_declared_symbol_count(uint8_t* data, size_t length) {
  put_u32(data + section_offset(data, 13) + 8, 3);
}
static void edit_declared_element_type(uint8_t* data, size_t length) {
  data[section_offset(data, 14) + 4] = 12;
}
static void edit_declared_rank(uint8_t* data, size_t length) {
  data[section_offset(data, 14) + 5] = 9;
}
static void edit_declared_reserved(uint8_t* data, size_t length) {
  data[section_offset(data, 14) + 7] = 1;
}
static void edit_declared_name(uint8_t* data, size_t length) {
  put_u32(data + section_offset(data, 14), 0x7fffffff);
}
static void edit_declared_dim_kind(uint8_t* data, size_t length) {
  put_u32(data + section_offset(data, 15), 3);
}
static void edit_declared_dim_symbol(uint8_t* data, size_t length) {
  // w's first dimension, M (symbol 0), becomes symbol 2 of 2.
  data[section_offset(data, 15) + 4] = 2;
}
static void edit_declared_dim_size(uint8_t* data, size_t length) {
  // tail's 4 (the last dimension) becomes -1.
  const uint32_t dims = section_offset(data, 15);
  for (int i = 4; i < 12; ++i) data[dims + 12 * 5 + i] = 0xff;
}
static void edit_declared_symbol_order(uint8_t* data, size_t length) {
  // w: KxK (symbol 1 before symbol 0 is used).
  data[section_offset(data, 15) + 4] = 1;
}
static void edit_declared_value_name(uint8_t* data, size_t length) {
  // Value 1 ('x') takes value 0's name, 'w'.
  const uint32_t values = section_offset(data, 14);
  put_u32(data + values + 8, get_u32(data + values));
}
static void edit_declared_symbol_name(uint8_t* data, size_t length) {
  // Symbol 0 takes the name of value 0, 'w': not a symbol name.
  put_u32(data + section_offset(data, 16),
          get_u32(data + section_offset(data, 14)));
}
static void edit_declared_tensor_on_scalar(uint8_t* data, size_t length) {
  // 'count' (i32, value 3) gets an element type.
  data[section_offset(data, 14) + 8 * 3 + 4] = 2;
}

static void corrupt_fields_are_named(void** state) {
  expect_refused(edit_magic, "header.magic at offset 0");
  expect_refused(edit_version, "header.version at offset 8: version 7");
  expect_refused(edit_section_id, "sections[0] at offset 24: section id 99");
  expect_refused(edit_section_size, "sections[0] at offset 32: module section");
  expect_refused(edit_section_offset, "sections[0] at offset 28");
  expect_refused(edit_function_name, "functions[0] at offset");
  expect_refused(edit_function_signature,
                 "signature 1000 is past the 6 signatures");
  expect_refused(edit_string_table_end, "runs off the end of the string table");
  expect_refused(edit_opcode, "opcode 250 is unknown");
  expect_refused(edit_signature_type, "signature_types at offset");
  expect_refused(edit_signature_text, "signatures[0] at offset");
  expect_refused(edit_declared_function,
                 "declared_functions[0] at offset");
  expect_refused(edit_declared_function, "function 9 is not in [0, 4)");
  expect_refused(edit_declared_bits, "declared 0x4 is not 1 (arguments)");
  expect_refused(edit_declared_symbol_count,
                 "3 symbols (at most 64) from 0 are past the 2 declared "
                 "symbols");
  expect_refused(edit_declared_element_type,
                 "declared_values[0] at offset");
  expect_refused(edit_declared_element_type, "element type 12, rank 2");
  expect_refused(edit_declared_rank, "element type 2, rank 9");
  expect_refused(edit_declared_reserved, "reserved 256");
  expect_refused(edit_declared_name, "string 2147483647 is past");
  expect_refused(edit_declared_dim_kind, "declared_dims[0] at offset");
  expect_refused(edit_declared_dim_kind, "kind 3 with value 0");
  expect_refused(edit_declared_dim_symbol,
                 "kind 2 with value 2 is not a size");
  expect_refused(edit_declared_dim_size,
                 "kind 0 with value 18446744073709551615");
  expect_refused(edit_declared_symbol_order,
                 "function 'matvec': argument 1 'w': dimension 0 (kind 2, "
                 "size 0, symbol 1)");
  expect_refused(edit_declared_value_name,
                 "function 'matvec': argument 1 and argument 2 are both "
                 "named 'w'");
  expect_refused(edit_declared_symbol_name,
                 "symbol 0 is named 'w', not [A-Z][A-Z0-9_]*");
  expect_refused(edit_declared_tensor_on_scalar,
                 "argument 4 'count' is i32: only r<hal.buffer_view> and r "
                 "values take a tensor type");
}

// Every allocation of the writer and the loader may fail, cleanly.
static void allocation_failures(void** state) {
  weft_vm_bytecode_t* original = assemble_example();
  uint8_t* data = NULL;
  size_t length = 0;
  for (int64_t fail_at = 0;; ++fail_at) {
    assert_true(fail_at < 1000);
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    weft_status_t status =
        weft_vm_binary_write(original, allocator, &data, &length);
    if (weft_status_is_ok(status)) break;
    assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
    assert_null(data);
    weft_status_free(status);
  }
  for (int64_t fail_at = 0;; ++fail_at) {
    assert_true(fail_at < 1000);
    weft_failing_allocator_t storage;
    weft_allocator_t allocator = weft_failing_allocator_initialize(
        weft_allocator_system(), fail_at, &storage);
    weft_vm_bytecode_t* loaded = NULL;
    weft_status_t status =
        weft_vm_binary_load(data, length, allocator, &loaded);
    if (weft_status_is_ok(status)) {
      weft_vm_bytecode_free(allocator, loaded);
      break;
    }
    assert_true(weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED));
    assert_null(loaded);
    weft_status_free(status);
  }
  free(data);
  weft_vm_bytecode_free(weft_allocator_system(), original);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip),
      cmocka_unit_test(minimal_module),
      cmocka_unit_test(every_truncated_prefix_is_refused),
      cmocka_unit_test(byte_flips_never_crash),
      cmocka_unit_test(declaration_flips_never_crash),
      cmocka_unit_test(corrupt_fields_are_named),
      cmocka_unit_test(allocation_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
