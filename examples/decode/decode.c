// weft decode example: the decoder (see decode.h).
#include "decode.h"

#include "decode_cuda.h"
#include "decode_quant_dot.h"
#include "decode_float_x16.h"
#include "decode_quant_x8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

struct decode_model_t {
  weft_allocator_t allocator;
  weft_device_t* device;
  decode_layout_t layout;
  // One per kind; a shared classifier is the embedding's (retained twice).
  weft_buffer_t* buffers[DECODE_TENSOR_COUNT];
  // Where each layer's tensor starts in its kind's buffer (layers of one
  // kind may differ in type, so in size); [n_layers] is the buffer's size.
  uint64_t layer_offsets[DECODE_TENSOR_COUNT][DECODE_MAX_LAYERS + 1];
};

static uint32_t decode_tensor_layers(const decode_config_t* config,
                                     decode_tensor_t tensor) {
  return decode_tensor_is_per_layer(tensor) ? config->n_layers : 1;
}

// Bytes of |layer|'s |tensor| as stored.
static uint64_t decode_layer_bytes(const decode_model_t* model,
                                   decode_tensor_t tensor, uint32_t layer) {
  return model->layer_offsets[tensor][layer + 1] -
         model->layer_offsets[tensor][layer];
}

static void decode_model_place_layers(decode_model_t* model) {
  const decode_layout_t* layout = &model->layout;
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    const uint64_t elements = decode_tensor_elements(&layout->config, tensor);
    uint64_t offset = 0;
    for (uint32_t l = 0; l < decode_tensor_layers(&layout->config, tensor);
         ++l) {
      model->layer_offsets[t][l] = offset;
      offset += decode_dtype_bytes(layout->tensors[t].dtypes[l], elements);
      model->layer_offsets[t][l + 1] = offset;
    }
  }
}

// The memory of a buffer of |device| the host maps (|mapped|) or not. On
// the CPU drivers every buffer is the default (host-visible: the
// benchmarks' baselines run the kernels over the session's buffers); on a
// cuda device the default is pinned host memory the GPU reads across the
// bus, so what only kernels touch (the weights, the cache, the
// activations) is device memory there, and what the host maps (the
// tokens, the logits, the rotary table) stays host-visible.
static weft_buffer_params_t decode_buffer_params(const weft_device_t* device,
                                                 bool mapped) {
  weft_buffer_params_t params = {0};
  if (decode_cuda_is_device(device)) {
    params.type = mapped ? WEFT_MEMORY_TYPE_HOST_VISIBLE |
                               WEFT_MEMORY_TYPE_HOST_COHERENT
                         : WEFT_MEMORY_TYPE_DEVICE_LOCAL;
  }
  return params;
}

// A cuda device runs f32 and f16 weights only (decode_cuda.h): the first
// tensor of |layout| of another type, named with its layer and type, is
// UNIMPLEMENTED there, before any weight is read.
static weft_status_t decode_check_device_dtypes(
    const weft_device_t* device, const decode_layout_t* layout) {
  if (!decode_cuda_is_device(device)) return WEFT_OK;
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (!layout->tensors[t].present) continue;
    for (uint32_t l = 0; l < decode_tensor_layers(&layout->config, tensor);
         ++l) {
      const decode_dtype_t dtype = layout->tensors[t].dtypes[l];
      if (dtype == DECODE_DTYPE_F32 || dtype == DECODE_DTYPE_F16) continue;
      char where[32] = "";
      if (decode_tensor_is_per_layer(tensor)) {
        snprintf(where, sizeof(where), " of layer %u", l);
      }
      return WEFT_STATUS(UNIMPLEMENTED,
                         "decode on cuda: tensor %s%s is %s; the CUDA "
                         "kernels take f32 and f16 weights only (block "
                         "types run on the CPU drivers)",
                         decode_tensor_name(tensor), where,
                         decode_dtype_name(dtype));
    }
  }
  return WEFT_OK;
}

// Rewrites |model|'s Q4_0, Q8_0, Q4_K and Q6_K matrices into rows
// interleaved by eight (decode_quant_x8.h) and its F32 and F16 ones into
// rows interleaved by sixteen (decode_float_x16.h), the CPU products'
// faster forms, in place, on the host, and marks their layout so the
// kernels read them so. Left as stored: the token embedding (EMBED reads
// one row of it; so is a classifier that shares it), matrices whose rows
// are not a multiple of the form's group, everything on a cuda device
// (its kernels take plain f32 and f16), and all of it when |options| ask
// for the stored form.
static weft_status_t decode_model_interleave(
    decode_model_t* model, const decode_load_options_t* options) {
  if (decode_cuda_is_device(model->device) ||
      (options && options->keep_stored_form)) {
    return WEFT_OK;
  }
  decode_layout_t* layout = &model->layout;
  const decode_config_t* config = &layout->config;
  static const decode_tensor_t kMatrices[] = {
      DECODE_TENSOR_WQ, DECODE_TENSOR_WK, DECODE_TENSOR_WV,
      DECODE_TENSOR_WO, DECODE_TENSOR_W1, DECODE_TENSOR_W2,
      DECODE_TENSOR_W3, DECODE_TENSOR_CLASSIFIER};
  void* scratch = NULL;
  weft_status_t status = WEFT_OK;
  const size_t matrix_count = sizeof(kMatrices) / sizeof(kMatrices[0]);
  for (size_t i = 0; weft_status_is_ok(status) && i < matrix_count; ++i) {
    const decode_tensor_t tensor = kMatrices[i];
    if (!layout->tensors[tensor].present ||
        (tensor == DECODE_TENSOR_CLASSIFIER && config->shared_classifier)) {
      continue;
    }
    const uint32_t cols =
        tensor == DECODE_TENSOR_W2 ? config->hidden_dim : config->dim;
    const uint64_t rows = decode_tensor_elements(config, tensor) / cols;
    if (rows > UINT32_MAX) continue;
    for (uint32_t l = 0;
         weft_status_is_ok(status) && l < decode_tensor_layers(config, tensor);
         ++l) {
      const uint32_t stored = layout->tensors[tensor].dtypes[l];
      const uint32_t x16 = decode_x16_form(stored);
      const uint32_t form = x16 ? x16 : decode_x8_form(stored);
      const uint32_t group = x16 ? DECODE_X16_ROWS : DECODE_X8_ROWS;
      if (form == 0 || rows % group != 0) continue;
      if (!scratch) {
        // Big enough for a group of the widest matrix (W2's hidden) of the
        // widest type: 16 rows of f32.
        const uint32_t widest =
            config->hidden_dim > config->dim ? config->hidden_dim : config->dim;
        status = weft_allocator_malloc(
            model->allocator,
            DECODE_X16_ROWS * decode_dtype_bytes(DECODE_DTYPE_F32, widest),
            &scratch);
        if (!weft_status_is_ok(status)) break;
      }
      weft_buffer_mapping_t mapping;
      status = weft_buffer_map_range(
          model->buffers[tensor], WEFT_MAPPING_MODE_SCOPED,
          WEFT_MEMORY_ACCESS_READ | WEFT_MEMORY_ACCESS_WRITE,
          model->layer_offsets[tensor][l], decode_layer_bytes(model, tensor, l),
          &mapping);
      if (!weft_status_is_ok(status)) break;
      if (x16) {
        decode_x16_pack(form, mapping.contents, (uint32_t)rows, cols, scratch);
      } else {
        decode_x8_pack(form, mapping.contents, (uint32_t)rows, cols, scratch);
      }
      status = weft_buffer_mapping_flush(&mapping, 0, mapping.byte_length);
      weft_buffer_unmap_range(&mapping);
      layout->tensors[tensor].dtypes[l] = (decode_dtype_t)form;
    }
  }
  weft_allocator_free(model->allocator, scratch);
  return weft_status_is_ok(status)
             ? WEFT_OK
             : weft_status_annotate(status, "interleaving the matrices' rows");
}

