// Quantized GGUF weights kept packed as ordinary kiln arrays (uint32 words + float32 block
// scales), and the lazy dequantization that kernels fuse into the matmul reading them.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/quantized_matmul.h"
#include "formats/ggml_types.h"
#include "frontend/array.h"
#include "frontend/pytree.h"

namespace kiln::models {

// The kiln layout of one 2-d GGUF tensor of `rows` rows of `cols` values (ggml dims
// [cols, rows]), computed on the host from the file's blocks (a table per type in the .cpp):
// - `words`: the integer code of each value, 8 nibbles per uint32 (q4_0, q4_1, q4_K: value
//   8k+i of a row at bits 4i of the row's word k) or 4 bytes per word (q8_0: the int8 biased
//   by +128; q5_0 and q6_K: their 5- and 6-bit codes), reordered from ggml's interleavings;
// - one float32 `scales` entry per scale block (32 values; q6_K 16) and, for q4_1 and q4_K, a
//   `mins` entry: exactly the floats ggml's dequantize_row_* computes per block (d, or for the
//   K-quants d * sc and -(dmin * m), exact products of an f16 and a small integer).
// A value is then `scale * (q - offset)` (q4_0: 8, q5_0: 16, q6_K: 32, q8_0: 128) or
// `scale * q + min` (q4_1, q4_K): the float32 operations of ggml's dequantize_row_* in the
// same order, so every value is bit-exact (the products are exact, so FMA contraction cannot
// change them either).
// f32 and f16 tensors keep their values in `plain` (f16 as its bits, widened in the kernel).
struct PackedTensor {
  std::string name;
  formats::GgmlType type = formats::GgmlType::F32;
  int64_t rows = 0, cols = 0;
  std::vector<uint32_t> words;
  std::vector<float> scales, mins;
  std::vector<uint32_t> plain_bits;  // f32 bits, or f16 bits in the low half (one per value)
};

// True for the types pack_tensor accepts: F32, F16, Q4_0, Q4_1, Q5_0, Q8_0, Q4_K, Q6_K.
bool can_pack(formats::GgmlType type);

// Repacks `bytes` (whole blocks of `type`, rows * cols values) into the layout above. An
// unsupported type is a kiln::Error naming the tensor and its type.
PackedTensor pack_tensor(const std::string& name, formats::GgmlType type, int64_t rows,
                         int64_t cols, std::span<const uint8_t> bytes);

// The rows of `parts` one after the other, as one tensor named `name` (the fused q/k/v or
// gate/up projections of a layer: one matvec instead of several reading the same input).
// Each part is freed as soon as its rows are copied, so the host never holds two copies. A
// part of another type or row length than the first is a kiln::Error (the caller merges only
// siblings that match).
PackedTensor concat_rows(const std::string& name, std::vector<PackedTensor>&& parts);

// The value at (row, col) as the device computes it (host float32 arithmetic, same order):
// what the bit-exactness test compares with ggml's reference dequantization.
float packed_value(const PackedTensor& t, int64_t row, int64_t col);

// How a device holds the rows of packed arrays (Backend::prefers_contiguous_weight_rows):
// - Interleaved: in groups of G, the largest divisor of rows up to 16, so a kernel's adjacent
//   output rows (the CPU devices' SIMD lanes) read adjacent words at one column;
// - Contiguous (G = 1): each row's words one after the other, so one lane of a webgpu
//   matvec reads its row's neighbouring words as one 128-bit load.
// The values, and the order in which any kernel sums them, are the same in both.
// - IntDot: the layout of lax::quantized_matmul (backend/quantized_matmul.h: rows in groups
//   of 8, each row's 32 codes of a block k-contiguous, 4-bit or signed 8-bit), whose
//   integer-dot kernels the devices with that routine (cpu, native, wasm) run instead of the
//   float matvec: q4_1, q4_K (4-bit codes) and q4_0, q5_0, q8_0 (codes minus their offset
//   as int8). Other types (q6_K: 16-value scales; f32, f16) get
//   Interleaved. $KILN_LLM_INT_DOT=0 (or set_int_dot_matvecs(false), for Node, whose
//   environment Emscripten's getenv does not see) keeps every matrix on the float path.
enum class RowLayout { Interleaved, Contiguous, IntDot };
RowLayout row_layout_for(const std::string& device, int64_t rows);  // for a matrix of `rows` rows
void set_int_dot_matvecs(bool on);  // for weights uploaded from now on
bool int_dot_matvecs();

// A packed tensor on a device. `parts` is a Tree::Dict of its arrays ("q": words, "s":
// scales (one per block), "m": mins, each [rows / G, k, G] with rows interleaved in groups of
// G as RowLayout says, or "w": plain values [rows, cols] float32/float16), so weights can be
// jit arguments; type and sizes are static.
// In the IntDot layout `parts` holds "c" (codes), "d" (scales) and "n" (mins; float32 [0]
// for Int8 codes), the operands of lax::quantized_matmul, and `int_dot` is set.
struct QuantizedWeight {
  formats::GgmlType type = formats::GgmlType::F32;
  int64_t rows = 0, cols = 0;
  Tree parts;
  bool int_dot = false;
  QuantLayout quant = QuantLayout::Nibble4;  // int_dot only
};
// Onto the current default device, in its RowLayout (or the one given).
QuantizedWeight upload(const PackedTensor& t);
QuantizedWeight upload(const PackedTensor& t, RowLayout layout);

// The float32 matrix [rows, cols] as a lazy expression over `parts` (no kernel runs).
Array dequantize(const QuantizedWeight& w);

// Rows `ids` (int32 [n]) of the weight, dequantized lazily: float32 [n, cols] (embeddings).
Array dequantize_rows(const QuantizedWeight& w, const Array& ids);

// y = x @ W^T for x [..., cols]: [..., rows]. An IntDot weight is lax::quantized_matmul (x
// rounded to int16 per 32 values, integer block sums). Otherwise the dequantization is an elementwise expression
// of the broadcast packed words and scales, multiplied by the broadcast x and summed, so the
// lowering fuses it into the contraction's operand load: no kernel writes the f32 matrix.
// Differentiable in x (jvp/vjp/vmap come from the primitives it is made of).
Array quantized_linear(const Array& x, const QuantizedWeight& w);

}  // namespace kiln::models
