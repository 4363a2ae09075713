// GGML's quantized blocks (examples/decode/decode_quant.h) and their dot
// products (decode_quant_dot.h):
//  - blocks built by hand dequantize to values worked out by hand from the
//    format's definition (Q8_0, Q4_0, Q4_1, Q5_0's and Q5_1's fifth bits,
//    Q4_K's packed 6-bit scales and mins, Q5_K's fifth bits, Q6_K's split
//    6-bit codes);
//  - the activations' quantization: each element within half a step of
//    its value, Q8_K's block sums the sums of its codes;
//  - each block type's dot product, in every version this CPU has
//    (portable, AVX2, AVX-512), against a plain dequantize-then-multiply
//    in double over random blocks, among them scales of 0, the smallest
//    half (a subnormal), the largest (65504) and negative ones, and over
//    1 to 9 blocks (the AVX-512 versions' pairs and their odd block);
//  - quantizing random weights and dequantizing them again errs by at
//    most a step of the block's scale (bounds per type below);
//  - Q4_0, Q8_0 and Q4_K rows interleaved by eight (decode_quant_x8.h):
//    the repack
//    undone gives the rows back; its products, in every version and for 1
//    to 4 columns, are bit for bit the portable one's (and so each
//    column's the one-column result), and within the tolerance of the
//    plain rows' dot products, over rows of up to 300 blocks (past the
//    products' chunk of 64 blocks).
// setjmp.h, stdarg.h and stddef.h must come before cmocka.h.
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
// clang-format on

#include "decode_quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_checkpoint.h"
#include "decode_quant_dot.h"
#include "decode_quant_x8.h"
#include "decode_test_util.h"

static const decode_dtype_t kBlockTypes[] = {
    DECODE_DTYPE_Q8_0, DECODE_DTYPE_Q4_0, DECODE_DTYPE_Q4_1,
    DECODE_DTYPE_Q5_0, DECODE_DTYPE_Q5_1, DECODE_DTYPE_Q4_K,
    DECODE_DTYPE_Q5_K, DECODE_DTYPE_Q6_K};

// The test's random numbers (decode_test_util.h).
static uint64_t g_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) { return decode_test_random(&g_state); }
static float uniform(float low, float high) {
  return decode_test_uniform(&g_state, low, high);
}

//===----------------------------------------------------------------------===//
// Blocks by hand
//===----------------------------------------------------------------------===//

static void q8_0_by_hand(void** state) {
  (void)state;
  decode_block_q8_0_t block;
  block.d = 0x3800;  // 0.5
  for (int i = 0; i < 32; ++i) block.qs[i] = (int8_t)(i - 16);
  block.qs[31] = -128;
  float out[32];
  decode_quant_dequantize(DECODE_DTYPE_Q8_0, &block, 32, out);
  assert_true(out[0] == -8.0f);
  assert_true(out[16] == 0.0f);
  assert_true(out[30] == 7.0f);
  assert_true(out[31] == -64.0f);
}

static void q4_0_by_hand(void** state) {
  (void)state;
  decode_block_q4_0_t block;
  block.d = 0x4000;  // 2.0
  // Element i < 16: low nibble i; element i + 16: high nibble 15 - i.
  for (int i = 0; i < 16; ++i) block.qs[i] = (uint8_t)(i | (15 - i) << 4);
  float out[32];
  decode_quant_dequantize(DECODE_DTYPE_Q4_0, &block, 32, out);
  assert_true(out[0] == -16.0f);   // 2 (0 - 8)
  assert_true(out[9] == 2.0f);     // 2 (9 - 8)
  assert_true(out[15] == 14.0f);   // 2 (15 - 8)
  assert_true(out[16] == 14.0f);   // 2 (15 - 8)
  assert_true(out[31] == -16.0f);  // 2 (0 - 8)
}