weft_status_t decode_model_load(weft_device_t* device, const char* path,
                                const decode_load_options_t* options,
                                weft_allocator_t allocator,
                                decode_model_t** out_model) {
  *out_model = NULL;
  decode_model_t* model = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*model), (void**)&model);
  if (!weft_status_is_ok(status)) return status;
  memset(model, 0, sizeof(*model));
  model->allocator = allocator;
  model->device = device;
  weft_device_retain(device);
  status = decode_layout_read(path, &model->layout);
  const decode_layout_t* layout = &model->layout;
  const decode_config_t* config = &layout->config;
  if (weft_status_is_ok(status)) {
    status = decode_check_device_dtypes(device, layout);
  }
  if (weft_status_is_ok(status)) decode_model_place_layers(model);

  // One buffer per kind, and one span per (kind, layer).
  uint32_t span_count = 0;
  for (int t = 0; weft_status_is_ok(status) && t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (!layout->tensors[t].present) continue;
    const uint32_t layers = decode_tensor_layers(config, tensor);
    const weft_buffer_params_t params = decode_buffer_params(device, false);
    status = weft_device_allocate_buffer(device, params,
                                         model->layer_offsets[t][layers],
                                         &model->buffers[t]);
    span_count += layers;
  }
  weft_parameter_span_t* spans = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, span_count, sizeof(*spans),
                                         (void**)&spans);
  }
  weft_file_t* file = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_file_open(path, WEFT_FILE_ACCESS_READ, 0, allocator, &file);
  }
  if (weft_status_is_ok(status)) {
    uint32_t next = 0;
    for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
      const decode_tensor_t tensor = (decode_tensor_t)t;
      if (!layout->tensors[t].present) continue;
      for (uint32_t layer = 0; layer < decode_tensor_layers(config, tensor);
           ++layer) {
        spans[next++] = (weft_parameter_span_t){
            file, layout->tensors[t].offsets[layer], model->buffers[t],
            model->layer_offsets[t][layer],
            decode_layer_bytes(model, tensor, layer)};
      }
    }
    status = weft_parameter_stream_load(
        device, spans, span_count, options ? options->stream_options : NULL,
        allocator);
  }
  weft_file_release(file);
  weft_allocator_free(allocator, spans);
  if (weft_status_is_ok(status)) {
    status = decode_model_interleave(model, options);
  }
  if (weft_status_is_ok(status) && config->shared_classifier) {
    model->buffers[DECODE_TENSOR_CLASSIFIER] =
        model->buffers[DECODE_TENSOR_TOKEN_EMBEDDING];
    weft_buffer_retain(model->buffers[DECODE_TENSOR_CLASSIFIER]);
  }
  if (!weft_status_is_ok(status)) {
    decode_model_release(model);
    return weft_status_annotate(status, "loading model '%s'", path);
  }
  *out_model = model;
  return WEFT_OK;
}

void decode_model_release(decode_model_t* model) {
  if (!model) return;
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    weft_buffer_release(model->buffers[t]);
  }
  weft_device_release(model->device);
  weft_allocator_free(model->allocator, model);
}

const decode_layout_t* decode_model_layout(const decode_model_t* model) {
  return &model->layout;
}

weft_buffer_t* decode_model_buffer(const decode_model_t* model,
                                   decode_tensor_t tensor) {
  return model->buffers[tensor];
}

