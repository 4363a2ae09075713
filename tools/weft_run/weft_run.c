// weft-run: loads a VM module and runs one of its functions on a device.
//
//   weft-run --module=FILE(.wvm|.wvmb) --function=NAME [--device=STRING]
//            [--input=VALUE]... [--output=-|@FILE.npy]... [--kernels=LIB.so]
//            [--trace=FILE.json]
//
// The module is linked with the native hal module, whose default device is
// --device (local-task by default); --kernels registers a kernel library
// (a shared object) the program opens with hal.executable.static(dev,
// "kernels"). Inputs are listed in tensor_io.h; each --output says where
// the result of the same position goes (printed by default). Inputs are
// checked against the tensor types the function declares before the call
// (weft_hal_check_arguments), results after it. Exit codes: 0 ok, 1 the
// program (or loading it) failed, or returned results that do not match
// its declarations, message on stderr; 2 bad usage: inputs that cannot be
// read or do not fit the function, outputs that do not fit its results.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor_io.h"
// The one private header: the parser of the function's signature text
// (which types its arguments have and which refs are buffer views).
#include "vm/signature.h"
#include "weft/weft.h"

#ifndef WEFT_VERSION_STRING
#define WEFT_VERSION_STRING "unknown"
#endif

// The most --input and --output options.
#define WEFT_RUN_MAX_VALUES 64

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-run --module=FILE --function=NAME [--device=STRING]\n"
          "                [--input=VALUE]... [--output=-|@FILE.npy]...\n"
          "                [--kernels=LIB.so] [--trace=FILE.json]\n"
          "\n"
          "Runs FUNCTION of a weft VM module (.wvm text or .wvmb binary) on\n"
          "a device (default local-task). One --input per argument, in\n"
          "order: i32=7, f64=2.5, 4xf32=1 2 3 4 (a tensor: shape x type =\n"
          "elements), or @FILE.npy. Results are printed, or written as .npy\n"
          "with --output=@FILE.npy at the result's position. --kernels\n"
          "registers a kernel library the program opens with\n"
          "hal.executable.static(dev, \"kernels\").\n"
          "Inputs must match the tensor types the function declares\n"
          "(arg x: K f32), checked before the call; results after it.\n"
          "Exit status: 0 ok, 1 the program failed (message on stderr),\n"
          "2 usage (inputs that cannot be read or do not fit the function,\n"
          "outputs that do not fit its results too). weft %s\n",
          WEFT_VERSION_STRING);
}

typedef struct weft_run_options_t {
  const char* module_path;
  const char* function;
  const char* device;
  const char* kernels;
  const char* trace;
  const char* inputs[WEFT_RUN_MAX_VALUES];
  int input_count;
  const char* outputs[WEFT_RUN_MAX_VALUES];
  int output_count;
} weft_run_options_t;

// The value after "--name=" when |argument| is that option, else NULL.
static const char* option_value(const char* argument, const char* name) {
  const size_t length = strlen(name);
  return strncmp(argument, name, length) == 0 && argument[length] == '='
             ? argument + length + 1
             : NULL;
}

// Sets |*out| to |value| for the option |name|, which is given once:
// false (after saying so) when it already was, rather than letting the
// last one silently win.
static bool set_once(const char* name, const char* value, const char** out) {
  if (*out) {
    fprintf(stderr, "weft-run: %s is given twice ('%s', then '%s'); give it "
                    "once\n",
            name, *out, value);
    return false;
  }
  *out = value;
  return true;
}

