// weft-decode: decoding a llama-architecture checkpoint on weft.
//
//   weft-decode --model=FILE [--steps=N] [--prompt=TEXT | --prompt-ids=1,2,3]
//               [--temperature=T] [--top-k=K] [--top-p=P] [--seed=N]
//               [--device=STRING | --workers=N] [--batch=N]
//               [--stop=ID,...] [--warmup=N] [--trace=FILE]
//
// Loads the checkpoint (llama2.c or GGUF; progress on a terminal), queues
// the prompt (its positions before the last in batches of up to --batch,
// decode.h; 1: token by token), then one step per generated token, and
// prints the generated token ids, the prompt's tokens per second (to the
// end of its last position's step, which chooses the first new token),
// then the generation's tokens per second and milliseconds per token
// after it (mean, nearest-rank p50 and p99, max). With --prompt the text is
// encoded with the GGUF's tokenizer (decode_tokenizer.h) and the
// generated text printed as each token is done. Greedy unless
// --temperature is above 0 (decode_sampling.h: on the device, one seed
// one sequence). A stop token (--stop, and with --prompt the tokenizer's
// end of sequence) ends the run: the steps then go in a few ahead of the
// one read (STEPS_AHEAD), not all at once, so that few run after it.
// Exit codes: 0 done, 1 an error, 2 bad usage (--device
// and --workers together among them, --prompt and --prompt-ids too, an
// integer flag out of its range (tools/cli), ids the model has no token
// for, a device string no driver takes).
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_number.h"
#include "decode.h"
#include "decode_latency.h"
#include "decode_tokenizer.h"
#include "weft/weft.h"

#define EXIT_ERROR 1
#define EXIT_USAGE 2
#define MAX_PROMPT 4096
#define MAX_STOPS 8
// The most --warmup runs.
#define MAX_WARMUP 100u
// Steps queued ahead of the one whose token is read when a stop token may
// end the run: enough that the device never waits for the host.
#define STEPS_AHEAD 8u

typedef struct options_t {
  const char* model;
  uint32_t steps;
  uint32_t prompt[MAX_PROMPT];
  uint32_t prompt_length;
  const char* prompt_text;  // --prompt: encoded once the model is known
  decode_sampling_t sampling;
  char device[256];
  uint32_t batch;  // the most prompt positions an execute takes
  uint32_t stops[MAX_STOPS];  // --stop, then the end of sequence
  uint32_t stop_count;
  uint32_t warmup;  // untimed runs of the whole prompt and steps first
  const char* trace;
} options_t;

static void print_usage(FILE* stream) {
  fprintf(stream,
          "Usage: weft-decode --model=FILE [--steps=N]\n"
          "                   [--prompt=TEXT | --prompt-ids=1,2,3]\n"
          "                   [--temperature=T] [--top-k=K] [--top-p=P] "
          "[--seed=N]\n"
          "                   [--device=STRING | --workers=N] "
          "[--batch=N]\n"
          "                   [--stop=ID,...] [--warmup=N] "
          "[--trace=FILE]\n"
          "\n"
          "Decodes with a llama2.c or GGUF checkpoint. --prompt TEXT (or\n"
          "--prompt=TEXT) encodes the text with the GGUF's tokenizer and\n"
          "prints the generated text as it comes; --prompt-ids gives token\n"
          "ids and prints the generated ids. Greedy by default; above\n"
          "temperature 0 tokens are drawn on the device from the softmax,\n"
          "restricted to the top K (0: all) and the nucleus P (1: all),\n"
          "the same for the same seed. The prompt runs in batches of up\n"
          "to --batch positions (1: token by token). Prints the prompt's\n"
          "tokens per second, then the generation's and its ms per token.\n"
          "A generated token among --stop (or, with --prompt, the end of\n"
          "sequence) ends the run. --warmup=N first runs the same prompt\n"
          "and steps N times untimed (0 to 100).\n"
          "Defaults: 64 steps, prompt 1, temperature 0, top-k 0, top-p 1,\n"
          "seed 0, batch 128, device local-task.\n"
          "weft-decode-gen writes checkpoints of random weights.\n");
}