uint64_t decode_model_bytes_per_token(const decode_model_t* model) {
  const decode_layout_t* layout = &model->layout;
  const decode_config_t* config = &layout->config;
  uint64_t bytes = 0;
  for (int t = 0; t < DECODE_TENSOR_COUNT; ++t) {
    const decode_tensor_t tensor = (decode_tensor_t)t;
    if (tensor == DECODE_TENSOR_TOKEN_EMBEDDING) {
      bytes += decode_dtype_bytes(layout->tensors[t].dtypes[0], config->dim);
    } else if (tensor == DECODE_TENSOR_CLASSIFIER) {
      const decode_tensor_t source = config->shared_classifier
                                         ? DECODE_TENSOR_TOKEN_EMBEDDING
                                         : DECODE_TENSOR_CLASSIFIER;
      bytes += decode_layer_bytes(model, source, 0);
    } else {
      bytes += model->layer_offsets[t][decode_tensor_layers(config, tensor)];
    }
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

// Binding-table slots: three per token, four per layer.
enum {
  DECODE_SLOT_TOKEN_IN = 0,   // tokens[position]
  DECODE_SLOT_TOKEN_OUT = 1,  // tokens[position + 1], or the discard word
  DECODE_SLOT_ROPE = 2,       // the rotary row of the position
  DECODE_SLOT_LAYERS = 3,     // then per layer: k row, v row, k and v prefix
};
#define DECODE_SLOT_K_ROW(l) (DECODE_SLOT_LAYERS + 4 * (l))
#define DECODE_SLOT_V_ROW(l) (DECODE_SLOT_LAYERS + 4 * (l) + 1)
#define DECODE_SLOT_K_PREFIX(l) (DECODE_SLOT_LAYERS + 4 * (l) + 2)
#define DECODE_SLOT_V_PREFIX(l) (DECODE_SLOT_LAYERS + 4 * (l) + 3)
// After the layers': the tokens so far (SAMPLE's history, whose length
// tells it the position).
#define DECODE_SLOT_HISTORY(n_layers) (DECODE_SLOT_LAYERS + 4 * (n_layers))

// The batch's binding-table slots: two, then four per layer.
enum {
  DECODE_BATCH_SLOT_TOKENS = 0,  // tokens[first, first + B)
  DECODE_BATCH_SLOT_ROPE = 1,    // the rotary rows of those positions
  DECODE_BATCH_SLOT_LAYERS = 2,  // per layer: k rows, v rows, k and v prefix
};
#define DECODE_BATCH_SLOT_K_ROWS(l) (DECODE_BATCH_SLOT_LAYERS + 4 * (l))
#define DECODE_BATCH_SLOT_V_ROWS(l) (DECODE_BATCH_SLOT_LAYERS + 4 * (l) + 1)
#define DECODE_BATCH_SLOT_K_PREFIX(l) (DECODE_BATCH_SLOT_LAYERS + 4 * (l) + 2)
#define DECODE_BATCH_SLOT_V_PREFIX(l) (DECODE_BATCH_SLOT_LAYERS + 4 * (l) + 3)
#define DECODE_BATCH_SLOT_COUNT(n_layers) (DECODE_BATCH_SLOT_LAYERS + 4 * (n_layers))
// Then four for a batch that ends the prompt (the final form,
// decode_record_batch): its last row of x, and the token step's slots at
// that position (its token, the next one out, the history).
#define DECODE_BATCH_SLOT_LAST_X(n_layers) DECODE_BATCH_SLOT_COUNT(n_layers)
#define DECODE_BATCH_SLOT_TOKEN_IN(n_layers) \
  (DECODE_BATCH_SLOT_COUNT(n_layers) + 1)
#define DECODE_BATCH_SLOT_TOKEN_OUT(n_layers) \
  (DECODE_BATCH_SLOT_COUNT(n_layers) + 2)
#define DECODE_BATCH_SLOT_HISTORY(n_layers) \
  (DECODE_BATCH_SLOT_COUNT(n_layers) + 3)

enum {
  DECODE_BUFFER_X = 0,   // the residual stream [dim]
  DECODE_BUFFER_Q,       // [dim]
  DECODE_BUFFER_ATT,     // attention output [dim]
  DECODE_BUFFER_H,       // feed-forward hidden [hidden]
  DECODE_BUFFER_LOGITS,  // [vocab]
  DECODE_BUFFER_K_CACHE, // [layers][seq_len][kv_dim]
  DECODE_BUFFER_V_CACHE,
  DECODE_BUFFER_TOKENS,  // u32 [seq_len + 1]
  DECODE_BUFFER_DISCARD, // u32: argmax outputs of prompt positions
  DECODE_BUFFER_ROPE,    // [seq_len][head_size / 2][cos, sin]
  DECODE_BUFFER_SAMPLE_SCRATCH,  // SAMPLE's candidates [vocab][8 bytes]
  DECODE_BUFFER_XN,  // the normalised residual stream [dim]
  DECODE_BUFFER_XQ,  // quantized forms of XN, ATT or H
  // The batch's, [capacity][width] (decode_kernels.h):
  DECODE_BUFFER_BATCH_X,    // the residual stream [dim]
  DECODE_BUFFER_BATCH_XN,   // normalised [dim]
  DECODE_BUFFER_BATCH_XQ,   // quantized forms of XN, ATT or H
  DECODE_BUFFER_BATCH_Q,    // [dim]
  DECODE_BUFFER_BATCH_ATT,  // [dim]
  DECODE_BUFFER_BATCH_H,    // [hidden]
  DECODE_BUFFER_COUNT,
};

struct decode_session_t {
  weft_allocator_t allocator;
  decode_model_t* model;
  weft_device_t* device;
  weft_executable_t* kernels;
  weft_executable_t* sampling_kernels;  // decode_sampling.h, once sampling
  decode_sampling_t sampling;           // temperature 0: argmax
  weft_buffer_t* buffers[DECODE_BUFFER_COUNT];
  decode_step_t* steps;
  uint32_t step_count;
  // steps[tail_step ..]: the final norm, the classifier and the next
  // token's choice, which a batch that ends the prompt runs too.
  uint32_t tail_step;
  uint32_t slot_count;
  weft_buffer_binding_t* table;  // scratch for one token's table
  weft_command_buffer_t* command_buffer;
  // The prompt's batch: steps recorded once for |batch_capacity|
  // positions, of which an execute runs up to |batch_limit|.
  decode_step_t* batch_steps;
  uint32_t batch_step_count;
  uint32_t batch_slot_count;
  uint32_t batch_capacity;
  uint32_t batch_limit;
  weft_buffer_binding_t* batch_table;
  weft_command_buffer_t* batch_command_buffer;
  // The same, then the token's tail on the batch's last row: for the
  // batch that ends the prompt, so its last position is not a token step.
  weft_command_buffer_t* batch_final_command_buffer;
  weft_semaphore_t* timeline;
  uint64_t base;  // the timeline's value at position 0
  // On a cuda device the logits stay in device memory (the classifier
  // writes them, argmax reads them): decode_session_read_logits copies
  // them into |logits_host| (host-visible) behind the last queued step,
  // |reads| counting the copies on its own semaphore. NULL elsewhere.
  weft_buffer_t* logits_host;
  weft_semaphore_t* reads;
  uint64_t read_count;
  uint32_t prompt_length;
  uint32_t queued;
};

static uint32_t decode_float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Appends a step to the token's steps, or with |batch| to the batch's;
// |refs| are its bindings in kernel order.
static void decode_add_step(decode_session_t* session, bool batch,
                            decode_kernel_t kernel, uint32_t workgroups,
                            uint32_t constant_count, const uint32_t* constants,
                            uint32_t binding_count,
                            const weft_buffer_ref_t* refs) {
  decode_step_t* step = batch
                            ? &session->batch_steps[session->batch_step_count++]
                            : &session->steps[session->step_count++];
  memset(step, 0, sizeof(*step));
  step->kernel = kernel;
  step->workgroups = workgroups;
  step->constant_count = constant_count;
  memcpy(step->constants, constants, constant_count * sizeof(uint32_t));
  step->binding_count = binding_count;
  memcpy(step->bindings, refs, binding_count * sizeof(weft_buffer_ref_t));
}

// The plans' shorthands for a buffer, a layer's slice of a weight, a
// weight's type and a slot, over their locals |w|, |model| and |layout|
// (undefined after decode_plan_batch).
#define REF(buffer) weft_make_buffer_ref((buffer), 0, WEFT_WHOLE_BUFFER)
#define LAYER(tensor, l)                                       \
  weft_make_buffer_ref(w[tensor], model->layer_offsets[tensor][l], \
                       decode_layer_bytes(model, tensor, l))
#define DTYPE(tensor, l) ((uint32_t)layout->tensors[tensor].dtypes[l])
#define SLOT(slot) weft_make_indirect_buffer_ref((slot), 0, WEFT_WHOLE_BUFFER)

// The quantized form a matrix of |dtype| reads its input in (none for f32
// and f16).
static uint32_t decode_batch_form(uint32_t dtype) {
  if (!decode_dtype_is_quantized(dtype)) return 0;
  return decode_quant_uses_q8_k((decode_dtype_t)dtype) ? DECODE_BATCH_FORM_Q8_K
                                                       : DECODE_BATCH_FORM_Q8_0;
}

// What every step of a plan records against: the session, whether the
// steps are the batch's or the token's, the positions' ids (every batch
// kernel's binding 0: the token's own for the token, which runs the
// batch's RMSNorm and quantization as a batch of one), and the positions'
// capacity in workgroups and in GEMM column tiles.
typedef struct decode_batch_plan_t {
  decode_session_t* session;
  bool batch;
  weft_buffer_ref_t tokens;
  uint32_t capacity;
  uint32_t column_tiles;
} decode_batch_plan_t;

// Records RMSNorm of the batch's |x| by |weight| into |xn|, quantized into
// |xq| in the |forms| its matrices read.
static void decode_batch_add_rmsnorm(const decode_batch_plan_t* plan,
                                     uint32_t dim, uint32_t eps,
                                     uint32_t forms, weft_buffer_ref_t x,
                                     weft_buffer_ref_t weight,
                                     weft_buffer_ref_t xn,
                                     weft_buffer_ref_t xq) {
  const uint32_t constants[] = {dim, eps, forms};
  const weft_buffer_ref_t refs[] = {plan->tokens, x, weight, xn, xq};
  decode_add_step(plan->session, plan->batch, DECODE_KERNEL_BATCH_RMSNORM,
                  plan->capacity, 3, constants, 5, refs);
}

// Records the quantization of the batch's |n|-wide |x| into |xq| in
// |forms|; nothing where there are none (f32 and f16 matrices read |x|).
static void decode_batch_add_quantize(const decode_batch_plan_t* plan,
                                      uint32_t n, uint32_t forms,
                                      weft_buffer_ref_t x,
                                      weft_buffer_ref_t xq) {
  if (forms == 0) return;
  const uint32_t constants[] = {n, forms};
  const weft_buffer_ref_t refs[] = {plan->tokens, x, xq};
  decode_add_step(plan->session, plan->batch, DECODE_KERNEL_BATCH_QUANTIZE,
                  plan->capacity, 2, constants, 3, refs);
}

// Records the token's |out| += W |x| for the |rows| by |cols| matrix |w|
// of |dtype|, quantizing |x| into |xq| first where |dtype| reads it so.
static void decode_add_matvec_add(const decode_batch_plan_t* plan,
                                  uint32_t rows, uint32_t cols, uint32_t dtype,
                                  weft_buffer_ref_t x, weft_buffer_ref_t xq,
                                  weft_buffer_ref_t w, weft_buffer_ref_t out) {
  decode_batch_add_quantize(plan, cols, decode_batch_form(dtype), x, xq);
  const uint32_t constants[] = {rows, cols, dtype};
  const weft_buffer_ref_t refs[] = {x, xq, w, out};
  decode_add_step(plan->session, false, DECODE_KERNEL_MATVEC_ADD,
                  rows / DECODE_ROWS_PER_WORKGROUP, 3, constants, 4, refs);
}

// Fills in the token's steps (decode.h's order). Each product's input is
// normalised and quantized once, in a step of its own, for all of the
// product's workgroups (which would otherwise each redo it).
static void decode_plan(decode_session_t* session) {
  const decode_model_t* model = session->model;
  const decode_layout_t* layout = &model->layout;
  const decode_config_t* c = &layout->config;
  const uint32_t dim = c->dim;
  const uint32_t hidden = c->hidden_dim;
  const uint32_t kv_dim = decode_kv_dim(c);
  const uint32_t head_size = decode_head_size(c);
  const uint32_t eps = decode_float_bits(c->norm_eps);
  weft_buffer_t* const* w = model->buffers;
  weft_buffer_t* const* b = session->buffers;
  const uint32_t embedding_dtype =
      layout->tensors[DECODE_TENSOR_TOKEN_EMBEDDING].dtypes[0];
  const uint32_t classifier_dtype =
      c->shared_classifier
          ? embedding_dtype
          : layout->tensors[DECODE_TENSOR_CLASSIFIER].dtypes[0];
  const decode_batch_plan_t plan = {session, false, SLOT(DECODE_SLOT_TOKEN_IN),
                                    1, 1};
  const weft_buffer_ref_t x = REF(b[DECODE_BUFFER_X]);
  const weft_buffer_ref_t xn = REF(b[DECODE_BUFFER_XN]);
  const weft_buffer_ref_t xq = REF(b[DECODE_BUFFER_XQ]);
  {
    const uint32_t constants[] = {dim, c->vocab_size, embedding_dtype};
    const weft_buffer_ref_t refs[] = {REF(w[DECODE_TENSOR_TOKEN_EMBEDDING]),
                                      SLOT(DECODE_SLOT_TOKEN_IN), x};
    decode_add_step(session, false, DECODE_KERNEL_EMBED, 1, 3, constants, 3,
                    refs);
  }
  for (uint32_t l = 0; l < c->n_layers; ++l) {
    decode_batch_add_rmsnorm(&plan, dim, eps,
                             decode_batch_form(DTYPE(DECODE_TENSOR_WQ, l)) |
                                 decode_batch_form(DTYPE(DECODE_TENSOR_WK, l)) |
                                 decode_batch_form(DTYPE(DECODE_TENSOR_WV, l)),
                             x, LAYER(DECODE_TENSOR_ATTN_NORM, l), xn, xq);
    {
      // The three projections' types, one byte each (decode_kernels.h).
      const uint32_t dtypes = DTYPE(DECODE_TENSOR_WQ, l) |
                              DTYPE(DECODE_TENSOR_WK, l) << 8 |
                              DTYPE(DECODE_TENSOR_WV, l) << 16;
      const uint32_t constants[] = {dim, kv_dim, head_size, dtypes};
      const weft_buffer_ref_t refs[] = {
          xn, xq, LAYER(DECODE_TENSOR_WQ, l), LAYER(DECODE_TENSOR_WK, l),
          LAYER(DECODE_TENSOR_WV, l), REF(b[DECODE_BUFFER_Q]),
          SLOT(DECODE_SLOT_K_ROW(l)), SLOT(DECODE_SLOT_V_ROW(l)),
          SLOT(DECODE_SLOT_ROPE)};
      decode_add_step(session, false, DECODE_KERNEL_QKV,
                      (dim + 2 * kv_dim) / DECODE_ROWS_PER_WORKGROUP, 4,
                      constants, 9, refs);
    }
    {
      const uint32_t constants[] = {c->n_heads, c->n_kv_heads, head_size};
      const weft_buffer_ref_t refs[] = {
          REF(b[DECODE_BUFFER_Q]), SLOT(DECODE_SLOT_K_PREFIX(l)),
          SLOT(DECODE_SLOT_V_PREFIX(l)), REF(b[DECODE_BUFFER_ATT])};
      decode_add_step(session, false, DECODE_KERNEL_ATTENTION, c->n_heads, 3,
                      constants, 4, refs);
    }
    decode_add_matvec_add(&plan, dim, dim, DTYPE(DECODE_TENSOR_WO, l),
                          REF(b[DECODE_BUFFER_ATT]), xq,
                          LAYER(DECODE_TENSOR_WO, l), x);
    decode_batch_add_rmsnorm(&plan, dim, eps,
                             decode_batch_form(DTYPE(DECODE_TENSOR_W1, l)) |
                                 decode_batch_form(DTYPE(DECODE_TENSOR_W3, l)),
                             x, LAYER(DECODE_TENSOR_FFN_NORM, l), xn, xq);
    {
      const uint32_t dtypes =
          DTYPE(DECODE_TENSOR_W1, l) | DTYPE(DECODE_TENSOR_W3, l) << 8;
      const uint32_t constants[] = {dim, hidden, dtypes};
      const weft_buffer_ref_t refs[] = {xn, xq, LAYER(DECODE_TENSOR_W1, l),
                                        LAYER(DECODE_TENSOR_W3, l),
                                        REF(b[DECODE_BUFFER_H])};
      decode_add_step(session, false, DECODE_KERNEL_FFN,
                      hidden / DECODE_ROWS_PER_WORKGROUP, 3, constants, 5,
                      refs);
    }
    decode_add_matvec_add(&plan, dim, hidden, DTYPE(DECODE_TENSOR_W2, l),
                          REF(b[DECODE_BUFFER_H]), xq,
                          LAYER(DECODE_TENSOR_W2, l), x);
  }
  session->tail_step = session->step_count;
  decode_batch_add_rmsnorm(&plan, dim, eps, decode_batch_form(classifier_dtype),
                           x, REF(w[DECODE_TENSOR_FINAL_NORM]), xn, xq);
  {
    const uint32_t constants[] = {dim, c->vocab_size, classifier_dtype};
    const weft_buffer_ref_t refs[] = {xn, xq, REF(w[DECODE_TENSOR_CLASSIFIER]),
                                      REF(b[DECODE_BUFFER_LOGITS])};
    decode_add_step(session, false, DECODE_KERNEL_CLASSIFIER,
                    (c->vocab_size + DECODE_CLASSIFIER_ROWS - 1) /
                        DECODE_CLASSIFIER_ROWS,
                    3, constants, 4, refs);
  }
  {
    const uint32_t constants[] = {c->vocab_size};
    const weft_buffer_ref_t refs[] = {REF(b[DECODE_BUFFER_LOGITS]),
                                      SLOT(DECODE_SLOT_TOKEN_OUT)};
    decode_add_step(session, false, DECODE_KERNEL_ARGMAX, 1, 1, constants, 2,
                    refs);
  }
}

// Records GEMM's |mode| of the |rows| by |cols| matrix |w| of the packed
// |dtypes| (and |w3|, SwiGLU's second) with the batch's |x| (quantized in
// |xq|) into |out|.
static void decode_batch_add_gemm(const decode_batch_plan_t* plan,
                                  uint32_t rows, uint32_t cols,
                                  uint32_t dtypes, uint32_t mode,
                                  weft_buffer_ref_t x, weft_buffer_ref_t xq,
                                  weft_buffer_ref_t w, weft_buffer_ref_t w3,
                                  weft_buffer_ref_t out) {
  const uint32_t constants[] = {rows, cols, dtypes, mode};
  const weft_buffer_ref_t refs[] = {plan->tokens, x, xq, w, w3, out};
  const uint32_t tile_rows = decode_gemm_tile_rows(dtypes & 0xFFu);
  decode_add_step(plan->session, true, DECODE_KERNEL_GEMM,
                  (rows + tile_rows - 1) / tile_rows * plan->column_tiles, 4,
                  constants, 6, refs);
}

// Records the batch's |out| += W |x| for the |rows| by |cols| matrix |w|
// of |dtype|, quantizing |x| into |xq| first where |dtype| reads it so
// (decode_add_matvec_add's batch form).
static void decode_batch_add_gemm_add(const decode_batch_plan_t* plan,
                                      uint32_t rows, uint32_t cols,
                                      uint32_t dtype, weft_buffer_ref_t x,
                                      weft_buffer_ref_t xq,
                                      weft_buffer_ref_t w,
                                      weft_buffer_ref_t out) {
  decode_batch_add_quantize(plan, cols, decode_batch_form(dtype), x, xq);
  decode_batch_add_gemm(plan, rows, cols, dtype, DECODE_GEMM_ADD, x, xq, w, w,
                        out);
}

// Fills in the batch's steps (decode.h): the token's layers over
// |batch_capacity| positions, without the classifier (a batch ends inside
// the prompt, whose next tokens are known).
static void decode_plan_batch(decode_session_t* session) {
  const decode_model_t* model = session->model;
  const decode_layout_t* layout = &model->layout;
  const decode_config_t* c = &layout->config;
  const uint32_t dim = c->dim;
  const uint32_t hidden = c->hidden_dim;
  const uint32_t kv_dim = decode_kv_dim(c);
  const uint32_t head_size = decode_head_size(c);
  const uint32_t eps = decode_float_bits(c->norm_eps);
  const uint32_t capacity = session->batch_capacity;
  const uint32_t column_tiles =
      (capacity + DECODE_GEMM_COLUMNS - 1) / DECODE_GEMM_COLUMNS;
  weft_buffer_t* const* w = model->buffers;
  weft_buffer_t* const* b = session->buffers;
  const weft_buffer_ref_t tokens = SLOT(DECODE_BATCH_SLOT_TOKENS);
  const decode_batch_plan_t plan = {session, true, tokens, capacity,
                                    column_tiles};
  {
    const uint32_t constants[] = {
        dim, c->vocab_size, DTYPE(DECODE_TENSOR_TOKEN_EMBEDDING, 0)};
    const weft_buffer_ref_t refs[] = {tokens,
                                      REF(w[DECODE_TENSOR_TOKEN_EMBEDDING]),
                                      REF(b[DECODE_BUFFER_BATCH_X])};
    decode_add_step(session, true, DECODE_KERNEL_BATCH_EMBED, capacity, 3,
                    constants, 3, refs);
  }
  for (uint32_t l = 0; l < c->n_layers; ++l) {
    decode_batch_add_rmsnorm(
        &plan, dim, eps,
        decode_batch_form(DTYPE(DECODE_TENSOR_WQ, l)) |
            decode_batch_form(DTYPE(DECODE_TENSOR_WK, l)) |
            decode_batch_form(DTYPE(DECODE_TENSOR_WV, l)),
        REF(b[DECODE_BUFFER_BATCH_X]), LAYER(DECODE_TENSOR_ATTN_NORM, l),
        REF(b[DECODE_BUFFER_BATCH_XN]), REF(b[DECODE_BUFFER_BATCH_XQ]));
    // q into its buffer; k and v straight into the cache rows.
    const decode_tensor_t projections[3] = {DECODE_TENSOR_WQ, DECODE_TENSOR_WK,
                                            DECODE_TENSOR_WV};
    const weft_buffer_ref_t outs[3] = {REF(b[DECODE_BUFFER_BATCH_Q]),
                                       SLOT(DECODE_BATCH_SLOT_K_ROWS(l)),
                                       SLOT(DECODE_BATCH_SLOT_V_ROWS(l))};
    for (int i = 0; i < 3; ++i) {
      decode_batch_add_gemm(&plan, i == 0 ? dim : kv_dim, dim,
                            DTYPE(projections[i], l), DECODE_GEMM_STORE,
                            REF(b[DECODE_BUFFER_BATCH_XN]),
                            REF(b[DECODE_BUFFER_BATCH_XQ]),
                            LAYER(projections[i], l), LAYER(projections[i], l),
                            outs[i]);
    }
    {
      const uint32_t constants[] = {dim, kv_dim, head_size};
      const weft_buffer_ref_t refs[] = {tokens, REF(b[DECODE_BUFFER_BATCH_Q]),
                                        SLOT(DECODE_BATCH_SLOT_K_ROWS(l)),
                                        SLOT(DECODE_BATCH_SLOT_ROPE)};
      decode_add_step(session, true, DECODE_KERNEL_BATCH_ROPE, capacity, 3,
                      constants, 4, refs);
    }
    {
      const uint32_t constants[] = {c->n_heads, c->n_kv_heads, head_size};
      const weft_buffer_ref_t refs[] = {
          tokens, REF(b[DECODE_BUFFER_BATCH_Q]),
          SLOT(DECODE_BATCH_SLOT_K_PREFIX(l)),
          SLOT(DECODE_BATCH_SLOT_V_PREFIX(l)),
          REF(b[DECODE_BUFFER_BATCH_ATT])};
      decode_add_step(session, true, DECODE_KERNEL_BATCH_ATTENTION,
                      c->n_heads * capacity, 3, constants, 5, refs);
    }
    decode_batch_add_gemm_add(&plan, dim, dim, DTYPE(DECODE_TENSOR_WO, l),
                              REF(b[DECODE_BUFFER_BATCH_ATT]),
                              REF(b[DECODE_BUFFER_BATCH_XQ]),
                              LAYER(DECODE_TENSOR_WO, l),
                              REF(b[DECODE_BUFFER_BATCH_X]));
    decode_batch_add_rmsnorm(
        &plan, dim, eps,
        decode_batch_form(DTYPE(DECODE_TENSOR_W1, l)) |
            decode_batch_form(DTYPE(DECODE_TENSOR_W3, l)),
        REF(b[DECODE_BUFFER_BATCH_X]), LAYER(DECODE_TENSOR_FFN_NORM, l),
        REF(b[DECODE_BUFFER_BATCH_XN]), REF(b[DECODE_BUFFER_BATCH_XQ]));
    decode_batch_add_gemm(
        &plan, hidden, dim,
        DTYPE(DECODE_TENSOR_W1, l) | DTYPE(DECODE_TENSOR_W3, l) << 8,
        DECODE_GEMM_SWIGLU, REF(b[DECODE_BUFFER_BATCH_XN]),
        REF(b[DECODE_BUFFER_BATCH_XQ]), LAYER(DECODE_TENSOR_W1, l),
        LAYER(DECODE_TENSOR_W3, l), REF(b[DECODE_BUFFER_BATCH_H]));
    decode_batch_add_gemm_add(&plan, dim, hidden, DTYPE(DECODE_TENSOR_W2, l),
                              REF(b[DECODE_BUFFER_BATCH_H]),
                              REF(b[DECODE_BUFFER_BATCH_XQ]),
                              LAYER(DECODE_TENSOR_W2, l),
                              REF(b[DECODE_BUFFER_BATCH_X]));
  }
#undef REF
#undef LAYER
#undef DTYPE
#undef SLOT
}

// Records SAMPLE in argmax's |step|'s place (the same logits and token
// out; the history and the scratch besides).
static weft_status_t decode_record_sample(decode_session_t* session,
                                          weft_command_buffer_t* command_buffer,
                                          const decode_step_t* step,
                                          const weft_buffer_ref_t* bindings,
                                          uint32_t history_slot) {
  const decode_sampling_t* sampling = &session->sampling;
  const uint32_t constants[6] = {
      step->constants[0],
      decode_float_bits(sampling->temperature),
      sampling->top_k,
      decode_float_bits(sampling->top_p),
      (uint32_t)sampling->seed,
      (uint32_t)(sampling->seed >> 32)};
  const weft_buffer_ref_t refs[4] = {
      bindings[0], bindings[1],
      weft_make_indirect_buffer_ref(history_slot, 0, WEFT_WHOLE_BUFFER),
      weft_make_buffer_ref(session->buffers[DECODE_BUFFER_SAMPLE_SCRATCH], 0,
                           WEFT_WHOLE_BUFFER)};
  // SAMPLE's bindings: logits, history, token, scratch.
  const weft_buffer_ref_t ordered[4] = {refs[0], refs[2], refs[1], refs[3]};
  const uint32_t workgroups[3] = {1, 1, 1};
  return weft_command_buffer_dispatch(
      command_buffer, session->sampling_kernels,
      DECODE_SAMPLING_KERNEL_SAMPLE, workgroups, 6, constants, 4, ordered);
}

// The token table's slots a batch's table holds too (the final form's):
// their index there, or UINT32_MAX for the others.
static uint32_t decode_batch_slot_of(const decode_session_t* session,
                                     uint32_t token_slot) {
  const uint32_t n_layers = session->model->layout.config.n_layers;
  if (token_slot == DECODE_SLOT_TOKEN_IN) {
    return DECODE_BATCH_SLOT_TOKEN_IN(n_layers);
  }
  if (token_slot == DECODE_SLOT_TOKEN_OUT) {
    return DECODE_BATCH_SLOT_TOKEN_OUT(n_layers);
  }
  if (token_slot == DECODE_SLOT_HISTORY(n_layers)) {
    return DECODE_BATCH_SLOT_HISTORY(n_layers);
  }
  return UINT32_MAX;
}

// Records the token's steps from |first| on into |command_buffer|,
// barriers between them; |in_batch| maps their slots into a batch's
// table (decode_batch_slot_of).
static weft_status_t decode_record_steps(decode_session_t* session,
                                         weft_command_buffer_t* command_buffer,
                                         uint32_t first, bool in_batch) {
  const uint32_t n_layers = session->model->layout.config.n_layers;
  weft_status_t status = WEFT_OK;
  for (uint32_t i = first; weft_status_is_ok(status) && i < session->step_count;
       ++i) {
    const decode_step_t* step = &session->steps[i];
    weft_buffer_ref_t
        bindings[sizeof(step->bindings) / sizeof(step->bindings[0])];
    for (uint32_t j = 0; j < step->binding_count; ++j) {
      bindings[j] = step->bindings[j];
      if (in_batch && !bindings[j].buffer) {
        bindings[j].slot = decode_batch_slot_of(session, bindings[j].slot);
        if (bindings[j].slot == UINT32_MAX) {
          return WEFT_STATUS(INTERNAL,
                             "decode: step %u of the token's tail reads a "
                             "slot a batch has not",
                             i);
        }
      }
    }
    const uint32_t history = in_batch ? DECODE_BATCH_SLOT_HISTORY(n_layers)
                                      : DECODE_SLOT_HISTORY(n_layers);
    const uint32_t workgroups[3] = {step->workgroups, 1, 1};
    if (step->kernel == DECODE_KERNEL_ARGMAX &&
        session->sampling.temperature > 0.0f) {
      status = decode_record_sample(session, command_buffer, step, bindings,
                                    history);
    } else {
      status = weft_command_buffer_dispatch(
          command_buffer, session->kernels, step->kernel, workgroups,
          step->constant_count, step->constants, step->binding_count,
          bindings);
    }
    if (weft_status_is_ok(status) && i + 1 < session->step_count) {
      status = weft_command_buffer_barrier(command_buffer);
    }
  }
  return status;
}

// Records the token's steps into the session's reusable command buffer.
static weft_status_t decode_record(decode_session_t* session) {
  weft_status_t status = weft_command_buffer_create(
      session->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
      WEFT_COMMAND_CATEGORY_DISPATCH, session->slot_count,
      &session->command_buffer);
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_begin(session->command_buffer);
  }
  if (weft_status_is_ok(status)) {
    status = decode_record_steps(session, session->command_buffer, 0, false);
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_end(session->command_buffer);
  }
  return status;
}

// True when no barrier need follow batch step |i|: it and the next are
// projections of one input into separate outputs (q, k and v).
static bool decode_batch_step_shares_region(const decode_step_t* steps,
                                            uint32_t count, uint32_t i) {
  return i + 1 < count && steps[i].kernel == DECODE_KERNEL_GEMM &&
         steps[i + 1].kernel == DECODE_KERNEL_GEMM &&
         steps[i].constants[3] == DECODE_GEMM_STORE &&
         steps[i + 1].constants[3] == DECODE_GEMM_STORE;
}

// Records the batch's steps into |*out_command_buffer|; |final|: then its
// last row of x copied to the token's and the token's tail on it.
static weft_status_t decode_record_batch_form(
    decode_session_t* session, bool final,
    weft_command_buffer_t** out_command_buffer) {
  weft_status_t status = weft_command_buffer_create(
      session->device, WEFT_COMMAND_BUFFER_MODE_REUSABLE,
      final ? WEFT_COMMAND_CATEGORY_DISPATCH | WEFT_COMMAND_CATEGORY_TRANSFER
            : WEFT_COMMAND_CATEGORY_DISPATCH,
      session->batch_slot_count, out_command_buffer);
  weft_command_buffer_t* command_buffer = *out_command_buffer;
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_begin(command_buffer);
  }
  const uint32_t count = session->batch_step_count;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < count; ++i) {
    const decode_step_t* step = &session->batch_steps[i];
    const uint32_t workgroups[3] = {step->workgroups, 1, 1};
    status = weft_command_buffer_dispatch(
        command_buffer, session->kernels, step->kernel, workgroups,
        step->constant_count, step->constants, step->binding_count,
        step->bindings);
    if (weft_status_is_ok(status) && i + 1 < count &&
        !decode_batch_step_shares_region(session->batch_steps, count, i)) {
      status = weft_command_buffer_barrier(command_buffer);
    }
  }
  if (final && weft_status_is_ok(status)) {
    const uint32_t n_layers = session->model->layout.config.n_layers;
    const uint64_t row = session->model->layout.config.dim * 4ull;
    status = weft_command_buffer_barrier(command_buffer);
    if (weft_status_is_ok(status)) {
      status = weft_command_buffer_copy(
          command_buffer,
          weft_make_indirect_buffer_ref(DECODE_BATCH_SLOT_LAST_X(n_layers), 0,
                                        row),
          weft_make_buffer_ref(session->buffers[DECODE_BUFFER_X], 0, row));
    }
    if (weft_status_is_ok(status)) {
      status = weft_command_buffer_barrier(command_buffer);
    }
    if (weft_status_is_ok(status)) {
      status = decode_record_steps(session, command_buffer, session->tail_step,
                                   true);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_command_buffer_end(command_buffer);
  }
  return status;
}