// Parses the command line; returns false (after saying why) on bad usage.
static bool parse_options(int argc, char** argv, weft_run_options_t* out) {
  memset(out, 0, sizeof(*out));
  static const char* const kSingle[] = {"--module", "--function", "--device",
                                        "--kernels", "--trace"};
  const char** const single_out[] = {&out->module_path, &out->function,
                                     &out->device, &out->kernels, &out->trace};
  for (int i = 1; i < argc; ++i) {
    const char* argument = argv[i];
    const char* value = NULL;
    size_t k = 0;
    while (k < sizeof(kSingle) / sizeof(kSingle[0]) &&
           !(value = option_value(argument, kSingle[k]))) {
      ++k;
    }
    if (value) {
      if (!set_once(kSingle[k], value, single_out[k])) return false;
    } else if ((value = option_value(argument, "--input"))) {
      if (out->input_count == WEFT_RUN_MAX_VALUES) {
        fprintf(stderr, "weft-run: more than %d inputs\n",
                WEFT_RUN_MAX_VALUES);
        return false;
      }
      out->inputs[out->input_count++] = value;
    } else if ((value = option_value(argument, "--output"))) {
      if (out->output_count == WEFT_RUN_MAX_VALUES) {
        fprintf(stderr, "weft-run: more than %d outputs\n",
                WEFT_RUN_MAX_VALUES);
        return false;
      }
      if (strcmp(value, "-") != 0 && value[0] != '@') {
        fprintf(stderr,
                "weft-run: --output=%s: expected - (print) or @FILE.npy\n",
                value);
        return false;
      }
      out->outputs[out->output_count++] = value;
    } else {
      fprintf(stderr, "weft-run: unexpected argument '%s'\n", argument);
      return false;
    }
  }
  if (!out->device) out->device = "local-task";
  if (!out->module_path || !out->function) {
    fprintf(stderr, "weft-run: --module and --function are required\n");
    return false;
  }
  return true;
}

// Prints |status| (consumed) as weft-run's error.
static void report(weft_status_t status) {
  fprintf(stderr, "weft-run: ");
  weft_status_fprint(stderr, status);
  weft_status_free(status);
}

// Everything one run holds, released by weft_run_release.
typedef struct weft_run_t {
  void* kernels_handle;
  weft_vm_module_t* program;
  weft_vm_module_t* hal;
  weft_vm_context_t* context;
  weft_device_t* device;
  weft_vm_value_t args[WEFT_RUN_MAX_VALUES];
  uint32_t arg_count;
  weft_vm_value_t results[WEFT_RUN_MAX_VALUES];
  uint32_t result_count;
  // The function's module (borrowed from the context) and index, and what
  // checking its arguments bound, for checking its results.
  weft_vm_module_t* function_module;
  uint32_t function_index;
  weft_hal_tensor_check_t check;
} weft_run_t;

static void weft_run_release_values(weft_vm_value_t* values, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) weft_vm_value_release(&values[i]);
}

static void weft_run_release(weft_run_t* run) {
  weft_run_release_values(run->args, run->arg_count);
  weft_run_release_values(run->results, run->result_count);
  weft_vm_context_release(run->context);
  weft_vm_module_release(run->hal);
  weft_vm_module_release(run->program);
  weft_device_release(run->device);
  if (run->kernels_handle) dlclose(run->kernels_handle);
}

// Opens --kernels and finds its query function.
static weft_status_t open_kernels(const char* path, void** out_handle,
                                  weft_kernel_library_query_fn_t* out_query) {
  *out_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*out_handle) {
    const char* error = dlerror();
    return WEFT_STATUS(NOT_FOUND, "--kernels=%s: %s", path,
                       error ? error : "cannot load it");
  }
  void* symbol = dlsym(*out_handle, WEFT_KERNEL_LIBRARY_QUERY_SYMBOL);
  if (!symbol) {
    return WEFT_STATUS(NOT_FOUND, "--kernels=%s does not export %s", path,
                       WEFT_KERNEL_LIBRARY_QUERY_SYMBOL);
  }
  // dlsym returns an object pointer; POSIX guarantees the conversion.
  memcpy(out_query, &symbol, sizeof(*out_query));
  return WEFT_OK;
}

