// weft-asm: assembles VM text modules (.wvm) into binary modules (.wvmb)
// and disassembles them back.
//
//   weft-asm IN.wvm [-o OUT.wvmb]      assemble (default OUT: IN + "b")
//   weft-asm -d IN.wvmb [-o OUT.wvm]   disassemble (default: stdout)
//   weft-asm --help
//
// Exit codes: 0 done, 1 an error (the message, with FILE:LINE:COLUMN for
// text, is on stderr), 2 a usage error.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/assembler.h"
#include "vm/binary.h"
#include "vm/disassembler.h"
#include "weft/weft.h"

#ifndef WEFT_VERSION_STRING
#define WEFT_VERSION_STRING "unknown"
#endif

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-asm [--help] IN.wvm [-o OUT.wvmb]\n"
          "       weft-asm -d IN.wvmb [-o OUT.wvm]\n"
          "\n"
          "Assembles a weft VM text module into the binary format (OUT\n"
          "defaults to IN with a 'b' appended: x.wvm -> x.wvmb), or with -d\n"
          "disassembles a binary module to text (OUT defaults to stdout).\n"
          "Both validate the module. Exit status: 0 done, 1 error (message\n"
          "on stderr), 2 usage. weft %s\n",
          WEFT_VERSION_STRING);
}

// Reads all of |path| into a malloc'd buffer.
static weft_status_t read_file(const char* path, uint8_t** out_data,
                               size_t* out_length) {
  *out_data = NULL;
  *out_length = 0;
  FILE* file = fopen(path, "rb");
  if (!file) {
    return WEFT_STATUS(NOT_FOUND, "cannot open '%s': %s", path,
                       strerror(errno));
  }
  weft_status_t status = WEFT_OK;
  uint8_t* data = NULL;
  size_t length = 0;
  size_t capacity = 0;
  for (;;) {
    if (length == capacity) {
      capacity = capacity ? capacity * 2 : 65536;
      uint8_t* grown = realloc(data, capacity);
      if (!grown) {
        status = WEFT_STATUS(RESOURCE_EXHAUSTED, "reading '%s': out of memory",
                             path);
        break;
      }
      data = grown;
    }
    const size_t got = fread(data + length, 1, capacity - length, file);
    length += got;
    if (got == 0) {
      if (ferror(file)) {
        status = WEFT_STATUS(DATA_LOSS, "reading '%s' failed", path);
      }
      break;
    }
  }
  fclose(file);
  if (weft_status_is_ok(status)) {
    *out_data = data;
    *out_length = length;
  } else {
    free(data);
  }
  return status;
}

// Writes |length| bytes to |path|, or to stdout when |path| is NULL.
static weft_status_t write_file(const char* path, const void* data,
                                size_t length) {
  FILE* file = path ? fopen(path, "wb") : stdout;
  if (!file) {
    return WEFT_STATUS(PERMISSION_DENIED, "cannot create '%s': %s", path,
                       strerror(errno));
  }
  weft_status_t status = WEFT_OK;
  if (fwrite(data, 1, length, file) != length || fflush(file) != 0) {
    status = WEFT_STATUS(DATA_LOSS, "writing '%s' failed: %s",
                         path ? path : "<stdout>", strerror(errno));
  }
  if (path && fclose(file) != 0 && weft_status_is_ok(status)) {
    status = WEFT_STATUS(DATA_LOSS, "closing '%s' failed: %s", path,
                         strerror(errno));
  }
  return status;
}

static weft_status_t assemble(const char* input, const char* output) {
  weft_allocator_t allocator = weft_allocator_system();
  uint8_t* text = NULL;
  size_t text_length = 0;
  weft_vm_bytecode_t* bytecode = NULL;
  uint8_t* binary = NULL;
  size_t binary_length = 0;
  weft_status_t status = read_file(input, &text, &text_length);
  if (weft_status_is_ok(status)) {
    status = weft_vm_assemble(input, (const char*)text, text_length, allocator,
                              &bytecode);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_binary_write(bytecode, allocator, &binary, &binary_length);
  }
  if (weft_status_is_ok(status)) {
    status = write_file(output, binary, binary_length);
  }
  weft_allocator_free(allocator, binary);
  weft_vm_bytecode_free(allocator, bytecode);
  free(text);
  return status;
}

static weft_status_t disassemble(const char* input, const char* output) {
  weft_allocator_t allocator = weft_allocator_system();
  uint8_t* binary = NULL;
  size_t binary_length = 0;
  weft_vm_bytecode_t* bytecode = NULL;
  char* text = NULL;
  size_t text_length = 0;
  weft_status_t status = read_file(input, &binary, &binary_length);
  if (weft_status_is_ok(status)) {
    status = weft_vm_binary_load(binary, binary_length, allocator, &bytecode);
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "while reading '%s'", input);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_disassemble(bytecode, allocator, &text, &text_length);
  }
  if (weft_status_is_ok(status)) {
    status = write_file(output, text, text_length);
  }
  weft_allocator_free(allocator, text);
  weft_vm_bytecode_free(allocator, bytecode);
  free(binary);
  return status;
}

int main(int argc, char** argv) {
  const char* input = NULL;
  const char* output = NULL;
  int disassembling = 0;
  for (int i = 1; i < argc; ++i) {
    const char* argument = argv[i];
    if (strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argument, "-d") == 0) {
      disassembling = 1;
    } else if (strcmp(argument, "-o") == 0 && i + 1 < argc && !output) {
      output = argv[++i];
    } else if (argument[0] == '-' || input) {
      fprintf(stderr, "weft-asm: unexpected argument '%s'\n\n", argument);
      print_usage(stderr);
      return 2;
    } else {
      input = argument;
    }
  }
  if (!input) {
    fprintf(stderr, "weft-asm: no input file\n\n");
    print_usage(stderr);
    return 2;
  }
  char* default_output = NULL;
  if (!disassembling && !output) {
    default_output = malloc(strlen(input) + 2);
    if (!default_output) return 1;
    strcpy(default_output, input);
    strcat(default_output, "b");
    output = default_output;
  }
  weft_status_t status =
      disassembling ? disassemble(input, output) : assemble(input, output);
  free(default_output);
  if (!weft_status_is_ok(status)) {
    fprintf(stderr, "weft-asm: ");
    weft_status_fprint(stderr, status);
    weft_status_free(status);
    return 1;
  }
  return 0;
}