static weft_status_t decode_record_batch(decode_session_t* session) {
  weft_status_t status = decode_record_batch_form(
      session, false, &session->batch_command_buffer);
  if (weft_status_is_ok(status)) {
    status = decode_record_batch_form(session, true,
                                      &session->batch_final_command_buffer);
  }
  return status;
}

// The rotary table: angle of pair i at position p = p * theta^(-2i/head).
static weft_status_t decode_write_rope(decode_session_t* session) {
  const decode_config_t* c = &session->model->layout.config;
  const uint32_t half = decode_head_size(c) / 2;
  const size_t count = (size_t)c->seq_len * half * 2;
  float* table = NULL;
  weft_status_t status = weft_allocator_malloc_array(
      session->allocator, count, sizeof(float), (void**)&table);
  if (!weft_status_is_ok(status)) return status;
  for (uint32_t p = 0; p < c->seq_len; ++p) {
    for (uint32_t i = 0; i < half; ++i) {
      const double frequency =
          pow((double)c->rope_theta, -(2.0 * i) / (2.0 * half));
      const double angle = (double)p * frequency;
      table[((size_t)p * half + i) * 2] = (float)cos(angle);
      table[((size_t)p * half + i) * 2 + 1] = (float)sin(angle);
    }
  }
  status = weft_buffer_map_write(session->buffers[DECODE_BUFFER_ROPE], 0,
                                 table, count * sizeof(float));
  weft_allocator_free(session->allocator, table);
  return status;
}