// Writes the function's arguments as it declares them ("x: K f32, w1:
// KxN f32, relu"), or its signature |text| when it declares none.
static void describe_arguments(const weft_vm_module_t* module,
                               uint32_t function, uint32_t arg_count,
                               const char* text, char* buffer,
                               size_t capacity) {
  size_t used = 0;
  buffer[0] = '\0';
  for (uint32_t i = 0; i < arg_count && used < capacity; ++i) {
    weft_vm_value_decl_t decl;
    if (!weft_vm_module_function_value_decl(module, function,
                                            WEFT_VM_VALUE_ARGUMENT, i, &decl)) {
      snprintf(buffer, capacity, "%s", text);
      return;
    }
    int written = snprintf(buffer + used, capacity - used, "%s%s",
                           i ? ", " : "(", decl.name);
    if (written > 0) used += (size_t)written;
    const weft_vm_tensor_type_t* type = &decl.type;
    for (uint32_t d = 0; type->element_type && d < type->rank &&
                         used < capacity;
         ++d) {
      const weft_vm_dim_t* dim = &type->dims[d];
      char size[24];
      snprintf(size, sizeof(size), "%lld", (long long)dim->size);
      written = snprintf(buffer + used, capacity - used, "%s%s",
                         d ? "x" : ": ",
                         dim->kind == WEFT_VM_DIM_STATIC   ? size
                         : dim->kind == WEFT_VM_DIM_SYMBOL ? dim->symbol_name
                                                           : "?");
      if (written > 0) used += (size_t)written;
    }
    if (type->element_type && used < capacity) {
      written = snprintf(buffer + used, capacity - used, "%s%s",
                         type->rank ? " " : ": ",
                         weft_vm_element_type_name(type->element_type));
      if (written > 0) used += (size_t)written;
    }
  }
  if (used < capacity) snprintf(buffer + used, capacity - used, ")");
}

