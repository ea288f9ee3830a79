// GGUF blocks repacked into uint32 words and float32 scales at load time, and the lazy
// dequantization expressions (shift, mask, convert, scale) that matmuls fuse.
#include "models/quantized_weights.h"

#include <cstring>

#include "formats/ggml_blocks.h"
#include "ir/alu_op.h"
#include "ir/schedule.h"
#include "library/array_args.h"
#include "library/numpy.h"

namespace kiln::models {

namespace np = kiln::numpy;
using formats::GgmlType;

namespace {

constexpr int64_t kBlock = 32;  // values per block of q4_0, q4_1, q8_0

uint16_t read_u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

// Bits per packed value (4 or 8), or 0 for the plain types.
int bits_of(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0: case GgmlType::Q4_1: return 4;
    case GgmlType::Q8_0: return 8;
    default: return 0;
  }
}

// The value subtracted from q before scaling (q4_0: 8, q8_0: the +128 bias), 0 for q4_1.
float offset_of(GgmlType type) {
  return type == GgmlType::Q4_0 ? 8.0f : type == GgmlType::Q8_0 ? 128.0f : 0.0f;
}

// Value v (0..31) of a q4 block's 16 bytes: ggml keeps v and v + 16 in one byte.
uint32_t q4_value(const uint8_t* qs, int v) {
  return v < 16 ? uint32_t(qs[v] & 15) : uint32_t(qs[v - 16] >> 4);
}

void pack_blocks(PackedTensor& t, std::span<const uint8_t> bytes) {
  const int64_t blocks = t.rows * t.cols / kBlock;
  const int64_t block_bytes = formats::ggml_type_info(t.type).block_bytes;
  const bool q4 = bits_of(t.type) == 4, with_min = t.type == GgmlType::Q4_1;
  t.scales.resize(size_t(blocks));
  if (with_min) t.mins.resize(size_t(blocks));
  t.words.assign(size_t(blocks * (q4 ? 4 : 8)), 0);
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* blk = bytes.data() + b * block_bytes;
    t.scales[size_t(b)] = half_to_float(read_u16(blk));
    if (with_min) t.mins[size_t(b)] = half_to_float(read_u16(blk + 2));
    const uint8_t* qs = blk + (with_min ? 4 : 2);
    uint32_t* out = t.words.data() + b * (q4 ? 4 : 8);
    for (int v = 0; v < kBlock; ++v) {
      if (q4)
        out[v / 8] |= q4_value(qs, v) << (4 * (v % 8));
      else
        out[v / 4] |= uint32_t(uint8_t(int(int8_t(qs[v])) + 128)) << (8 * (v % 4));
    }
  }
}

// Rows of a packed array stored interleaved in groups of this many: element (r, c) of a
// [rows, k] array sits at ((r / G) * k + c) * G + r % G. A matvec kernel computes
// consecutive output rows side by side (its SIMD lanes), and with this order their words
// and scales at one column are adjacent in memory: vector loads instead of gathers.
int64_t interleave_of(int64_t rows) { return largest_divisor(rows, 16); }

// [rows, k] host values in the interleaved order above.
template <typename T>
std::vector<T> interleave_rows(const std::vector<T>& v, int64_t rows) {
  const int64_t g = interleave_of(rows), k = int64_t(v.size()) / rows;
  std::vector<T> out(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c) out[size_t(((r / g) * k + c) * g + r % g)] = v[size_t(r * k + c)];
  return out;
}

// The logical [rows, k] view of an interleaved device array [rows / G, k, G].
Array deinterleave_rows(const Array& a) {
  const int64_t groups = a.shape(0), k = a.shape(1), g = a.shape(2);
  return np::reshape(np::transpose(a, std::vector<int>{0, 2, 1}), {groups * g, k});
}

// Unpacks words [..., nb, wpb] with scales (and mins) [..., nb] into float32 [..., nb * 32].
// Only elementwise ops and broadcasts of the operands' loads: the caller's reduction fuses it.
Array unpack(GgmlType type, const Array& words, const Array& scales, const Array* mins) {
  const int bits = bits_of(type);
  // The shift of each value of a word as an index expression (not a loaded constant), so
  // the code generators see its range [0, 32) and emit plain shifts.
  const Array shifts = np::multiply(np::detail::iota({32 / bits}, 0, words.device()),
                                    Array(bits)).astype(DType::Uint32);
  Array q = np::bitwise_and(np::right_shift(np::expand_dims(words, -1), shifts),
                            Array(int((1u << bits) - 1)));
  const Array qf = q.astype(DType::Float32);
  const Array s = np::expand_dims(scales, {-1, -2});
  Array values = type == GgmlType::Q4_1 ? qf * s + np::expand_dims(*mins, {-1, -2})
                                        : (qf - Array(offset_of(type))) * s;
  Shape shape = words.shape();
  shape.pop_back();
  shape.back() *= kBlock;
  return np::reshape(values, shape);
}

// Words [lead..., nb, wpb] and scales [lead..., nb] of `parts`, each first mapped by `view`.
template <typename View>
Array unpack_viewed(const QuantizedWeight& w, const View& view) {
  const Tree::Dict& d = w.parts.dict();
  const int64_t nb = w.cols / kBlock, wpb = bits_of(w.type) == 4 ? 4 : 8;
  auto part = [&](const char* name) { return deinterleave_rows(d.at(name).array()); };
  const Array words = view(part("q"), Shape{nb, wpb});
  const Array scales = view(part("s"), Shape{nb});
  if (w.type != GgmlType::Q4_1) return unpack(w.type, words, scales, nullptr);
  const Array mins = view(part("m"), Shape{nb});
  return unpack(w.type, words, scales, &mins);
}

}  // namespace