weft_status_t decode_session_create(decode_model_t* model,
                                    weft_allocator_t allocator,
                                    decode_session_t** out_session) {
  *out_session = NULL;
  const decode_config_t* c = &model->layout.config;
  if (c->seq_len > DECODE_MAX_CONTEXT) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "the decoder's kernels take a context of at most %u "
                       "positions (the model has %u)",
                       DECODE_MAX_CONTEXT, c->seq_len);
  }
  decode_session_t* session = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*session), (void**)&session);
  if (!weft_status_is_ok(status)) return status;
  memset(session, 0, sizeof(*session));
  session->allocator = allocator;
  session->model = model;
  session->device = model->device;
  session->slot_count = DECODE_SLOT_HISTORY(c->n_layers) + 1;
  session->batch_slot_count = DECODE_BATCH_SLOT_COUNT(c->n_layers) + 4;
  session->batch_capacity =
      c->seq_len < DECODE_BATCH_MAX ? c->seq_len : DECODE_BATCH_MAX;
  session->batch_limit = session->batch_capacity;
  const uint64_t batch_rows = session->batch_capacity;
  const uint32_t widest = c->hidden_dim > c->dim ? c->hidden_dim : c->dim;
  const uint64_t kv_cache_bytes =
      (uint64_t)c->n_layers * c->seq_len * decode_kv_dim(c) * 4;
  const uint64_t sizes[DECODE_BUFFER_COUNT] = {
      [DECODE_BUFFER_X] = c->dim * 4ull,
      [DECODE_BUFFER_Q] = c->dim * 4ull,
      [DECODE_BUFFER_ATT] = c->dim * 4ull,
      [DECODE_BUFFER_H] = c->hidden_dim * 4ull,
      [DECODE_BUFFER_LOGITS] = c->vocab_size * 4ull,
      [DECODE_BUFFER_K_CACHE] = kv_cache_bytes,
      [DECODE_BUFFER_V_CACHE] = kv_cache_bytes,
      [DECODE_BUFFER_TOKENS] = (c->seq_len + 1ull) * 4,
      [DECODE_BUFFER_DISCARD] = 4,
      [DECODE_BUFFER_ROPE] = (uint64_t)c->seq_len * decode_head_size(c) * 4,
      [DECODE_BUFFER_SAMPLE_SCRATCH] =
          (uint64_t)c->vocab_size * DECODE_SAMPLING_SCRATCH_PER_TOKEN,
      [DECODE_BUFFER_XN] = c->dim * 4ull,
      [DECODE_BUFFER_XQ] = DECODE_BATCH_QUANT_STRIDE(widest),
      [DECODE_BUFFER_BATCH_X] = batch_rows * c->dim * 4,
      [DECODE_BUFFER_BATCH_XN] = batch_rows * c->dim * 4,
      [DECODE_BUFFER_BATCH_XQ] =
          batch_rows * DECODE_BATCH_QUANT_STRIDE(widest),
      [DECODE_BUFFER_BATCH_Q] = batch_rows * c->dim * 4,
      [DECODE_BUFFER_BATCH_ATT] = batch_rows * c->dim * 4,
      [DECODE_BUFFER_BATCH_H] = batch_rows * c->hidden_dim * 4,
  };
  for (int i = 0; weft_status_is_ok(status) && i < DECODE_BUFFER_COUNT; ++i) {
    // The buffers the host maps (decode_write_rope, decode_session_start,
    // decode_session_read_tokens; the logits through logits_host).
    const bool mapped = i == DECODE_BUFFER_TOKENS || i == DECODE_BUFFER_ROPE;
    status = weft_device_allocate_buffer(
        session->device, decode_buffer_params(session->device, mapped),
        sizes[i], &session->buffers[i]);
  }
  if (weft_status_is_ok(status)) {
    // The same kernels as a CUDA module on a cuda device (decode_cuda.h),
    // the CPU library elsewhere; the recording is the same for both.
    weft_kernel_def_t cuda_kernels[DECODE_KERNEL_COUNT];
    weft_executable_source_t source =
        weft_executable_source_cpu_static(decode_kernels_query);
    if (decode_cuda_is_device(session->device)) {
      status = decode_cuda_executable_source(cuda_kernels, &source);
    }
    if (weft_status_is_ok(status)) {
      status = weft_device_create_executable(session->device, source,
                                             &session->kernels);
    }
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, 5 + 9 * c->n_layers,
                                         sizeof(decode_step_t),
                                         (void**)&session->steps);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, session->slot_count,
                                         sizeof(weft_buffer_binding_t),
                                         (void**)&session->table);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, 1 + 12 * c->n_layers,
                                         sizeof(decode_step_t),
                                         (void**)&session->batch_steps);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, session->batch_slot_count,
                                         sizeof(weft_buffer_binding_t),
                                         (void**)&session->batch_table);
  }
  if (weft_status_is_ok(status)) {
    decode_plan(session);
    decode_plan_batch(session);
    status = decode_record(session);
  }
  if (weft_status_is_ok(status)) status = decode_record_batch(session);
  if (weft_status_is_ok(status)) status = decode_write_rope(session);
  if (weft_status_is_ok(status)) {
    status = weft_device_create_semaphore(session->device, 0,
                                          &session->timeline);
  }
  if (weft_status_is_ok(status) && decode_cuda_is_device(session->device)) {
    status = weft_device_allocate_buffer(
        session->device, decode_buffer_params(session->device, true),
        c->vocab_size * 4ull, &session->logits_host);
    if (weft_status_is_ok(status)) {
      status = weft_device_create_semaphore(session->device, 0,
                                            &session->reads);
    }
  }
  if (!weft_status_is_ok(status)) {
    decode_session_release(session);
    return weft_status_annotate(status, "creating a decode session");
  }
  *out_session = session;
  return WEFT_OK;
}