static void q4_k_by_hand(void** state) {
  (void)state;
  decode_block_q4_k_t block;
  block.d = 0x3C00;     // 1.0
  block.dmin = 0x3800;  // 0.5
  // Scales 1, 2, 3, 4, 44, 45, 46, 47 and mins 0, 1, 2, 3, 17, 18, 19, 20:
  // bytes 0-3 the first four scales with the top two bits of the last
  // four (44 = 0b10'1100: 2) above them, bytes 4-7 the first four mins
  // with the top bits of the last four (17 = 0b01'0001: 1), bytes 8-11 the
  // low four bits of the last scales (12..15) and mins (1..4 << 4).
  const uint8_t scales[12] = {0x81, 0x82, 0x83, 0x84, 0x40, 0x41,
                              0x42, 0x43, 0x1C, 0x2D, 0x3E, 0x4F};
  memcpy(block.scales, scales, sizeof(scales));
  for (int l = 0; l < 128; ++l) {
    block.qs[l] = (uint8_t)((l & 15) | (15 - (l & 15)) << 4);
  }
  uint8_t sc, m;
  decode_q4_k_scale_min(block.scales, 5, &sc, &m);
  assert_int_equal(sc, 45);
  assert_int_equal(m, 18);
  float out[256];
  decode_quant_dequantize(DECODE_DTYPE_Q4_K, &block, 256, out);
  assert_true(out[0] == 0.0f);      // sub-block 0: 1 x 0 - 0.5 x 0
  assert_true(out[5] == 5.0f);      // 1 x 5
  assert_true(out[40] == 13.5f);    // sub-block 1, q 15 - 8: 2 x 7 - 0.5
  assert_true(out[200] == 358.5f);  // sub-block 6, q 8: 46 x 8 - 0.5 x 19
  assert_true(out[255] == -10.0f);  // sub-block 7, q 0: -0.5 x 20
}

static void q4_1_by_hand(void** state) {
  (void)state;
  decode_block_q4_1_t block;
  block.d = 0x4000;  // 2.0
  block.m = 0xBC00;  // -1.0
  for (int i = 0; i < 16; ++i) block.qs[i] = (uint8_t)(i | (15 - i) << 4);
  float out[32];
  decode_quant_dequantize(DECODE_DTYPE_Q4_1, &block, 32, out);
  assert_true(out[0] == -1.0f);   // 2 x 0 - 1
  assert_true(out[9] == 17.0f);   // 2 x 9 - 1
  assert_true(out[16] == 29.0f);  // 2 x 15 - 1 (high nibble of qs[0])
  assert_true(out[31] == -1.0f);  // 2 x 0 - 1
}

// Q5_0's and Q5_1's codes: nibbles as Q4_0's (element i < 16: low nibble
// i, element i + 16: high nibble 15 - i), and fifth bits from qh = 01 80
// FF 00: element 0 (bit 0), 15 (bit 15) and 16..23 (bits 16..23).
static void q5_codes_by_hand(uint8_t qs[16], uint8_t qh[4]) {
  for (int i = 0; i < 16; ++i) qs[i] = (uint8_t)(i | (15 - i) << 4);
  qh[0] = 0x01, qh[1] = 0x80, qh[2] = 0xFF, qh[3] = 0x00;
}

static void q5_0_by_hand(void** state) {
  (void)state;
  decode_block_q5_0_t block;
  block.d = 0x3800;  // 0.5
  q5_codes_by_hand(block.qs, block.qh);
  float out[32];
  decode_quant_dequantize(DECODE_DTYPE_Q5_0, &block, 32, out);
  assert_true(out[0] == 0.0f);    // q 0 + 16: 0.5 (16 - 16)
  assert_true(out[1] == -7.5f);   // q 1: 0.5 (1 - 16)
  assert_true(out[15] == 7.5f);   // q 15 + 16
  assert_true(out[16] == 7.5f);   // high nibble 15, bit 16: 31
  assert_true(out[23] == 4.0f);   // high nibble 8, bit 23: 24
  assert_true(out[24] == -4.5f);  // high nibble 7, no bit: 7
  assert_true(out[31] == -8.0f);  // high nibble 0: 0.5 (0 - 16)
}

static void q5_1_by_hand(void** state) {
  (void)state;
  decode_block_q5_1_t block;
  block.d = 0x3C00;  // 1.0
  block.m = 0x4000;  // 2.0
  q5_codes_by_hand(block.qs, block.qh);
  float out[32];
  decode_quant_dequantize(DECODE_DTYPE_Q5_1, &block, 32, out);
  assert_true(out[0] == 18.0f);   // 16 + 2
  assert_true(out[1] == 3.0f);    // 1 + 2
  assert_true(out[23] == 26.0f);  // 24 + 2
  assert_true(out[24] == 9.0f);   // 7 + 2
  assert_true(out[31] == 2.0f);   // 0 + 2
}