// Loads, links and checks the function and its inputs. Returns 2 for bad
// usage (the inputs do not fit the function), 1 for other failures, 0 ok.
static int weft_run_prepare(const weft_run_options_t* options, weft_run_t* run,
                            char* qualified, size_t qualified_capacity) {
  weft_allocator_t allocator = weft_allocator_system();
  weft_status_t status =
      weft_device_create(options->device, allocator, &run->device);
  // A device string no driver takes (an unknown driver, an option it
  // refuses) is bad usage, as a bad argument is.
  if (weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) ||
      weft_status_is(status, WEFT_STATUS_NOT_FOUND)) {
    report(status);
    return 2;
  }
  weft_hal_static_library_t library = {"kernels", NULL};
  if (weft_status_is_ok(status) && options->kernels) {
    status = open_kernels(options->kernels, &run->kernels_handle,
                          &library.query);
  }
  if (weft_status_is_ok(status)) {
    weft_hal_module_options_t hal_options = {
        .device = run->device,
        .static_library_count = options->kernels ? 1 : 0,
        .static_libraries = &library,
    };
    status = weft_hal_module_create(&hal_options, allocator, &run->hal);
  }
  if (weft_status_is_ok(status)) {
    status = weft_vm_module_load_file(options->module_path, allocator,
                                      &run->program);
  }
  if (weft_status_is_ok(status)) {
    weft_vm_module_t* modules[2] = {run->program, run->hal};
    status = weft_vm_context_create(modules, 2, allocator, &run->context);
  }
  if (weft_status_is_ok(status)) {
    if (strchr(options->function, '.')) {
      snprintf(qualified, qualified_capacity, "%s", options->function);
    } else {
      snprintf(qualified, qualified_capacity, "%s.%s",
               weft_vm_module_name(run->program), options->function);
    }
    weft_vm_module_t* module = NULL;
    uint32_t function_index = 0;
    status = weft_vm_context_lookup(run->context, qualified, &module,
                                    &function_index);
    char text[1024];
    weft_vm_parsed_signature_t parsed;
    if (weft_status_is_ok(status)) {
      weft_vm_module_function_signature_text(module, function_index, text,
                                             sizeof(text));
      status = weft_vm_signature_parse(text, strlen(text), &parsed);
    }
    if (weft_status_is_ok(status)) {
      run->function_module = module;
      run->function_index = function_index;
    }
    if (weft_status_is_ok(status) &&
        (uint32_t)options->input_count != parsed.arg_count) {
      char arguments[2048];
      describe_arguments(module, function_index, parsed.arg_count, text,
                         arguments, sizeof(arguments));
      fprintf(stderr, "weft-run: %s takes %u arguments %s, %d --input given\n",
              qualified, parsed.arg_count, arguments, options->input_count);
      return 2;
    }
    if (weft_status_is_ok(status) && parsed.ret_count > WEFT_RUN_MAX_VALUES) {
      status = WEFT_STATUS(INVALID_ARGUMENT, "%s returns %u values", qualified,
                           parsed.ret_count);
    }
    for (uint32_t i = 0; weft_status_is_ok(status) && i < parsed.arg_count;
         ++i) {
      // A buffer view, or any ref ("r").
      const char* name = parsed.canonical + parsed.ref_name_offset[i];
      const bool is_view = parsed.ref_name_length[i] == 0 ||
                           (parsed.ref_name_length[i] == 15 &&
                            strncmp(name, "hal.buffer_view", 15) == 0);
      status = weft_run_parse_input(options->inputs[i],
                                    (weft_vm_value_type_t)parsed.types[i],
                                    is_view, run->device, &run->args[i]);
      if (weft_status_is_ok(status)) {
        ++run->arg_count;
      } else if (!weft_status_is(status, WEFT_STATUS_RESOURCE_EXHAUSTED) &&
                 !weft_status_is(status, WEFT_STATUS_INTERNAL)) {
        // An input that cannot be read (missing, unreadable, truncated,
        // corrupt, unsupported) or does not fit is the user's: usage.
        report(status);
        return 2;
      }
    }
    if (weft_status_is_ok(status)) run->result_count = parsed.ret_count;
    // Outputs: at most one per result, and a file (@PATH) only for a
    // buffer view; both said before anything runs.
    if (weft_status_is_ok(status) &&
        (uint32_t)options->output_count > parsed.ret_count) {
      fprintf(stderr,
              "weft-run: %s returns %u result%s, %d --output given\n",
              qualified, parsed.ret_count, parsed.ret_count == 1 ? "" : "s",
              options->output_count);
      return 2;
    }
    for (int i = 0; weft_status_is_ok(status) && i < options->output_count;
         ++i) {
      const uint32_t value = parsed.arg_count + (uint32_t)i;
      if (options->outputs[i][0] == '@' &&
          parsed.types[value] != WEFT_VM_TYPE_REF) {
        fprintf(stderr,
                "weft-run: output %d '%s': result %d of %s is %s; only a "
                "buffer view result can be written as .npy (use - to "
                "print it)\n",
                i + 1, options->outputs[i], i, qualified,
                weft_vm_value_type_name(
                    (weft_vm_value_type_t)parsed.types[value]));
        return 2;
      }
    }
    // The inputs against the tensor types the function declares: a
    // mismatch is the user's, like a wrong count.
    if (weft_status_is_ok(status)) {
      status = weft_hal_check_arguments(module, function_index, run->args,
                                        run->arg_count, &run->check);
      if (!weft_status_is_ok(status)) {
        report(status);
        return 2;
      }
    }
  }
  if (!weft_status_is_ok(status)) {
    report(status);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_usage(stdout);
      return 0;
    }
  }
  weft_run_options_t options;
  if (!parse_options(argc, argv, &options)) {
    print_usage(stderr);
    return 2;
  }
  weft_run_t run;
  memset(&run, 0, sizeof(run));
  char qualified[512];
  int exit_code = weft_run_prepare(&options, &run, qualified,
                                   sizeof(qualified));
  if (exit_code == 0 && options.trace) {
    weft_status_t status = weft_trace_start(options.trace);
    if (!weft_status_is_ok(status)) {
      report(status);
      exit_code = 1;
    }
  }
  if (exit_code == 0) {
    weft_status_t status = weft_vm_invoke_sync(
        run.context, qualified, run.args, run.arg_count, run.results,
        run.result_count, 0, weft_allocator_system());
    // Results that break the function's declarations are the program's
    // failure: nothing is written.
    if (weft_status_is_ok(status)) {
      status = weft_hal_check_results(&run.check, run.results,
                                      run.result_count);
    }
    for (uint32_t i = 0; weft_status_is_ok(status) && i < run.result_count;
         ++i) {
      const char* output =
          (int)i < options.output_count ? options.outputs[i] : "-";
      status = output[0] == '@'
                   ? weft_run_write_npy(&run.results[i], run.device, output + 1)
                   : weft_run_print_value(&run.results[i], run.device, stdout);
    }
    if (options.trace) {
      weft_status_t trace_status = weft_trace_stop();
      if (weft_status_is_ok(status)) {
        status = trace_status;
      } else {
        weft_status_free(trace_status);
      }
    }
    if (!weft_status_is_ok(status)) {
      // A failed invocation wrote no results (they stay zeroed i32s).
      report(status);
      exit_code = 1;
    }
  }
  weft_run_release(&run);
  return exit_code;
}