bool can_pack(GgmlType type) {
  return type == GgmlType::F32 || type == GgmlType::F16 || bits_of(type) != 0;
}

PackedTensor pack_tensor(const std::string& name, GgmlType type, int64_t rows, int64_t cols,
                         std::span<const uint8_t> bytes) {
  if (!can_pack(type))
    fail("load_weights", "tensor '", name, "' has type ", formats::ggml_type_name(type),
         ", which kiln cannot run yet (supported: f32, f16, q4_0, q4_1, q8_0)");
  if (rows <= 0 || cols <= 0 || (bits_of(type) && cols % kBlock != 0))
    fail("load_weights", "tensor '", name, "' has ", rows, " rows of ", cols,
         " values, expected whole 32-value blocks per row");
  if (int64_t(bytes.size()) != formats::ggml_bytes_for(type, rows * cols, "load_weights"))
    fail("load_weights", "tensor '", name, "' holds ", bytes.size(), " bytes, its type and dims need ",
         formats::ggml_bytes_for(type, rows * cols, "load_weights"));
  PackedTensor t{name, type, rows, cols, {}, {}, {}, {}};
  if (type == GgmlType::F32) {
    t.plain_bits.resize(size_t(rows * cols));
    std::memcpy(t.plain_bits.data(), bytes.data(), bytes.size());
  } else if (type == GgmlType::F16) {
    t.plain_bits.resize(size_t(rows * cols));
    for (size_t i = 0; i < t.plain_bits.size(); ++i) t.plain_bits[i] = read_u16(&bytes[2 * i]);
  } else {
    pack_blocks(t, bytes);
  }
  return t;
}

float packed_value(const PackedTensor& t, int64_t row, int64_t col) {
  const int64_t i = row * t.cols + col;
  if (t.type == GgmlType::F32) {
    float f;
    std::memcpy(&f, &t.plain_bits[size_t(i)], 4);
    return f;
  }
  if (t.type == GgmlType::F16) return half_to_float(uint16_t(t.plain_bits[size_t(i)]));
  const int bits = bits_of(t.type), per_word = 32 / bits;
  const uint32_t q = (t.words[size_t(i / per_word)] >> (bits * (i % per_word))) & ((1u << bits) - 1);
  const float s = t.scales[size_t(i / kBlock)];
  if (t.type == GgmlType::Q4_1) return float(q) * s + t.mins[size_t(i / kBlock)];
  return (float(q) - offset_of(t.type)) * s;
}

QuantizedWeight upload(const PackedTensor& t) {
  QuantizedWeight w{t.type, t.rows, t.cols, {}};
  Tree::Dict parts;
  if (t.type == GgmlType::F32) {
    parts["w"] = np::array(t.plain_bits.data(), {t.rows, t.cols}, DType::Float32);
  } else if (t.type == GgmlType::F16) {
    std::vector<uint16_t> half(t.plain_bits.begin(), t.plain_bits.end());
    parts["w"] = np::array(half.data(), {t.rows, t.cols}, DType::Float16);
  } else {
    const int64_t per_word = 32 / bits_of(t.type), nb = t.cols / kBlock, g = interleave_of(t.rows);
    auto put = [&](const auto& v, int64_t k) {
      return np::array(interleave_rows(v, t.rows), {t.rows / g, k, g});
    };
    parts["q"] = put(t.words, t.cols / per_word);
    parts["s"] = put(t.scales, nb);
    if (t.type == GgmlType::Q4_1) parts["m"] = put(t.mins, nb);
  }
  w.parts = Tree(std::move(parts));
  return w;
}

Array dequantize(const QuantizedWeight& w) {
  if (!bits_of(w.type)) return w.parts["w"].array().astype(DType::Float32);
  return unpack_viewed(w, [&](const Array& a, const Shape& tail) {
    Shape s{w.rows};
    s.insert(s.end(), tail.begin(), tail.end());
    return np::reshape(a, s);
  });
}

Array dequantize_rows(const QuantizedWeight& w, const Array& ids) {
  const int64_t n = ids.shape(0);
  if (!bits_of(w.type)) return np::take(w.parts["w"].array(), ids, 0).astype(DType::Float32);
  return unpack_viewed(w, [&](const Array& a, const Shape& tail) {
    Shape s{n};
    s.insert(s.end(), tail.begin(), tail.end());
    return np::reshape(np::take(a, ids, 0), s);
  });
}

Array quantized_linear(const Array& x, const QuantizedWeight& w) {
  if (x.ndim() < 1 || x.shape(-1) != w.cols)
    fail("quantized_linear", "x has shape ", shape_str(x.shape()), ", expected [..., ", w.cols, "]");
  Shape lead(x.shape().begin(), x.shape().end() - 1);
  int64_t m = 1;
  for (int64_t d : lead) m *= d;
  // The packed operands (plain loads) are broadcast over the rows of x first, so the
  // dequantization is an expression at the contraction's shape, recomputed per load.
  auto over_rows = [&](const Array& a, const Shape& tail) {
    Shape s{1, w.rows}, big{m, w.rows};
    s.insert(s.end(), tail.begin(), tail.end());
    big.insert(big.end(), tail.begin(), tail.end());
    return np::broadcast_to(np::reshape(a, s), big);
  };
  Array weight = bits_of(w.type)
                     ? unpack_viewed(w, over_rows)
                     : over_rows(w.parts["w"].array(), Shape{w.cols}).astype(DType::Float32);
  const Array xs = np::reshape(x, {m, 1, w.cols});
  Array y = np::sum(xs * weight, -1);
  lead.push_back(w.rows);
  return np::reshape(y, lead);
}

}  // namespace kiln::models