void decode_session_release(decode_session_t* session) {
  if (!session) return;
  if (session->timeline && session->queued > 0) {
    // Steps still in flight use the buffers: let them finish.
    weft_status_ignore(weft_semaphore_wait(
        session->timeline, session->base + session->queued,
        weft_timeout_infinite()));
  }
  if (session->reads && session->read_count > 0) {
    weft_status_ignore(weft_semaphore_wait(
        session->reads, session->read_count, weft_timeout_infinite()));
  }
  weft_semaphore_release(session->reads);
  weft_buffer_release(session->logits_host);
  weft_semaphore_release(session->timeline);
  weft_command_buffer_release(session->command_buffer);
  weft_command_buffer_release(session->batch_command_buffer);
  weft_command_buffer_release(session->batch_final_command_buffer);
  weft_allocator_free(session->allocator, session->table);
  weft_allocator_free(session->allocator, session->steps);
  weft_allocator_free(session->allocator, session->batch_table);
  weft_allocator_free(session->allocator, session->batch_steps);
  weft_executable_release(session->kernels);
  weft_executable_release(session->sampling_kernels);
  for (int i = 0; i < DECODE_BUFFER_COUNT; ++i) {
    weft_buffer_release(session->buffers[i]);
  }
  weft_allocator_free(session->allocator, session);
}