static void q5_k_by_hand(void** state) {
  (void)state;
  decode_block_q5_k_t block;
  block.d = 0x3C00;     // 1.0
  block.dmin = 0x3800;  // 0.5
  // Q4_K's scales and mins of q4_k_by_hand: 1, 2, 3, 4, 44, 45, 46, 47
  // and 0, 1, 2, 3, 17, 18, 19, 20.
  const uint8_t scales[12] = {0x81, 0x82, 0x83, 0x84, 0x40, 0x41,
                              0x42, 0x43, 0x1C, 0x2D, 0x3E, 0x4F};
  memcpy(block.scales, scales, sizeof(scales));
  for (int l = 0; l < 128; ++l) {
    block.qs[l] = (uint8_t)((l & 15) | (15 - (l & 15)) << 4);
  }
  for (int l = 0; l < 32; ++l) block.qh[l] = (uint8_t)(37 * l);
  float out[256];
  decode_quant_dequantize(DECODE_DTYPE_Q5_K, &block, 256, out);
  assert_true(out[0] == 0.0f);  // sub-block 0, qh[0] 0: q 0
  // Sub-block 0, l 5: nibble 5, qh[5] = 185 = 0b1011'1001 bit 0: q 21.
  assert_true(out[5] == 21.0f);
  // Sub-block 1, l 10: high nibble 5, qh[10] = 114 = 0b0111'0010 bit 1:
  // q 21, 2 x 21 - 0.5 x 1.
  assert_true(out[42] == 41.5f);
  // Sub-block 6, l 8: nibble 8, qh[8] = 40 = 0b0010'1000 bit 6 clear:
  // 46 x 8 - 0.5 x 19.
  assert_true(out[200] == 358.5f);
  // Sub-block 6, l 9: nibble 9, qh[9] = 77 = 0b0100'1101 bit 6: q 25.
  assert_true(out[201] == 1140.5f);  // 46 x 25 - 9.5
  // Sub-block 7, l 4: high nibble 11, qh[4] = 148 = 0b1001'0100 bit 7:
  // q 27, 47 x 27 - 0.5 x 20.
  assert_true(out[228] == 1259.0f);
  // Sub-block 7, l 31: high nibble 0, qh[31] = 123 bit 7 clear: q 0.
  assert_true(out[255] == -10.0f);
}