#define TOOL "weft-decode"

// A finite number (no "inf", no "nan"), or false.
static bool parse_float(const char* text, float* out_value) {
  char* end = NULL;
  errno = 0;
  const float value = strtof(text, &end);
  if (errno || end == text || *end || !isfinite(value)) return false;
  *out_value = value;
  return true;
}

// Comma-separated ids into |out_ids| (at most |capacity|); false unless
// there is at least one, each is a decimal integer below 2^32 and no
// comma stands alone (none first, last or doubled).
static bool parse_ids(const char* text, uint32_t* out_ids, uint32_t capacity,
                      uint32_t* out_count) {
  *out_count = 0;
  for (;;) {
    char number[16];
    const size_t length = strcspn(text, ",");
    uint64_t id = 0;
    if (length == 0 || length >= sizeof(number) || *out_count == capacity) {
      return false;
    }
    memcpy(number, text, length);
    number[length] = '\0';
    if (!weft_cli_try_parse_u64(number, 0, UINT32_MAX, &id)) return false;
    out_ids[(*out_count)++] = (uint32_t)id;
    text += length;
    if (*text == '\0') return true;
    ++text;  // the comma, which a next id must follow
  }
}

// INVALID_ARGUMENT naming |flag| when one of its |count| |ids| is not a
// token of a vocabulary of |vocab_size|.
static weft_status_t check_ids(const char* flag, const uint32_t* ids,
                               uint32_t count, uint32_t vocab_size) {
  for (uint32_t i = 0; i < count; ++i) {
    if (ids[i] >= vocab_size) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "%s: id %u is not a token of the model (its "
                         "vocabulary has %u, ids 0 to %u)",
                         flag, ids[i], vocab_size, vocab_size - 1);
    }
  }
  return WEFT_OK;
}

// Remembers |arg| as the option that chose the device; false (and says
// why) when another one already did: --device=X and --workers=N both
// choose it, and the last must not silently win.
static bool choose_device(const char* arg, const char** chosen_by) {
  if (*chosen_by) {
    fprintf(stderr,
            "weft-decode: %s and %s both choose the device; give one "
            "(--workers=N is --device=local-task?workers=N)\n",
            *chosen_by, arg);
    return false;
  }
  *chosen_by = arg;
  return true;
}

// The same for the prompt: --prompt and --prompt-ids both give it.
static bool choose_prompt(const char* arg, const char** given_by) {
  if (*given_by) {
    fprintf(stderr,
            "weft-decode: %.20s and %.20s both give the prompt; give one\n",
            *given_by, arg);
    return false;
  }
  *given_by = arg;
  return true;
}

