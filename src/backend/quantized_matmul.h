// The quantized_matmul routine (issue 19): y = x @ W^T with W in packed integer codes, the
// activation rows rounded to int16 per 32 values (int8 in a prefill rows kernel that says so)
// and each block summed exactly in integers.
// This header holds its definition (the C++ reference, the cpu device's lowering) and the
// layout every device reads; the SIMD kernels (native AVX2/SSE2, wasm SIMD128) compute the
// same floats bit for bit. docs/ARCHITECTURE.md, "Integer-dot matvec".
#pragma once
#include <cstdint>
#include <string>

namespace kiln {

// How a weight block's 32 codes are stored (per row, k-contiguous, 32 values per block):
// - Nibble4: 16 bytes, byte j holds value j (low nibble) and j + 16 (high), codes 0..15,
//   value = d * q + m (ggml's q4_1 and q4_K; q4_0 with m = -8 d);
// - Int8: 32 signed bytes, value = d * q (q8_0; q5_0 with its codes minus 16); no mins.
enum class QuantLayout : uint8_t { Nibble4, Int8 };

// Rows are packed in groups of kQuantRowGroup (the AVX2 and wasm kernels' output rows per
// pass; SSE2 runs each group as two halves). Per group and block the group's rows' codes
// lie side by side (`codes`: uint32 [groups, k / 32, 8, words]), and their scales and mins
// as one vector each (`d`, `m`: float32 [groups, k / 32, 8]). Rows past `rows` in the last
// group are zero (codes, scales and mins), and never written to the output.
inline constexpr int kQuantRowGroup = 8;
inline constexpr int kQuantBlock = 32;
constexpr int64_t quant_block_words(QuantLayout l) { return l == QuantLayout::Nibble4 ? 4 : 8; }
constexpr bool quant_has_mins(QuantLayout l) { return l == QuantLayout::Nibble4; }
constexpr int64_t quant_groups(int64_t rows) { return (rows + kQuantRowGroup - 1) / kQuantRowGroup; }

// One call: x [m, k] float32 (k a multiple of 32) against `rows` weight rows: out [m, rows].
struct QuantMatmulShape {
  QuantLayout layout = QuantLayout::Nibble4;
  int64_t m = 0, k = 0, rows = 0;
};


// An activation row rounded per 32 values: d = amax / max_code, q = round-to-nearest-even of
// x / d (x * (1 / d), 0 where d is 0, clamped to +-max_code), sx = d * float(sum of the
// block's q). Shared by every device's kernel, so the rounding is one function (SSE2 on
// x86-64, scalar elsewhere: the same values). max_code is 32767 (the definition) or 127: the
// int8 rounding of native's VNNI prefill kernels (llama.cpp's q8_0/q8_1 activations: the same
// d, codes and s), which take u8 x s8 products at twice vpmaddwd's rate.
inline constexpr int16_t kActMaxInt16 = 32767, kActMaxInt8 = 127;
void quantize_activation_row(const float* x, int64_t k, int16_t* q, float* dx, float* sx,
                             int16_t max_code = kActMaxInt16);

// The definition for groups [g0, g1) of one quantized activation row: per output row, blocks
// in order, acc = acc + ((d_w * d_x) * float(isum) + m_w * s_x) (the mins term only for
// Nibble4), isum the exact int32 sum of code * q over the block.
void quantized_matvec_reference(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                float* out);

// A kernel of the signature above (a device's SIMD form), and the whole call over it: every
// row of x quantized once, then `groups(g0, g1)` run over the output groups (a device's
// thread pool splits them; nullptr runs them all on this thread).
using QuantMatvecFn = void (*)(const QuantMatmulShape&, const int16_t*, const float*, const float*, const uint32_t*,
                               const float*, const float*, int64_t, int64_t, float*);
struct QuantMatmulArgs {
  const float* x;
  const uint32_t* codes;
  const float* d;
  const float* mins;  // unused for Int8
  float* out;
};
// The operands (0 x, 1 codes, 2 d, 3 mins, 4 out) of a device's buffers as typed arguments;
// throws unless each buffer's `bytes` hold what the shape needs (the check before a kernel
// reads raw memory).
QuantMatmulArgs quantized_matmul_args(const QuantMatmulShape& s, uint8_t* const data[5], const int64_t bytes[5],
                                      const std::string& device);
// A device's way to run fn(fn_ctx, g0, g1) over ranges covering [0, groups) (its thread pool);
// nullptr: the whole range on the calling thread.
using GroupSplitter = void (*)(void* ctx, int64_t groups, void (*fn)(void*, int64_t, int64_t), void* fn_ctx);
// A kernel for two activation rows at once (the next row's xq, dx, sx and out k, k / 32,
// k / 32 and rows elements further on), each row's outputs those of QuantMatvecFn: a device
// whose kernel widens each weight code once for both rows gives one (wasm; prefill).
using QuantMatvec2Fn = QuantMatvecFn;
// A kernel for all s.m activation rows at once (xq, dx, sx and out row after row: k, k / 32,
// k / 32 and rows elements apart), each row's outputs those of QuantMatvecFn: a device whose
// kernel widens each weight group's codes once for every row gives one (native AVX2;
// prefill). The driver hands it rows in chunks whose int16 codes stay in L2.
using QuantMatmulRowsFn = QuantMatvecFn;
// A rows kernel and the activation rounding it reads: kActMaxInt8 for the VNNI kernels, whose
// xq holds codes within +-127 (the definition with max_code 127 in quantize_activation_row,
// then quantized_matvec_reference's formula: that is what they equal bit for bit). Calls with
// one x row (decode) keep the int16 rounding and the matvec.
struct QuantRowsKernel {
  // From a kernel alone: one that reads the definition's int16 rounding (no kernel: none).
  QuantRowsKernel(QuantMatmulRowsFn f = nullptr, int16_t max = kActMaxInt16) : fn(f), max_code(max) {}
  QuantMatmulRowsFn fn;
  int16_t max_code;
};
// lax::quantized_matmul on a host device: each activation row rounded (rows.max_code where the
// rows kernel runs, else the definition's int16), then the row groups through `split` with
// `rows` for several rows at once where the device has it, else `pair` for two, else `kernel`
// per row.
void run_quantized_matmul(const QuantMatmulShape& s, const QuantMatmulArgs& a, QuantMatvecFn kernel,
                          GroupSplitter split = nullptr, void* split_ctx = nullptr, QuantMatvec2Fn pair = nullptr,
                          QuantRowsKernel rows = {});

}  // namespace kiln