static void q6_k_by_hand(void** state) {
  (void)state;
  decode_block_q6_k_t block;
  block.d = 0x3400;  // 0.25
  for (int j = 0; j < 16; ++j) block.scales[j] = (int8_t)(j - 8);
  for (int i = 0; i < 128; ++i) block.ql[i] = (uint8_t)i;
  for (int i = 0; i < 64; ++i) block.qh[i] = (uint8_t)i;
  float out[256];
  decode_quant_dequantize(DECODE_DTYPE_Q6_K, &block, 256, out);
  // Element 0: ql[0] low nibble 0, qh[0] bits 0-1 0: q 0, scale -8.
  assert_true(out[0] == 64.0f);  // 0.25 x -8 x (0 - 32)
  // Element 33: ql[33] low nibble 1, qh[1] bits 2-3 0: q 1, scale -6.
  assert_true(out[33] == 46.5f);  // 0.25 x -6 x (1 - 32)
  // Element 100: ql[36] = 0x24 high nibble 2, qh[4] bits 6-7 0: q 2,
  // scale -2.
  assert_true(out[100] == 15.0f);  // 0.25 x -2 x (2 - 32)
  // Element 150 (second half, l 22): ql[86] = 0x56 low nibble 6, qh[54] =
  // 0b110110 bits 0-1 2: q 38, scale 1.
  assert_true(out[150] == 1.5f);  // 0.25 x 1 x (38 - 32)
  // Element 255: ql[127] high nibble 7, qh[63] bits 6-7 0: q 7, scale 7.
  assert_true(out[255] == -43.75f);  // 0.25 x 7 x (7 - 32)
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

static void activations_within_half_a_step(void** state) {
  (void)state;
  float x[512];
  for (int i = 0; i < 512; ++i) x[i] = uniform(-3.0f, 3.0f);
  for (int i = 256; i < 288; ++i) x[i] = 0.0f;  // an all-zero Q8_0 block
  decode_block_q8_0_t q8_0[16];
  decode_quant_activations_q8_0(x, 512, q8_0);
  for (int i = 0; i < 512; ++i) {
    const float d = decode_f16_to_f32(q8_0[i / 32].d);
    // The codes are of d before its rounding to half: allow that too.
    assert_true(fabsf(x[i] - d * q8_0[i / 32].qs[i % 32]) <=
                d * (0.5f + 127.0f / 2048.0f) + 1e-7f);
  }
  // Every version, bit for bit the portable one.
  for (int simd = 0; simd <= (int)decode_simd_best(); ++simd) {
    decode_block_q8_0_t q8_0_simd[16];
    decode_block_q8_k_t q8_k_simd[2], q8_k_portable[2];
    decode_quant_activations_function(false, (decode_simd_t)simd)(x, 512,
                                                                  q8_0_simd);
    assert_memory_equal(q8_0_simd, q8_0, sizeof(q8_0));
    decode_quant_activations_function(true, (decode_simd_t)simd)(x, 512,
                                                                 q8_k_simd);
    decode_quant_activations_q8_k(x, 512, q8_k_portable);
    assert_memory_equal(q8_k_simd, q8_k_portable, sizeof(q8_k_simd));
  }
  decode_block_q8_k_t q8_k[2];
  decode_quant_activations_q8_k(x, 512, q8_k);
  for (int b = 0; b < 2; ++b) {
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += q8_k[b].qs[16 * j + i];
      assert_int_equal(q8_k[b].bsums[j], sum);
    }
    for (int i = 0; i < 256; ++i) {
      assert_true(fabsf(x[256 * b + i] - q8_k[b].d * q8_k[b].qs[i]) <=
                  q8_k[b].d * 0.5001f);
    }
  }
}

//===----------------------------------------------------------------------===//
// Dot products
//===----------------------------------------------------------------------===//

// Scales worth trying: 0, the smallest subnormal, small, 1, the largest
// half, and negative ones.
static const uint16_t kScales[] = {0x0000, 0x0001, 0x0400, 0x3C00,
                                   0x7BFF, 0xBC00, 0xFBFF, 0x8001};

static uint16_t random_scale(void) {
  // Half the time a special one, else an ordinary positive or negative.
  if (next_random() & 1) {
    return kScales[next_random() % (sizeof(kScales) / sizeof(kScales[0]))];
  }
  return decode_f32_to_f16(uniform(-0.05f, 0.05f));
}

// |count| random blocks of |dtype| at |out|.
static void random_blocks(decode_dtype_t dtype, uint32_t count, void* out) {
  uint8_t* bytes = (uint8_t*)out;
  const uint32_t size = decode_dtype_block_bytes(dtype);
  for (uint32_t i = 0; i < count * size; ++i) bytes[i] = (uint8_t)next_random();
  for (uint32_t b = 0; b < count; ++b) {
    switch (dtype) {
      case DECODE_DTYPE_Q8_0:
        ((decode_block_q8_0_t*)out)[b].d = random_scale();
        break;
      case DECODE_DTYPE_Q4_0:
        ((decode_block_q4_0_t*)out)[b].d = random_scale();
        break;
      case DECODE_DTYPE_Q4_1:
        ((decode_block_q4_1_t*)out)[b].d = random_scale();
        ((decode_block_q4_1_t*)out)[b].m = random_scale();
        break;
      case DECODE_DTYPE_Q5_0:
        ((decode_block_q5_0_t*)out)[b].d = random_scale();
        break;
      case DECODE_DTYPE_Q5_1:
        ((decode_block_q5_1_t*)out)[b].d = random_scale();
        ((decode_block_q5_1_t*)out)[b].m = random_scale();
        break;
      case DECODE_DTYPE_Q4_K:
        ((decode_block_q4_k_t*)out)[b].d = random_scale();
        ((decode_block_q4_k_t*)out)[b].dmin = random_scale();
        break;
      case DECODE_DTYPE_Q5_K:
        ((decode_block_q5_k_t*)out)[b].d = random_scale();
        ((decode_block_q5_k_t*)out)[b].dmin = random_scale();
        break;
      case DECODE_DTYPE_Q6_K:
        ((decode_block_q6_k_t*)out)[b].d = random_scale();
        break;
      default:
        break;
    }
  }
}

