// weft decode example: a llama-architecture decoder on weft.
//
// A model is its weights in device buffers, one buffer per tensor kind
// (decode_model.h), loaded from a checkpoint with one parameter stream. A
// session decodes with it: a KV cache, the activations, and one reusable
// command buffer that is one token, recorded once:
//
//   embed; per layer: RMSNorm (and the quantized forms of its output),
//   qkv (projections, rotary, k and v written straight into the cache
//   row), attention, [quantize att,] x += Wo att, RMSNorm, ffn (SwiGLU),
//   [quantize h,] x += W2 h; RMSNorm, classifier (logits); argmax
//
// with a barrier after each dispatch (the bracketed steps only where the
// matrix after them is of a block type). What changes from token to token is
// only where things are, so it goes through the binding table: the token's
// id (tokens[position]), where the argmax writes the next one, the rotary
// row of the position, and per layer the cache row written and the cache
// prefix attended over (whose length tells attention the position). Each
// token is one execute that waits for the token before on the session's
// timeline semaphore and signals the next value: the host queues every
// step at once and never waits inside a token. The next token is chosen
// on the device: argmax (or SAMPLE, decode_session_set_sampling) writes it
// where the next step's embed reads it (prompt positions keep the
// prompt's tokens).
//
// The prompt's positions before its last run as a batch: the same layers
// over up to DECODE_BATCH_MAX positions at once as matrix-matrix products
// (decode_kernels.h's batch kernels), causal attention over the batch,
// every position's k and v written into the cache; one execute, recorded
// once, for each batch. No classifier: the next tokens inside the prompt
// are the prompt's. The last prompt position is a token's step, whose
// logits and token begin the generation.
#ifndef WEFT_EXAMPLES_DECODE_DECODE_H_
#define WEFT_EXAMPLES_DECODE_DECODE_H_

#include "decode_kernels.h"
#include "decode_model.h"
#include "decode_sampling.h"
#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

typedef struct decode_model_t decode_model_t;

typedef struct decode_load_options_t {
  // Passed to weft_parameter_stream_load (NULL: its defaults).
  const weft_parameter_stream_options_t* stream_options;
  // Keep Q4_0, Q8_0, Q4_K, Q6_K, F32 and F16 matrices as the file stores
  // them. By default a CPU device's are interleaved once loaded: the
  // block types by eight rows (decode_quant_x8.h; their layout then says
  // DECODE_DTYPE_Q4_0_X8, _Q8_0_X8, _Q4_K_X8 or _Q6_K_X8), F32 and F16 by
  // sixteen (decode_float_x16.h: DECODE_DTYPE_F32_X16, _F16_X16).
  bool keep_stored_form;
} decode_load_options_t;

// Reads |path|'s layout (decode_layout_read) and loads every tensor into
// buffers of |device|. |options| may be NULL.
weft_status_t decode_model_load(weft_device_t* device, const char* path,
                                const decode_load_options_t* options,
                                weft_allocator_t allocator,
                                decode_model_t** out_model);
void decode_model_release(decode_model_t* model);

const decode_layout_t* decode_model_layout(const decode_model_t* model);
// The buffer of |tensor| (the embedding's for a shared classifier).
weft_buffer_t* decode_model_buffer(const decode_model_t* model,
                                   decode_tensor_t tensor);
// Bytes of weights one token reads (every tensor once; the embedding
// only one row).
uint64_t decode_model_bytes_per_token(const decode_model_t* model);

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

typedef struct decode_session_t decode_session_t;

weft_status_t decode_session_create(decode_model_t* model,
                                    weft_allocator_t allocator,
                                    decode_session_t** out_session);
void decode_session_release(decode_session_t* session);

// Starts over at position 0 with |prompt| (1 to seq_len tokens, each below
// the vocabulary size). No step may be in flight.
weft_status_t decode_session_start(decode_session_t* session,
                                   const uint32_t* prompt,
                                   uint32_t prompt_length);