weft_status_t decode_session_start(decode_session_t* session,
                                   const uint32_t* prompt,
                                   uint32_t prompt_length) {
  const decode_config_t* c = &session->model->layout.config;
  if (prompt_length == 0 || prompt_length > c->seq_len) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "a prompt of %u tokens (1 to the context of %u)",
                       prompt_length, c->seq_len);
  }
  for (uint32_t i = 0; i < prompt_length; ++i) {
    if (prompt[i] >= c->vocab_size) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "prompt token %u is %u, outside the vocabulary of %u",
                         i, prompt[i], c->vocab_size);
    }
  }
  // Everything queued before must be done (the buffers are rewritten).
  weft_status_t status = WEFT_OK;
  if (session->queued > 0) {
    status = weft_semaphore_wait(session->timeline,
                                 session->base + session->queued,
                                 weft_timeout_infinite());
    session->base += session->queued;
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_write(session->buffers[DECODE_BUFFER_TOKENS], 0,
                                   prompt, prompt_length * sizeof(uint32_t));
  }
  if (weft_status_is_ok(status)) {
    session->prompt_length = prompt_length;
    session->queued = 0;
  }
  return status;
}

weft_status_t decode_session_set_sampling(decode_session_t* session,
                                          const decode_sampling_t* sampling) {
  if (!(sampling->temperature >= 0.0f) || !(sampling->top_p > 0.0f) ||
      !(sampling->top_p <= 1.0f)) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "sampling: temperature %g (at least 0), top_p %g "
                       "(above 0, at most 1)",
                       sampling->temperature, sampling->top_p);
  }
  if (sampling->temperature > 0.0f && decode_cuda_is_device(session->device)) {
    return WEFT_STATUS(UNIMPLEMENTED,
                       "sampling: temperature %g on a cuda device; SAMPLE "
                       "has no CUDA kernel (decode_cuda.h): decode greedily "
                       "there (temperature 0)",
                       sampling->temperature);
  }
  // Everything queued must be done: the command buffer is recorded anew.
  weft_status_t status = WEFT_OK;
  if (session->queued > 0) {
    status = weft_semaphore_wait(session->timeline,
                                 session->base + session->queued,
                                 weft_timeout_infinite());
  }
  if (weft_status_is_ok(status) && !session->sampling_kernels &&
      sampling->temperature > 0.0f) {
    status = weft_device_create_executable(
        session->device,
        weft_executable_source_cpu_static(decode_sampling_query),
        &session->sampling_kernels);
  }
  if (weft_status_is_ok(status)) {
    session->sampling = *sampling;
    weft_command_buffer_release(session->command_buffer);
    session->command_buffer = NULL;
    status = decode_record(session);
  }
  if (weft_status_is_ok(status) && session->batch_final_command_buffer) {
    // The final batch form ends with the same choice of the next token.
    weft_command_buffer_release(session->batch_final_command_buffer);
    session->batch_final_command_buffer = NULL;
    status = decode_record_batch_form(session, true,
                                      &session->batch_final_command_buffer);
  }
  return status;
}

uint32_t decode_session_slot_count(const decode_session_t* session) {
  return session->slot_count;
}

// The token step's own token, its next token out and the history at
// |position|.
static void decode_token_io_bindings(const decode_session_t* session,
                                     uint32_t position,
                                     weft_buffer_binding_t* out_in,
                                     weft_buffer_binding_t* out_out,
                                     weft_buffer_binding_t* out_history) {
  weft_buffer_t* const* b = session->buffers;
  *out_in =
      (weft_buffer_binding_t){b[DECODE_BUFFER_TOKENS], position * 4ull, 4};
  *out_out = position + 1 >= session->prompt_length
                 ? (weft_buffer_binding_t){b[DECODE_BUFFER_TOKENS],
                                           (position + 1) * 4ull, 4}
                 : (weft_buffer_binding_t){b[DECODE_BUFFER_DISCARD], 0, 4};
  *out_history = (weft_buffer_binding_t){b[DECODE_BUFFER_TOKENS], 0,
                                         (position + 1) * 4ull};
}

void decode_session_bindings(const decode_session_t* session,
                             uint32_t position,
                             weft_buffer_binding_t* out_bindings) {
  const decode_config_t* c = &session->model->layout.config;
  weft_buffer_t* const* b = session->buffers;
  const uint64_t kv_row = decode_kv_dim(c) * 4ull;
  const uint64_t rope_row = decode_head_size(c) * 4ull;
  decode_token_io_bindings(session, position,
                           &out_bindings[DECODE_SLOT_TOKEN_IN],
                           &out_bindings[DECODE_SLOT_TOKEN_OUT],
                           &out_bindings[DECODE_SLOT_HISTORY(c->n_layers)]);
  out_bindings[DECODE_SLOT_ROPE] = (weft_buffer_binding_t){
      b[DECODE_BUFFER_ROPE], position * rope_row, rope_row};
  for (uint32_t l = 0; l < c->n_layers; ++l) {
    const uint64_t layer = (uint64_t)l * c->seq_len * kv_row;
    out_bindings[DECODE_SLOT_K_ROW(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_K_CACHE], layer + position * kv_row, kv_row};
    out_bindings[DECODE_SLOT_V_ROW(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_V_CACHE], layer + position * kv_row, kv_row};
    out_bindings[DECODE_SLOT_K_PREFIX(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_K_CACHE], layer, (position + 1) * kv_row};
    out_bindings[DECODE_SLOT_V_PREFIX(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_V_CACHE], layer, (position + 1) * kv_row};
  }
}