// The activations' values as the products see them.
static void dequantize_activations(decode_dtype_t dtype, const void* blocks,
                                   uint32_t n, double* out) {
  for (uint32_t i = 0; i < n; ++i) {
    if (decode_quant_uses_q8_k(dtype)) {
      const decode_block_q8_k_t* b =
          (const decode_block_q8_k_t*)blocks + i / 256;
      out[i] = (double)b->d * b->qs[i % 256];
    } else {
      const decode_block_q8_0_t* b =
          (const decode_block_q8_0_t*)blocks + i / 32;
      out[i] = (double)decode_f16_to_f32(b->d) * b->qs[i % 32];
    }
  }
}

static void dot_products_match_reference(void** state) {
  (void)state;
  enum { kMaxBlocks = 9, kMaxElements = kMaxBlocks * 256 };
  static uint8_t weights[kMaxBlocks * 292];
  static decode_block_q8_0_t q8_0[kMaxElements / 32];
  static decode_block_q8_k_t q8_k[kMaxBlocks];
  static float x[kMaxElements];
  static float w[kMaxElements];
  static double a[kMaxElements];
  const decode_simd_t best = decode_simd_best();
  int compared[DECODE_SIMD_COUNT] = {0};
  for (size_t t = 0; t < sizeof(kBlockTypes) / sizeof(kBlockTypes[0]); ++t) {
    const decode_dtype_t dtype = kBlockTypes[t];
    const uint32_t block = decode_dtype_block_elements(dtype);
    for (int trial = 0; trial < 200; ++trial) {
      const uint32_t blocks = 1 + (uint32_t)(next_random() % kMaxBlocks);
      const uint32_t n = blocks * block;
      random_blocks(dtype, blocks, weights);
      // Activations of every size: some blocks tiny, some large, some 0.
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t kind = (uint32_t)((i / 32 + trial) % 4);
        x[i] = kind == 0 ? 0.0f
                         : uniform(-1.0f, 1.0f) * (kind == 1   ? 1e-3f
                                                   : kind == 2 ? 1.0f
                                                               : 50.0f);
      }
      const void* activations = q8_0;
      if (decode_quant_uses_q8_k(dtype)) {
        decode_quant_activations_q8_k(x, n, q8_k);
        activations = q8_k;
      } else {
        decode_quant_activations_q8_0(x, n, q8_0);
      }
      decode_quant_dequantize(dtype, weights, n, w);
      dequantize_activations(dtype, activations, n, a);
      double expected = 0.0, magnitude = 0.0;
      for (uint32_t i = 0; i < n; ++i) {
        expected += (double)w[i] * a[i];
        magnitude += fabs((double)w[i] * a[i]);
      }
      for (int simd = 0; simd <= (int)best; ++simd) {
        decode_quant_dot_fn_t dot =
            decode_quant_dot_function(dtype, (decode_simd_t)simd);
        assert_non_null(dot);
        const double got = dot(weights, activations, n);
        // Float sums of up to 2304 products in another order, and Q4_K's
        // and Q5_K's difference of two float terms (Q4_1's and Q5_1's
        // sum of two): a few units of float's last place of the products'
        // total magnitude.
        if (!(fabs(got - expected) <= 1e-5 * magnitude + 1e-30)) {
          fail_msg(
              "%s, %u blocks, version %d (trial %d): %.9g, expected "
              "%.9g (magnitude %.9g)",
              decode_dtype_name(dtype), blocks, simd, trial, got, expected,
              magnitude);
        }
        ++compared[simd];
      }
    }
  }
  for (int simd = 0; simd <= (int)best; ++simd) {
    printf("version %d: %d products compared\n", simd, compared[simd]);
  }
}