// How the next token is chosen from now on: argmax (temperature 0, the
// default) or SAMPLE (decode_sampling.h) with |sampling|'s temperature,
// top_k, top_p and seed. Waits for every queued step, then records the
// token's command buffer again. INVALID_ARGUMENT for a negative
// temperature or a top_p outside (0, 1].
weft_status_t decode_session_set_sampling(decode_session_t* session,
                                          const decode_sampling_t* sampling);

// Queues the next |count| steps (positions next .. next + count - 1, at
// most up to seq_len) and returns at once. Positions before the prompt's
// last go as batches of up to decode_session_set_batch's limit (one
// execute each; they write no logits); the rest, one execute a position.
weft_status_t decode_session_enqueue(decode_session_t* session,
                                     uint32_t count);

// The most prompt positions one execute takes from now on: 1 feeds the
// prompt token by token (as the generation goes), larger values are cut
// to DECODE_BATCH_MAX or the context, whichever is less (the default).
// INVALID_ARGUMENT for 0. Takes effect at the next enqueue.
weft_status_t decode_session_set_batch(decode_session_t* session,
                                       uint32_t limit);

// The positions queued so far (the next step's position).
uint32_t decode_session_queued(const decode_session_t* session);

// Waits until the step at |position| is done: its logits computed and its
// next token written.
weft_status_t decode_session_wait(decode_session_t* session,
                                  uint32_t position, weft_timeout_t timeout);

// The session's timeline and, in |out_value|, the value it reaches when
// the step at |position| is done (positions count from the last
// decode_session_start, queued or not yet): for timepoints of the
// caller's own, such as weft-decode's clock of when each step ended. The
// semaphore stays the session's; cancel what is registered on it before
// the session is released or started again.
weft_semaphore_t* decode_session_timeline(const decode_session_t* session,
                                          uint32_t position,
                                          uint64_t* out_value);

// The last done step's logits (vocab floats): call after waiting for the
// last queued step. A batch of the prompt writes none, but the one that
// ends the prompt writes its last position's (it runs the token's final
// norm, classifier and choice of the next token on that row); read them
// after the prompt's last position.
weft_status_t decode_session_read_logits(decode_session_t* session,
                                         float* out_logits);

// Tokens [first, first + count) of the sequence: the prompt, then the
// generated ones (token p + 1 is step p's argmax). Read after waiting.
weft_status_t decode_session_read_tokens(decode_session_t* session,
                                         uint32_t first, uint32_t count,
                                         uint32_t* out_tokens);

//===----------------------------------------------------------------------===//
// The token's dispatches, for other drivers of the same kernels
//===----------------------------------------------------------------------===//

// One dispatch of a token (a barrier follows each). Indirect references
// are resolved by the token's binding table.
typedef struct decode_step_t {
  decode_kernel_t kernel;
  uint32_t workgroups;
  uint32_t constant_count;
  uint32_t constants[5];
  uint32_t binding_count;
  weft_buffer_ref_t bindings[9];
} decode_step_t;

const decode_step_t* decode_session_steps(const decode_session_t* session,
                                          uint32_t* out_count);
// The binding table of the token at |position|: decode_session_slot_count
// entries into |out_bindings|.
uint32_t decode_session_slot_count(const decode_session_t* session);
void decode_session_bindings(const decode_session_t* session,
                             uint32_t position,
                             weft_buffer_binding_t* out_bindings);

// The batch's dispatches (a barrier after each but between the GEMMs of
// q, k and v), recorded for decode_session_batch_capacity positions;
// their binding table for positions [first, first + count) (count at
// most the capacity): decode_session_batch_slot_count entries into
// |out_bindings| (the last four: the final form's last row of x and the
// token slots of position first + count - 1, which a driver of these
// steps alone may leave unused). The cache rows before |first| must be
// filled.
const decode_step_t* decode_session_batch_steps(
    const decode_session_t* session, uint32_t* out_count);
uint32_t decode_session_batch_capacity(const decode_session_t* session);
uint32_t decode_session_batch_slot_count(const decode_session_t* session);
void decode_session_batch_bindings(const decode_session_t* session,
                                   uint32_t first, uint32_t count,
                                   weft_buffer_binding_t* out_bindings);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_EXAMPLES_DECODE_DECODE_H_