uint32_t decode_session_batch_slot_count(const decode_session_t* session) {
  return session->batch_slot_count;
}

void decode_session_batch_bindings(const decode_session_t* session,
                                   uint32_t first, uint32_t count,
                                   weft_buffer_binding_t* out_bindings) {
  const decode_config_t* c = &session->model->layout.config;
  weft_buffer_t* const* b = session->buffers;
  const uint64_t kv_row = decode_kv_dim(c) * 4ull;
  const uint64_t rope_row = decode_head_size(c) * 4ull;
  out_bindings[DECODE_BATCH_SLOT_TOKENS] =
      (weft_buffer_binding_t){b[DECODE_BUFFER_TOKENS], first * 4ull,
                              count * 4ull};
  out_bindings[DECODE_BATCH_SLOT_ROPE] = (weft_buffer_binding_t){
      b[DECODE_BUFFER_ROPE], first * rope_row, count * rope_row};
  for (uint32_t l = 0; l < c->n_layers; ++l) {
    const uint64_t layer = (uint64_t)l * c->seq_len * kv_row;
    out_bindings[DECODE_BATCH_SLOT_K_ROWS(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_K_CACHE], layer + first * kv_row, count * kv_row};
    out_bindings[DECODE_BATCH_SLOT_V_ROWS(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_V_CACHE], layer + first * kv_row, count * kv_row};
    out_bindings[DECODE_BATCH_SLOT_K_PREFIX(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_K_CACHE], layer, ((uint64_t)first + count) * kv_row};
    out_bindings[DECODE_BATCH_SLOT_V_PREFIX(l)] = (weft_buffer_binding_t){
        b[DECODE_BUFFER_V_CACHE], layer, ((uint64_t)first + count) * kv_row};
  }
  // The final form's (decode_record_batch): the last row, as its token.
  const uint64_t row = c->dim * 4ull;
  out_bindings[DECODE_BATCH_SLOT_LAST_X(c->n_layers)] = (weft_buffer_binding_t){
      b[DECODE_BUFFER_BATCH_X], (uint64_t)(count - 1) * row, row};
  const uint32_t n = c->n_layers;
  decode_token_io_bindings(session, first + count - 1,
                           &out_bindings[DECODE_BATCH_SLOT_TOKEN_IN(n)],
                           &out_bindings[DECODE_BATCH_SLOT_TOKEN_OUT(n)],
                           &out_bindings[DECODE_BATCH_SLOT_HISTORY(n)]);
}

const decode_step_t* decode_session_batch_steps(
    const decode_session_t* session, uint32_t* out_count) {
  *out_count = session->batch_step_count;
  return session->batch_steps;
}

uint32_t decode_session_batch_capacity(const decode_session_t* session) {
  return session->batch_capacity;
}

weft_status_t decode_session_set_batch(decode_session_t* session,
                                       uint32_t limit) {
  if (limit == 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "a batch of 0 positions (1: the prompt token by "
                       "token; at most %u)",
                       session->batch_capacity);
  }
  session->batch_limit =
      limit < session->batch_capacity ? limit : session->batch_capacity;
  return WEFT_OK;
}

// Queues positions |first| .. |first| + |count| - 1 of the prompt as one
// execute of the batch, which signals the timeline as far as their last
// step would.
static weft_status_t decode_enqueue_batch(decode_session_t* session,
                                          uint32_t first, uint32_t count,
                                          bool final) {
  decode_session_batch_bindings(session, first, count, session->batch_table);
  const uint64_t wait_value = session->base + first;
  const uint64_t signal_value = wait_value + count;
  const weft_semaphore_list_t waits = {1, &session->timeline, &wait_value};
  const weft_semaphore_list_t signals = {1, &session->timeline,
                                         &signal_value};
  const weft_binding_table_t table = {session->batch_slot_count,
                                      session->batch_table};
  return weft_device_queue_execute(
      session->device, WEFT_QUEUE_AFFINITY_ANY, waits, signals,
      final ? session->batch_final_command_buffer
            : session->batch_command_buffer,
      table);
}

weft_status_t decode_session_enqueue(decode_session_t* session,
                                     uint32_t count) {
  const decode_config_t* c = &session->model->layout.config;
  if (session->prompt_length == 0) {
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "decode_session_enqueue before decode_session_start");
  }
  if (count > c->seq_len - session->queued) {
    return WEFT_STATUS(OUT_OF_RANGE,
                       "%u more steps after %u would pass the context of %u",
                       count, session->queued, c->seq_len);
  }
  weft_status_t status = WEFT_OK;
  const uint32_t end = session->queued + count;
  while (weft_status_is_ok(status) && session->queued < end) {
    const uint32_t position = session->queued;
    // Prompt positions go in batches; the one that ends the prompt takes
    // the token's tail on its last row (the logits, the next token). A
    // batch of one is a token's step.
    uint32_t batch = 0;
    if (position + 1 < session->prompt_length) {
      batch = session->prompt_length - position;
      if (batch > end - position) batch = end - position;
      if (batch > session->batch_limit) batch = session->batch_limit;
    }
    if (batch > 1) {
      status = decode_enqueue_batch(
          session, position, batch,
          position + batch == session->prompt_length);
      if (weft_status_is_ok(status)) session->queued += batch;
      continue;
    }
    decode_session_bindings(session, position, session->table);
    const uint64_t wait_value = session->base + position;
    const uint64_t signal_value = wait_value + 1;
    const weft_semaphore_list_t waits = {1, &session->timeline, &wait_value};
    const weft_semaphore_list_t signals = {1, &session->timeline,
                                           &signal_value};
    const weft_binding_table_t table = {session->slot_count, session->table};
    status = weft_device_queue_execute(session->device,
                                       WEFT_QUEUE_AFFINITY_ANY, waits, signals,
                                       session->command_buffer, table);
    if (weft_status_is_ok(status)) ++session->queued;
  }
  return status;
}

uint32_t decode_session_queued(const decode_session_t* session) {
  return session->queued;
}

weft_semaphore_t* decode_session_timeline(const decode_session_t* session,
                                          uint32_t position,
                                          uint64_t* out_value) {
  *out_value = session->base + position + 1;
  return session->timeline;
}

weft_status_t decode_session_wait(decode_session_t* session,
                                  uint32_t position, weft_timeout_t timeout) {
  if (position >= session->queued) {
    return WEFT_STATUS(FAILED_PRECONDITION,
                       "waiting for step %u, but only %u are queued", position,
                       session->queued);
  }
  return weft_semaphore_wait(session->timeline, session->base + position + 1,
                             timeout);
}

weft_status_t decode_session_read_logits(decode_session_t* session,
                                         float* out_logits) {
  const decode_config_t* c = &session->model->layout.config;
  const uint64_t bytes = c->vocab_size * 4ull;
  if (!session->logits_host) {
    return weft_buffer_map_read(session->buffers[DECODE_BUFFER_LOGITS], 0,
                                out_logits, bytes);
  }
  // Device memory (cuda): copied behind the last queued step.
  const uint64_t done = session->base + session->queued;
  const uint64_t read = session->read_count + 1;
  const weft_semaphore_list_t waits = {1, &session->timeline, &done};
  const weft_semaphore_list_t signals = {1, &session->reads, &read};
  weft_status_t status = weft_device_queue_copy(
      session->device, WEFT_QUEUE_AFFINITY_ANY, waits, signals,
      session->buffers[DECODE_BUFFER_LOGITS], 0, session->logits_host, 0,
      bytes);
  if (weft_status_is_ok(status)) {
    session->read_count = read;
    status = weft_semaphore_wait(session->reads, read, weft_timeout_infinite());
  }
  if (weft_status_is_ok(status)) {
    status = weft_buffer_map_read(session->logits_host, 0, out_logits, bytes);
  }
  return status;
}

weft_status_t decode_session_read_tokens(decode_session_t* session,
                                         uint32_t first, uint32_t count,
                                         uint32_t* out_tokens) {
  const decode_config_t* c = &session->model->layout.config;
  if ((uint64_t)first + count > c->seq_len + 1ull) {
    return WEFT_STATUS(OUT_OF_RANGE, "tokens %u..%u of a sequence of %u",
                       first, first + count, c->seq_len + 1);
  }
  return weft_buffer_map_read(session->buffers[DECODE_BUFFER_TOKENS],
                              first * 4ull, out_tokens, count * 4ull);
}

const decode_step_t* decode_session_steps(const decode_session_t* session,
                                          uint32_t* out_count) {
  *out_count = session->step_count;
  return session->steps;
}