// The four-column products (the batch's GEMM) against the one-column
// product of the same version, column by column: bit for bit, since the
// batch's results are the token path's exactly (decode_batch_test.c).
// Every selection the CPU allows (AVX2's on an AVX-512 CPU too: where the
// AVX-512 one-column product is chosen, a type has no four-column one).
static void four_column_products_match(void** state) {
  (void)state;
  enum { kMaxBlocks = 9, kMaxElements = kMaxBlocks * 256 };
  static uint8_t weights[kMaxBlocks * 292];
  static decode_block_q8_0_t q8_0[4][kMaxElements / 32];
  static decode_block_q8_k_t q8_k[4][kMaxBlocks];
  static float x[kMaxElements];
  int compared = 0;
  for (int simd = (int)decode_simd_best(); simd > DECODE_SIMD_PORTABLE;
       --simd) {
    decode_quant_dot_select((decode_simd_t)simd);
    for (size_t t = 0; t < sizeof(kBlockTypes) / sizeof(kBlockTypes[0]);
         ++t) {
      const decode_dtype_t dtype = kBlockTypes[t];
      const decode_quant_dot4_fn_t dot4 = decode_quant_dot4(dtype);
      if (!dot4) continue;
      const uint32_t block = decode_dtype_block_elements(dtype);
      for (int trial = 0; trial < 100; ++trial) {
        const uint32_t blocks = 1 + (uint32_t)(next_random() % kMaxBlocks);
        const uint32_t n = blocks * block;
        random_blocks(dtype, blocks, weights);
        const void* activations[4];
        for (int c = 0; c < 4; ++c) {
          for (uint32_t i = 0; i < n; ++i) {
            x[i] = uniform(-1.0f, 1.0f) * (c == 3 ? 50.0f : 1.0f);
          }
          if (decode_quant_uses_q8_k(dtype)) {
            decode_quant_activations(dtype, x, n, q8_k[c]);
            activations[c] = q8_k[c];
          } else {
            decode_quant_activations(dtype, x, n, q8_0[c]);
            activations[c] = q8_0[c];
          }
        }
        float got[4];
        dot4(weights, activations, n, got);
        for (int c = 0; c < 4; ++c) {
          const float expected =
              decode_quant_dot(dtype, weights, activations[c], n);
          if (memcmp(&got[c], &expected, sizeof(float)) != 0) {
            fail_msg("%s, %u blocks, column %d (trial %d): %.9g, one column "
                     "%.9g",
                     decode_dtype_name(dtype), blocks, c, trial,
                     (double)got[c], (double)expected);
          }
          ++compared;
        }
      }
    }
  }
  decode_quant_dot_select(decode_simd_best());
  printf("%d four-column products compared\n", compared);
}

//===----------------------------------------------------------------------===//
// Quantizing weights
//===----------------------------------------------------------------------===//

static void quantize_round_trip(void** state) {
  (void)state;
  // The largest error per type, as a fraction of the block's largest
  // magnitude: Q8_0 half a step of amax / 127; Q4_0 a step of amax / 8
  // (the side away from the largest rounds into 7 steps); Q4_K a step of
  // its sub-block's range / 15 with the scale and min rounded to 6 bits;
  // Q6_K a step of amax / 32 with its scale rounded to 8 bits of the
  // largest (a scale of a few units is off by up to half a unit, so its
  // codes by up to an eighth or more: measured, 1 / 32 of the largest).
  // Q5_0 as Q4_0 with twice the steps: a step of amax / 16. Q4_1 and Q5_1
  // half a step of the block's range / 15 (/ 31), the range at most 2
  // amax: amax / 15 (/ 31), and 1e-3 for d and m rounded to half. Q5_K
  // as Q4_K over 31 steps: half a step of its sub-block's range / 31, or
  // where the 6-bit scale rounds down, up to 31 half units of d (d =
  // the largest scale / 63) at the top of the range, amax / 63, plus
  // half a unit of dmin, amax / 126: under 2 / 31 in all.
  const struct {
    decode_dtype_t dtype;
    float bound;
  } kBounds[] = {{DECODE_DTYPE_Q8_0, 0.5f / 127.0f + 1e-3f},
                 {DECODE_DTYPE_Q4_0, 1.0f / 8.0f + 1e-3f},
                 {DECODE_DTYPE_Q4_1, 1.0f / 15.0f + 1e-3f},
                 {DECODE_DTYPE_Q5_0, 1.0f / 16.0f + 1e-3f},
                 {DECODE_DTYPE_Q5_1, 1.0f / 31.0f + 1e-3f},
                 {DECODE_DTYPE_Q4_K, 2.0f / 15.0f},
                 {DECODE_DTYPE_Q5_K, 2.0f / 31.0f},
                 {DECODE_DTYPE_Q6_K, 1.0f / 16.0f}};
  float x[1024], y[1024];
  uint8_t blocks[4 * 292];
  for (size_t k = 0; k < sizeof(kBounds) / sizeof(kBounds[0]); ++k) {
    for (int trial = 0; trial < 20; ++trial) {
      for (int i = 0; i < 1024; ++i) x[i] = uniform(-0.1f, 0.1f);
      if (trial == 1) memset(x, 0, sizeof(x));
      decode_quant_quantize(kBounds[k].dtype, x, 1024, blocks);
      decode_quant_dequantize(kBounds[k].dtype, blocks, 1024, y);
      float amax = 0.0f, error = 0.0f;
      for (int i = 0; i < 1024; ++i) {
        amax = fmaxf(amax, fabsf(x[i]));
        error = fmaxf(error, fabsf(x[i] - y[i]));
      }
      if (error > kBounds[k].bound * amax) {
        fail_msg("%s: error %g of a largest %g",
                 decode_dtype_name(kBounds[k].dtype), (double)error,
                 (double)amax);
      }
    }
  }
}