static int parse_options(int argc, char** argv, options_t* options) {
  memset(options, 0, sizeof(*options));
  options->steps = 64;
  options->prompt[0] = 1;
  options->prompt_length = 1;
  options->sampling.top_p = 1.0f;
  options->batch = DECODE_BATCH_MAX;
  snprintf(options->device, sizeof(options->device), "local-task");
  const char* device_chosen_by = NULL;
  const char* prompt_given_by = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    uint32_t workers = 0;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      print_usage(stdout);
      exit(0);
    } else if (strncmp(arg, "--model=", 8) == 0) {
      options->model = arg + 8;
    } else if (strncmp(arg, "--steps=", 8) == 0) {
      if (!weft_cli_parse_u32(TOOL, "--steps", arg + 8, 0, UINT32_MAX,
                              &options->steps)) {
        return EXIT_USAGE;
      }
    } else if (strcmp(arg, "--prompt") == 0 ||
               strncmp(arg, "--prompt=", 9) == 0) {
      if (!choose_prompt(arg, &prompt_given_by)) return EXIT_USAGE;
      if (arg[8] == '=') {
        options->prompt_text = arg + 9;
      } else if (i + 1 < argc) {
        options->prompt_text = argv[++i];
      } else {
        fprintf(stderr, "weft-decode: --prompt takes a text\n");
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--temperature=", 14) == 0 ||
               strncmp(arg, "--top-p=", 8) == 0) {
      const bool is_temperature = strncmp(arg, "--temperature=", 14) == 0;
      const char* value = strchr(arg, '=') + 1;
      float* out = is_temperature ? &options->sampling.temperature
                                  : &options->sampling.top_p;
      if (!parse_float(value, out) || *out < 0.0f ||
          (!is_temperature && (*out == 0.0f || *out > 1.0f))) {
        fprintf(stderr, "weft-decode: %s takes %s, not '%s'\n",
                is_temperature ? "--temperature" : "--top-p",
                is_temperature ? "a finite number of at least 0"
                               : "a number above 0 and at most 1",
                value);
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--batch=", 8) == 0) {
      if (!weft_cli_parse_u32(TOOL, "--batch", arg + 8, 1, DECODE_BATCH_MAX,
                              &options->batch)) {
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--top-k=", 8) == 0) {
      if (!weft_cli_parse_u32(TOOL, "--top-k", arg + 8, 0, UINT32_MAX,
                              &options->sampling.top_k)) {
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--seed=", 7) == 0) {
      if (!weft_cli_parse_u64(TOOL, "--seed", arg + 7, 0, UINT64_MAX,
                              &options->sampling.seed)) {
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--prompt-ids=", 13) == 0) {
      if (!choose_prompt(arg, &prompt_given_by)) return EXIT_USAGE;
      if (!parse_ids(arg + 13, options->prompt, MAX_PROMPT,
                     &options->prompt_length)) {
        fprintf(stderr,
                "weft-decode: --prompt-ids takes token ids separated by "
                "commas, not '%s'\n",
                arg + 13);
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--device=", 9) == 0) {
      if (!choose_device(arg, &device_chosen_by)) return EXIT_USAGE;
      snprintf(options->device, sizeof(options->device), "%s", arg + 9);
    } else if (strncmp(arg, "--workers=", 10) == 0 ||
               strncmp(arg, "--threads=", 10) == 0) {
      if (!choose_device(arg, &device_chosen_by)) return EXIT_USAGE;
      char flag[10];
      snprintf(flag, sizeof(flag), "%.9s", arg);
      if (!weft_cli_parse_u32(TOOL, flag, arg + 10, 1, UINT32_MAX,
                              &workers)) {
        return EXIT_USAGE;
      }
      snprintf(options->device, sizeof(options->device),
               "local-task?workers=%u", workers);
    } else if (strncmp(arg, "--stop=", 7) == 0) {
      if (!parse_ids(arg + 7, options->stops, MAX_STOPS - 1,
                     &options->stop_count)) {
        fprintf(stderr,
                "weft-decode: --stop takes 1 to %d token ids separated by "
                "commas, not '%s'\n",
                MAX_STOPS - 1, arg + 7);
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--warmup=", 9) == 0) {
      if (!weft_cli_parse_u32(TOOL, "--warmup", arg + 9, 0, MAX_WARMUP,
                              &options->warmup)) {
        return EXIT_USAGE;
      }
    } else if (strncmp(arg, "--trace=", 8) == 0) {
      options->trace = arg + 8;
    } else {
      fprintf(stderr, "weft-decode: unknown argument '%s'\n", arg);
      print_usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!options->model) {
    fprintf(stderr, "weft-decode: --model=FILE is required\n");
    print_usage(stderr);
    return EXIT_USAGE;
  }
  return 0;
}

static void print_progress(void* user_data,
                           const weft_parameter_progress_t* progress) {
  (void)user_data;
  fprintf(stderr, "\rloading: %" PRIu64 " / %" PRIu64 " MiB",
          progress->bytes_loaded >> 20, progress->bytes_total >> 20);
  if (progress->bytes_loaded == progress->bytes_total) fputc('\n', stderr);
}

// When a step ended, stamped by a timepoint on the session's timeline on
// the thread that signals the step done, with the device's end time where
// the signal carries one (weft_timepoint_t's |reached_at|). The host's own
// view is too late: it wakes for one step and finds the next few done too,
// which folded them into one long step and a few of 0 ms; so does a GPU
// driver's completion thread, which the device's clock corrects.
typedef struct step_clock_t {
  weft_timepoint_t timepoint;
  _Atomic weft_time_t end;  // 0 until stamped
} step_clock_t;

static void step_clock_fired(void* user_data, weft_timepoint_t* timepoint,
                             weft_status_t status) {
  weft_status_free(status);  // a failure reaches the host through its wait
  step_clock_t* clock = (step_clock_t*)user_data;
  // The device's own end time where it has one (cuda: its completion
  // thread may signal several steps at once, long after the first ended).
  const weft_time_t end =
      timepoint->reached_at ? timepoint->reached_at : weft_time_now();
  // Release: the clock's last touch here; once the host sees the stamp it
  // may free the clock (step_clocks_settle).
  atomic_store_explicit(&clock->end, end, memory_order_release);
}

static weft_time_t step_clock_end(step_clock_t* clock) {
  return atomic_load_explicit(&clock->end, memory_order_acquire);
}

// Registers |count| clocks, one per step from position 0; returns |count|.
static uint32_t step_clocks_register(decode_session_t* session,
                                     step_clock_t* clocks, uint32_t count) {
  for (uint32_t p = 0; p < count; ++p) {
    uint64_t value = 0;
    weft_semaphore_t* timeline = decode_session_timeline(session, p, &value);
    atomic_init(&clocks[p].end, 0);
    clocks[p].timepoint.fn = step_clock_fired;
    clocks[p].timepoint.user_data = &clocks[p];
    weft_semaphore_register_timepoint(timeline, value, &clocks[p].timepoint);
  }
  return count;
}

// Takes |count| clocks off the timeline so they can be freed: one that
// has not fired is cancelled (an error came before its step ended), one
// that has is waited for until its callback has stamped it.
static void step_clocks_settle(decode_session_t* session,
                               step_clock_t* clocks, uint32_t count) {
  for (uint32_t p = 0; p < count; ++p) {
    uint64_t value = 0;
    weft_semaphore_t* timeline = decode_session_timeline(session, p, &value);
    if (weft_semaphore_cancel_timepoint(timeline, &clocks[p].timepoint)) {
      continue;
    }
    while (step_clock_end(&clocks[p]) == 0) sched_yield();
  }
}

// --prompt: the text through the model's tokenizer into |options|'s
// prompt ids (BOS first where the vocabulary asks for it).
static weft_status_t encode_prompt(const decode_tokenizer_t* tokenizer,
                                   options_t* options) {
  const size_t length = strlen(options->prompt_text);
  const size_t capacity = decode_tokenizer_max_ids(length);
  uint32_t* ids = (uint32_t*)malloc(capacity * sizeof(uint32_t));
  if (!ids) return weft_status_from_code(WEFT_STATUS_RESOURCE_EXHAUSTED);
  size_t count = 0;
  weft_status_t status = decode_tokenizer_encode(
      tokenizer, options->prompt_text, length,
      decode_tokenizer_adds_bos(tokenizer), ids, capacity, &count);
  if (weft_status_is_ok(status) && (count == 0 || count > MAX_PROMPT)) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "the prompt is %zu tokens (1 to %d)", count,
                         MAX_PROMPT);
  }
  if (weft_status_is_ok(status)) {
    memcpy(options->prompt, ids, count * sizeof(uint32_t));
    options->prompt_length = (uint32_t)count;
  }
  free(ids);
  return status;
}

static bool is_stop(const options_t* options, uint32_t token) {
  for (uint32_t i = 0; i < options->stop_count; ++i) {
    if (options->stops[i] == token) return true;
  }
  return false;
}

// Follows the generation step by step: waits for step p, reads the token
// it chose, prints what of it makes whole characters (with |tokenizer|),
// and queues one more step while |*queued| is below |total|, until a
// stop token. |*out_stop| is then the stop token's position (0: none).
static weft_status_t follow_steps(decode_session_t* session,
                                  const decode_tokenizer_t* tokenizer,
                                  const options_t* options, uint32_t total,
                                  uint32_t* queued, uint32_t* out_stop) {
  *out_stop = 0;
  char* piece = NULL;
  decode_text_stream_t stream;
  if (tokenizer) {
    piece = (char*)malloc(decode_tokenizer_max_token_bytes(tokenizer));
    if (!piece) return weft_status_from_code(WEFT_STATUS_RESOURCE_EXHAUSTED);
    decode_text_stream_initialize(&stream, DECODE_TEXT_VALID_UTF8);
    fputs(options->prompt_text, stdout);
    fflush(stdout);
  }
  weft_status_t status = WEFT_OK;
  for (uint32_t p = options->prompt_length - 1;
       weft_status_is_ok(status) && p < *queued; ++p) {
    uint32_t token = 0;
    status = decode_session_wait(session, p, weft_timeout_infinite());
    if (weft_status_is_ok(status)) {
      status = decode_session_read_tokens(session, p + 1, 1, &token);
    }
    if (!weft_status_is_ok(status)) break;
    if (is_stop(options, token)) {
      *out_stop = p + 1;
      break;
    }
    if (*queued < total) {
      status = decode_session_enqueue(session, 1);
      if (weft_status_is_ok(status)) ++*queued;
    }
    if (tokenizer) {
      const size_t length =
          decode_text_stream_next(tokenizer, &stream, token, piece);
      fwrite(piece, 1, length, stdout);
      fflush(stdout);
    }
  }
  if (tokenizer) {
    const size_t rest = decode_text_stream_flush(&stream, piece);
    fwrite(piece, 1, rest, stdout);
    fputc('\n', stdout);
    free(piece);
  }
  return status;
}

// Prints "|what|: |count| tokens in |ns| (ms under a second, else s):
// R tokens/s", without a newline.
static void print_rate(const char* what, uint32_t count, int64_t ns) {
  const double seconds = (double)ns / 1e9;
  const bool in_ms = seconds < 1.0;
  printf("%s: %u tokens in %.3f %s: %.1f tokens/s", what, count,
         in_ms ? seconds * 1e3 : seconds, in_ms ? "ms" : "s",
         seconds > 0 ? count / seconds : 0.0);
}

static int fail(weft_status_t status) {
  fprintf(stderr, "weft-decode: ");
  weft_status_fprint(stderr, status);
  weft_status_free(status);
  return EXIT_ERROR;
}

int main(int argc, char** argv) {
  options_t options;
  int code = parse_options(argc, argv, &options);
  if (code) return code;
  weft_allocator_t allocator = weft_allocator_system();
  if (options.trace) {
    weft_status_t status = weft_trace_start(options.trace);
    if (!weft_status_is_ok(status)) return fail(status);
  }
  weft_device_t* device = NULL;
  weft_status_t status =
      weft_device_create(options.device, allocator, &device);
  if (!weft_status_is_ok(status)) {
    // A device string no driver takes (an unknown driver, an option it
    // refuses) is the user's, as a bad flag is.
    const bool usage = weft_status_is(status, WEFT_STATUS_INVALID_ARGUMENT) ||
                       weft_status_is(status, WEFT_STATUS_NOT_FOUND);
    const int exit_code = fail(status);
    return usage ? EXIT_USAGE : exit_code;
  }

  weft_parameter_stream_options_t stream_options;
  weft_parameter_stream_options_initialize(&stream_options);
  if (isatty(STDERR_FILENO)) stream_options.progress_fn = print_progress;
  decode_load_options_t load_options = {&stream_options, false};
  decode_model_t* model = NULL;
  status = decode_model_load(device, options.model, &load_options, allocator,
                             &model);
  // Ids given on the command line that the model has no token for are
  // bad usage, as a malformed id is (checked before the tokenizer adds
  // its end of sequence, whose id is the model's own).
  bool bad_usage = false;
  if (weft_status_is_ok(status)) {
    const uint32_t vocab_size = decode_model_layout(model)->config.vocab_size;
    status = check_ids("--stop", options.stops, options.stop_count,
                       vocab_size);
    if (weft_status_is_ok(status) && !options.prompt_text) {
      status = check_ids("--prompt-ids", options.prompt,
                         options.prompt_length, vocab_size);
    }
    bad_usage = !weft_status_is_ok(status);
  }
  decode_session_t* session = NULL;
  if (weft_status_is_ok(status)) {
    status = decode_session_create(model, allocator, &session);
  }
  decode_tokenizer_t* tokenizer = NULL;
  if (weft_status_is_ok(status) && options.prompt_text &&
      strcmp(decode_model_layout(model)->format, "gguf") != 0) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "--prompt: '%s' is a %s checkpoint, which carries no "
                         "tokenizer (a GGUF file does; or give --prompt-ids)",
                         options.model, decode_model_layout(model)->format);
  }
  if (weft_status_is_ok(status) && options.prompt_text) {
    status = decode_tokenizer_load(options.model, &tokenizer);
    if (weft_status_is_ok(status)) status = encode_prompt(tokenizer, &options);
    if (weft_status_is_ok(status) && decode_tokenizer_eos(tokenizer) >= 0) {
      options.stops[options.stop_count++] =
          (uint32_t)decode_tokenizer_eos(tokenizer);
    }
  }
  if (weft_status_is_ok(status)) {
    status = decode_session_set_batch(session, options.batch);
  }
  if (weft_status_is_ok(status) && options.sampling.temperature > 0.0f) {
    status = decode_session_set_sampling(session, &options.sampling);
  }
  const decode_config_t* config =
      model ? &decode_model_layout(model)->config : NULL;
  uint32_t total = 0;
  if (weft_status_is_ok(status)) {
    // In 64 bits: a prompt and 2^32 - 1 steps pass 32.
    const uint64_t wanted =
        (uint64_t)options.prompt_length - 1 + options.steps;
    if (wanted > config->seq_len) {
      status = WEFT_STATUS(OUT_OF_RANGE,
                           "%u prompt tokens and %u steps pass the model's "
                           "context of %u",
                           options.prompt_length, options.steps,
                           config->seq_len);
    } else {
      total = (uint32_t)wanted;
    }
  }
  // --warmup: the same prompt and steps, untimed, so the timed run finds
  // the caches, the batch's buffers and the pages already touched (as a
  // peer's benchmark warms up before it counts).
  for (uint32_t w = 0; weft_status_is_ok(status) && w < options.warmup; ++w) {
    status =
        decode_session_start(session, options.prompt, options.prompt_length);
    if (weft_status_is_ok(status) && total > 0) {
      status = decode_session_enqueue(session, total);
    }
    if (weft_status_is_ok(status) && total > 0) {
      status = decode_session_wait(session, total - 1, weft_timeout_infinite());
    }
    if (!weft_status_is_ok(status)) {
      status = weft_status_annotate(status, "warm-up run %u", w + 1);
    }
  }
  if (weft_status_is_ok(status)) {
    status = decode_session_start(session, options.prompt,
                                  options.prompt_length);
  }
  step_clock_t* clocks = NULL;
  int64_t* durations = NULL;
  if (weft_status_is_ok(status) && total > 0) {
    clocks = (step_clock_t*)calloc(total, sizeof(step_clock_t));
    durations = (int64_t*)calloc(total, sizeof(int64_t));
    if (!clocks || !durations) {
      status = weft_status_from_code(WEFT_STATUS_RESOURCE_EXHAUSTED);
    }
  }
  // Every step with a clock; queued at once, then one wait for the last,
  // or with stop tokens a few ahead of the one read (follow_steps).
  uint32_t clocked = 0;
  if (weft_status_is_ok(status)) {
    clocked = step_clocks_register(session, clocks, total);
  }
  if (weft_status_is_ok(status)) {
    char dtypes[64];
    decode_layout_describe_dtypes(decode_model_layout(model), dtypes,
                                  sizeof(dtypes));
    printf("model: %s (%s, %s weights): dim %u, %u layers, %u heads (%u kv), "
           "vocab %u\n",
           options.model, decode_model_layout(model)->format, dtypes,
           config->dim, config->n_layers, config->n_heads, config->n_kv_heads,
           config->vocab_size);
    printf("device: %s\n", options.device);
    fflush(stdout);
  }
  const weft_time_t start = weft_time_now();
  const bool follow = tokenizer || options.stop_count > 0;
  uint32_t queued = total;
  if (follow && options.prompt_length + STEPS_AHEAD < total) {
    queued = options.prompt_length + STEPS_AHEAD;
  }
  uint32_t stop = 0;
  if (weft_status_is_ok(status)) {
    status = decode_session_enqueue(session, queued);
  }
  if (weft_status_is_ok(status) && follow) {
    status = follow_steps(session, tokenizer, &options, total, &queued, &stop);
  }
  if (weft_status_is_ok(status) && queued > 0) {
    status = decode_session_wait(session, queued - 1, weft_timeout_infinite());
  }
  const weft_time_t end = weft_time_now();
  // The clocks of steps never queued are cancelled with the rest.
  step_clocks_settle(session, clocks, clocked);
  // From here on, the steps that ran.
  total = queued;
  // Ends -> durations.
  for (uint32_t p = 0; weft_status_is_ok(status) && p < total; ++p) {
    durations[p] = step_clock_end(&clocks[p]) -
                   (p > 0 ? step_clock_end(&clocks[p - 1]) : start);
  }
  uint32_t* tokens = NULL;
  if (weft_status_is_ok(status)) {
    tokens = (uint32_t*)calloc(total + 1, sizeof(uint32_t));
    if (!tokens) status = weft_status_from_code(WEFT_STATUS_RESOURCE_EXHAUSTED);
  }
  if (weft_status_is_ok(status)) {
    status = decode_session_read_tokens(session, 0, total + 1, tokens);
  }
  if (weft_status_is_ok(status)) {
    if (!tokenizer) {
      const uint32_t last = stop ? stop : total;
      printf("generated:");
      for (uint32_t i = options.prompt_length; i <= last; ++i) {
        printf(" %u", tokens[i]);
      }
      printf("\n");
    }
    if (stop) {
      printf("stopped: token %u at position %u (%u steps ran after it)\n",
             tokens[stop], stop, total - stop);
    }
    // The prompt: to the end of its last position's step. The
    // generation: the steps after it, each one token.
    // (--steps=0 runs the positions before the prompt's last only.)
    const uint32_t prompt_steps =
        options.steps > 0 ? options.prompt_length : total;
    const weft_time_t prompt_done =
        prompt_steps > 0 ? step_clock_end(&clocks[prompt_steps - 1]) : start;
    print_rate("prompt", prompt_steps, prompt_done - start);
    printf("\n");
    // The generation: every token the steps chose, the first of them by
    // the prompt's last step, the rest by one step each after it, which
    // the rate and the latencies are over.
    const uint32_t after = total - prompt_steps;
    const uint32_t generated = options.steps > 0 ? after + 1 : 0;
    decode_latency_t latency;
    decode_latency_summarize(durations + prompt_steps, after, &latency);
    const double seconds = (double)(end - prompt_done) / 1e9;
    const bool in_ms = seconds < 1.0;
    printf("generation: %u tokens, the first with the prompt, then %u in "
           "%.3f %s: %.1f tokens/s",
           generated, after, in_ms ? seconds * 1e3 : seconds,
           in_ms ? "ms" : "s", seconds > 0 ? after / seconds : 0.0);
    printf("; ms per token: mean %.3f, p50 %.3f, p99 %.3f, max %.3f\n",
           latency.mean, latency.p50, latency.p99, latency.max);
  }
  free(tokens);
  decode_tokenizer_free(tokenizer);
  free(durations);
  free(clocks);
  decode_session_release(session);
  decode_model_release(model);
  weft_device_release(device);
  if (options.trace) {
    weft_status_t trace_status = weft_trace_stop();
    if (weft_status_is_ok(status)) status = trace_status;
    else weft_status_free(trace_status);
  }
  if (weft_status_is_ok(status)) return 0;
  const int exit_code = fail(status);
  return bad_usage ? EXIT_USAGE : exit_code;
}