// Q4_0, Q8_0, Q4_K and Q6_K rows interleaved by eight against the plain
// rows.
static void interleaved_rows_match_plain(void** state) {
  (void)state;
  enum {
    kMaxElements = 300 * 32,
    // Past 64 rows: the 512-bit products take 8 groups of eight a pass.
    kRows = 72,
    kColumns = DECODE_X8_COLUMNS
  };
  static uint8_t plain[kRows * kMaxElements / 32 * 34];
  static uint8_t packed[sizeof(plain)];
  static uint8_t back[8 * kMaxElements / 32 * 34];
  static uint8_t scratch[sizeof(back)];
  static decode_block_q8_0_t q8_0[kColumns][kMaxElements / 32];
  static decode_block_q8_k_t q8_k[kColumns][kMaxElements / 256];
  static float x[kMaxElements];
  static float w[kMaxElements];
  static double a[kColumns][kMaxElements];
  // (type, blocks of a row): 1 to 300 blocks of 32 (past Q4_0's chunk of
  // 64 blocks, several times), 1 to 37 super-blocks.
  const struct {
    decode_dtype_t dtype;
    uint32_t blocks;
  } cases[] = {{DECODE_DTYPE_Q4_0, 1},  {DECODE_DTYPE_Q4_0, 7},
               {DECODE_DTYPE_Q4_0, 24}, {DECODE_DTYPE_Q4_0, 257},
               {DECODE_DTYPE_Q4_0, 300}, {DECODE_DTYPE_Q8_0, 1},
               {DECODE_DTYPE_Q8_0, 2},  {DECODE_DTYPE_Q8_0, 24},
               {DECODE_DTYPE_Q8_0, 300}, {DECODE_DTYPE_Q4_K, 1},
               {DECODE_DTYPE_Q4_K, 2},  {DECODE_DTYPE_Q4_K, 3},
               {DECODE_DTYPE_Q4_K, 37}, {DECODE_DTYPE_Q6_K, 1},
               {DECODE_DTYPE_Q6_K, 3},  {DECODE_DTYPE_Q6_K, 20}};
  int compared = 0;
  for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); ++t) {
    const decode_dtype_t dtype = cases[t].dtype;
    const uint32_t x8 = decode_x8_form(dtype);
    assert_true(decode_dtype_is_x8(x8));
    const bool k = decode_quant_uses_q8_k(dtype);
    const uint32_t cols = cases[t].blocks * decode_dtype_block_elements(dtype);
    assert_true(cols <= kMaxElements);
    // 8 to 24 rows, and 72 for every third case.
    const uint32_t rows =
        t % 3 == 2 ? kRows : 8 * (1 + (uint32_t)(next_random() % 3));
    const uint64_t row_bytes = decode_dtype_bytes(dtype, cols);
    random_blocks(dtype, rows * cases[t].blocks, plain);
    memcpy(packed, plain, rows * row_bytes);
    decode_x8_pack(x8, packed, rows, cols, scratch);
    for (uint32_t g = 0; g < rows / 8; ++g) {
      decode_x8_unpack(x8, packed + g * 8 * row_bytes, cols, back);
      assert_memory_equal(back, plain + g * 8 * row_bytes, 8 * row_bytes);
    }
    const void* activations[kColumns];
    for (int c = 0; c < kColumns; ++c) {
      for (uint32_t i = 0; i < cols; ++i) {
        x[i] = uniform(-1.0f, 1.0f) * (c == 3 ? 50.0f : 1.0f);
      }
      if (k) {
        decode_quant_activations_q8_k(x, cols, q8_k[c]);
        activations[c] = q8_k[c];
      } else {
        decode_quant_activations_q8_0(x, cols, q8_0[c]);
        activations[c] = q8_0[c];
      }
      dequantize_activations(dtype, activations[c], cols, a[c]);
    }
    float expected[kColumns * kRows];
    decode_x8_dot_function(x8, DECODE_SIMD_PORTABLE)(
        packed, cols, 0, rows, activations, kColumns, expected, kRows);
    for (uint32_t r = 0; r < rows; ++r) {
      decode_quant_dequantize(dtype, plain + r * row_bytes, cols, w);
      for (uint32_t c = 0; c < kColumns; ++c) {
        // The plain product in double, as dot_products_match_reference.
        double sum = 0.0, magnitude = 0.0;
        for (uint32_t i = 0; i < cols; ++i) {
          sum += (double)w[i] * a[c][i];
          magnitude += fabs((double)w[i] * a[c][i]);
        }
        const double got = expected[c * kRows + r];
        if (!(fabs(got - sum) <= 1e-5 * magnitude + 1e-30)) {
          fail_msg("%s x8, %u elements, row %u, column %u: %.9g, expected "
                   "%.9g (magnitude %.9g)",
                   decode_dtype_name(dtype), cols, r, c, got, sum,
                   magnitude);
        }
      }
    }
    // Every version, every column count, from every group: the portable
    // version's bits.
    for (int simd = 0; simd <= (int)decode_simd_best(); ++simd) {
      const decode_x8_dot_fn_t dot =
          decode_x8_dot_function(x8, (decode_simd_t)simd);
      assert_non_null(dot);
      for (uint32_t columns = 1; columns <= kColumns; ++columns) {
        for (uint32_t first = 0; first < rows; first += 8) {
          const uint32_t count = rows - first;
          float got[kColumns * kRows];
          dot(packed, cols, first, count, activations + (kColumns - columns),
              columns, got, kRows);
          for (uint32_t c = 0; c < columns; ++c) {
            for (uint32_t r = 0; r < count; ++r) {
              const float want =
                  expected[(c + kColumns - columns) * kRows + first + r];
              if (memcmp(&got[c * kRows + r], &want, sizeof(float)) != 0) {
                fail_msg("%s x8 version %d, %u elements, %u columns, row "
                         "%u: %.9g, portable %.9g",
                         decode_dtype_name(dtype), simd, cols, columns,
                         first + r, (double)got[c * kRows + r], (double)want);
              }
              ++compared;
            }
          }
        }
      }
    }
  }
  printf("x8: %d products compared\n", compared);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(q8_0_by_hand),
      cmocka_unit_test(q4_0_by_hand),
      cmocka_unit_test(q4_1_by_hand),
      cmocka_unit_test(q5_0_by_hand),
      cmocka_unit_test(q5_1_by_hand),
      cmocka_unit_test(q4_k_by_hand),
      cmocka_unit_test(q5_k_by_hand),
      cmocka_unit_test(q6_k_by_hand),
      cmocka_unit_test(activations_within_half_a_step),
      cmocka_unit_test(dot_products_match_reference),
      cmocka_unit_test(four_column_products_match),
      cmocka_unit_test(quantize_round_trip),
      cmocka_unit_test(interleaved_rows_match_plain),
  };
  return cmocka_run_group_tests_name("decode.quant", tests, NULL, NULL);
}
