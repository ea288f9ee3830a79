// GGUF blocks repacked into uint32 words and float32 scales at load time, and the lazy
// dequantization expressions (shift, mask, convert, scale) that matmuls fuse.
#include "models/quantized_weights.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "backend/backend.h"
#include "formats/ggml_blocks.h"
#include "ir/alu_op.h"
#include "ir/schedule.h"
#include "library/array_args.h"
#include "library/numpy.h"
#include "library/quantized_matmul.h"

namespace kiln::models {

namespace np = kiln::numpy;
using formats::GgmlType;

namespace {

uint16_t read_u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t read_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The codes of one ggml block: q[v] for each of its values and, per scale block, the
// float32 scale (and min) that ggml's dequantize_row_* computes before it touches a value.
using CodesOf = void (*)(const uint8_t* blk, uint8_t* q, float* scales, float* mins);

// The 32 values of a legacy block's 16 nibble bytes: value v is byte v's low nibble and
// value v + 16 its high one.
void nibbles(const uint8_t* qs, uint8_t* q) {
  for (int v = 0; v < 16; ++v) {
    q[v] = qs[v] & 15;
    q[v + 16] = qs[v] >> 4;
  }
}

void codes_q4_0(const uint8_t* b, uint8_t* q, float* s, float*) {
  s[0] = half_to_float(read_u16(b));
  nibbles(b + 2, q);
}

void codes_q4_1(const uint8_t* b, uint8_t* q, float* s, float* m) {
  s[0] = half_to_float(read_u16(b));
  m[0] = half_to_float(read_u16(b + 2));
  nibbles(b + 4, q);
}

// Q5_0: bit v of the little-endian u32 after d is value v's 5th bit.
void codes_q5_0(const uint8_t* b, uint8_t* q, float* s, float*) {
  s[0] = half_to_float(read_u16(b));
  const uint32_t qh = read_u32(b + 2);
  nibbles(b + 6, q);
  for (int v = 0; v < 32; ++v) q[v] = uint8_t(q[v] | ((qh >> v) & 1) << 4);
}

void codes_q8_0(const uint8_t* b, uint8_t* q, float* s, float*) {
  s[0] = half_to_float(read_u16(b));
  for (int v = 0; v < 32; ++v) q[v] = uint8_t(int(int8_t(b[2 + v])) + 128);
}

// Q4_K: 8 sub-blocks of 32 with 6-bit scale sc and min m; ggml computes d1 = d * sc and m1 =
// dmin * m (exact products) and then d1 * q - m1, which is q * d1 + (-m1) bit for bit.
void codes_q4_k(const uint8_t* b, uint8_t* q, float* s, float* m) {
  const float d = half_to_float(read_u16(b)), dmin = half_to_float(read_u16(b + 2));
  for (int sub = 0; sub < 8; ++sub) {
    int sc, mn;
    formats::ggml_k_scale_min(b + 4, sub, sc, mn);
    s[sub] = d * float(sc);
    m[sub] = -(dmin * float(mn));
    const uint8_t* qs = b + 16 + 32 * (sub / 2);
    for (int l = 0; l < 32; ++l) q[sub * 32 + l] = (qs[l] >> (4 * (sub % 2))) & 15;
  }
}

// Q6_K: 6-bit codes (low nibble from ql, 2 high bits from qh; layout as formats' decoder),
// one int8 scale per 16 values: ggml's d * sc (exact), then times (q - 32).
void codes_q6_k(const uint8_t* b, uint8_t* q, float* s, float*) {
  const uint8_t *ql = b, *qh = b + 128;
  const float d = half_to_float(read_u16(b + 208));
  for (int k = 0; k < 16; ++k) s[k] = d * float(int8_t(b[192 + k]));
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, r = e % 128;
    const int low = (ql[64 * h + r % 64] >> (4 * (r / 64))) & 15;
    const int high = (qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
    q[e] = uint8_t(low | high << 4);
  }
}

struct PackFormat;
// Fills a PackedTensor's codes and scales from the tensor's ggml blocks.
using PackBlocks = void (*)(PackedTensor& t, const PackFormat& f, std::span<const uint8_t> bytes);

// How each quantized type lives on the device: codes of `bits` bits (4: 8 per uint32 word,
// value 8k+i of a row at bits 4i of word k; 8: 4 per word), one float32 scale (and min) per
// `block` values. A value is `scale * (q - offset)`, or `scale * q + min` with a min. Device
// cost per weight: bits + 32 (or 64 with mins) / block, e.g. q4_K 6, q5_0 9, q6_K 10.
struct PackFormat {
  GgmlType type;
  int bits, block;
  float offset;
  bool with_min;
  PackBlocks pack;  // pack_blocks<bits, the type's block reader>
};

// The bits and the block reader are template parameters because the repack runs on every
// load: a value's word and shift become shifts and masks, and the reader is inlined. With
// both known only at run time (a division per value, an indirect call per block) the repack
// was most of a 1B-parameter model's load time (9.5-10.6 s natively, bench/results/llm.md).
template <int Bits, CodesOf Codes>
void pack_blocks(PackedTensor& t, const PackFormat& f, std::span<const uint8_t> bytes) {
  constexpr int per_word = 32 / Bits;
  const formats::GgmlTypeInfo& info = formats::ggml_type_info(t.type);
  const int64_t n = t.rows * t.cols, block_words = info.block_size / per_word;
  const int64_t sub = info.block_size / f.block;  // scale blocks per ggml block
  t.scales.resize(size_t(n / f.block));
  if (f.with_min) t.mins.resize(size_t(n / f.block));
  t.words.resize(size_t(n / per_word));
  // On the stack, not a std::vector: with no destructor in scope, the threaded Wasm core's
  // JS-emulated exceptions need no trampoline around a call the reader makes (half_to_float).
  uint8_t q[256] = {};
  if (info.block_size > 256) fail("load_weights", "ggml blocks of ", info.block_size, " values");
  for (int64_t b = 0; b < n / info.block_size; ++b) {
    Codes(bytes.data() + b * info.block_bytes, q, t.scales.data() + b * sub,
          f.with_min ? t.mins.data() + b * sub : nullptr);
    uint32_t* out = t.words.data() + b * block_words;
    for (int64_t w = 0; w < block_words; ++w) {
      uint32_t word = 0;
      for (int i = 0; i < per_word; ++i) word |= uint32_t(q[w * per_word + i]) << (Bits * i);
      out[w] = word;
    }
  }
}

constexpr PackFormat kFormats[] = {
    {GgmlType::Q4_0, 4, 32, 8.0f, false, pack_blocks<4, codes_q4_0>},
    {GgmlType::Q4_1, 4, 32, 0.0f, true, pack_blocks<4, codes_q4_1>},
    {GgmlType::Q5_0, 8, 32, 16.0f, false, pack_blocks<8, codes_q5_0>},   // 5-bit codes in bytes
    {GgmlType::Q8_0, 8, 32, 128.0f, false, pack_blocks<8, codes_q8_0>},  // int8 biased by +128
    {GgmlType::Q4_K, 4, 32, 0.0f, true, pack_blocks<4, codes_q4_k>},
    {GgmlType::Q6_K, 8, 16, 32.0f, false, pack_blocks<8, codes_q6_k>},  // 6-bit codes in bytes
};

// The packed format of `type`, or nullptr for the plain types (f32, f16) and unsupported ones.
const PackFormat* format_of(GgmlType type) {
  for (const PackFormat& f : kFormats)
    if (f.type == type) return &f;
  return nullptr;
}

// Bits per packed code (4 or 8), or 0 for the plain types.
int bits_of(GgmlType type) {
  const PackFormat* f = format_of(type);
  return f ? f->bits : 0;
}

// Rows of a packed array stored interleaved in groups of this many: element (r, c) of a
// [rows, k] array sits at ((r / G) * k + c) * G + r % G. A CPU matvec kernel computes
// consecutive output rows side by side (its SIMD lanes), and with this order their words
// and scales at one column are adjacent in memory: vector loads instead of gathers. On
// webgpu the lanes of one output walk its row, so there its words stay neighbours (G = 1,
// RowLayout::Contiguous) and a chunk's four words are one 128-bit load.
int64_t interleave_of(int64_t rows, RowLayout layout) {
  return layout == RowLayout::Contiguous ? 1 : largest_divisor(rows, 16);
}

// [rows, k] host values in the interleaved order above (G > 1).
template <typename T>
std::vector<T> interleave_rows(const std::vector<T>& v, int64_t rows, int64_t g) {
  const int64_t k = int64_t(v.size()) / rows;
  std::vector<T> out(v.size());
  for (int64_t r = 0; r < rows; ++r) {
    T* to = out.data() + (r / g) * k * g + r % g;  // (r, 0); column c is g further each
    const T* from = v.data() + r * k;
    for (int64_t c = 0; c < k; ++c) to[c * g] = from[c];
  }
  return out;
}

// The logical [rows, k] view of an interleaved device array [rows / G, k, G].
Array deinterleave_rows(const Array& a) {
  const int64_t groups = a.shape(0), k = a.shape(1), g = a.shape(2);
  return np::reshape(np::transpose(a, std::vector<int>{0, 2, 1}), {groups * g, k});
}

// Unpacks words [..., nb, wpb] with scales (and mins) [..., nb] into float32 [..., nb * block].
// Only elementwise ops and broadcasts of the operands' loads: the caller's reduction fuses it.
Array unpack(GgmlType type, const Array& words, const Array& scales, const Array* mins) {
  const PackFormat& f = *format_of(type);
  const int bits = f.bits;
  // The shift of each value of a word as an index expression (not a loaded constant), so
  // the code generators see its range [0, 32) and emit plain shifts.
  const Array shifts = np::multiply(np::detail::iota({32 / bits}, 0, words.device()),
                                    Array(bits)).astype(DType::Uint32);
  Array q = np::bitwise_and(np::right_shift(np::expand_dims(words, -1), shifts),
                            Array(int((1u << bits) - 1)));
  const Array qf = q.astype(DType::Float32);
  const Array s = np::expand_dims(scales, {-1, -2});
  Array values = f.with_min ? qf * s + np::expand_dims(*mins, {-1, -2})
                            : (qf - Array(f.offset)) * s;
  Shape shape = words.shape();
  shape.pop_back();
  shape.back() *= f.block;
  return np::reshape(values, shape);
}

// Words [lead..., nb, wpb] and scales [lead..., nb] of `parts`, each first mapped by `view`.
template <typename View>
Array unpack_viewed(const QuantizedWeight& w, const View& view) {
  const Tree::Dict& d = w.parts.dict();
  const PackFormat& f = *format_of(w.type);
  const int64_t nb = w.cols / f.block, wpb = f.block * f.bits / 32;
  auto part = [&](const char* name) { return deinterleave_rows(d.at(name).array()); };
  const Array words = view(part("q"), Shape{nb, wpb});
  const Array scales = view(part("s"), Shape{nb});
  if (!f.with_min) return unpack(w.type, words, scales, nullptr);
  const Array mins = view(part("m"), Shape{nb});
  return unpack(w.type, words, scales, &mins);
}

// The IntDot layout (quantized_weights.h) of the types whose scales cover 32 values: their
// format, or nullptr.
const PackFormat* int_dot_format(GgmlType type) {
  const PackFormat* f = format_of(type);
  return f && f->block == kQuantBlock ? f : nullptr;
}

// t's codes, scales and mins into the IntDot arrays (`words` u32 per slot). Bits and the layout
// are template parameters for the same reason as pack_blocks': this runs for every weight at
// load, and with them known the per-value loop is shifts and masks the compiler vectorizes.
template <int Bits, QuantLayout Layout>
void fill_int_dot(const PackedTensor& t, int offset, int64_t words, uint32_t* codes, float* d, float* mins) {
  constexpr int per_word = 32 / Bits, block_words = kQuantBlock / per_word;
  constexpr uint32_t mask = (1u << Bits) - 1;
  const int64_t nb = t.cols / kQuantBlock;
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t at = ((r / kQuantRowGroup) * nb + b) * kQuantRowGroup + r % kQuantRowGroup, src = r * nb + b;
      d[at] = t.scales[size_t(src)];
      if constexpr (Layout == QuantLayout::Nibble4) mins[at] = t.mins[size_t(src)];
      const uint32_t* in = t.words.data() + src * block_words;
      auto* bytes = reinterpret_cast<uint8_t*>(codes + at * words);
      for (int w = 0; w < block_words; ++w) {
        const uint32_t word = in[w];
#pragma GCC unroll 8
        for (int i = 0; i < per_word; ++i) {  // unrolled: each shift a constant
          const int v = w * per_word + i;
          const uint32_t q = (word >> (Bits * i)) & mask;
          if constexpr (Layout == QuantLayout::Nibble4) bytes[v % 16] = uint8_t(bytes[v % 16] | q << (v < 16 ? 0 : 4));
          else bytes[v] = uint8_t(int8_t(int(q) - offset));
        }
      }
    }
}

// The host codes, scales and mins of `t` in lax::quantized_matmul's layout, rows past t.rows
// in the last group zero. 4-bit codes with a min keep their value (Nibble4); the others lose
// their offset and become int8 (q8_0's +128 bias, q5_0's 16, q4_0's 8). q4_0 as Nibble4 with
// a min of -8 d would dequantize q = 8 to +0 where ggml's (q - 8) * d gives -0 for d < 0.
QuantizedWeight upload_int_dot(const PackedTensor& t) {
  const PackFormat& f = *int_dot_format(t.type);
  const QuantLayout layout = f.bits == 4 && f.with_min ? QuantLayout::Nibble4 : QuantLayout::Int8;
  const int64_t nb = t.cols / kQuantBlock, groups = quant_groups(t.rows), words = quant_block_words(layout);
  const int64_t slots = groups * nb * kQuantRowGroup;
  std::vector<uint32_t> codes(size_t(slots * words), 0);
  std::vector<float> d(size_t(slots), 0.0f), mins(layout == QuantLayout::Nibble4 ? size_t(slots) : 0, 0.0f);
  auto fill = layout == QuantLayout::Nibble4 ? fill_int_dot<4, QuantLayout::Nibble4>
              : f.bits == 4                  ? fill_int_dot<4, QuantLayout::Int8>
                                             : fill_int_dot<8, QuantLayout::Int8>;
  fill(t, int(f.offset), words, codes.data(), d.data(), mins.data());
  QuantizedWeight w{t.type, t.rows, t.cols, {}, true, layout};
  Tree::Dict parts;
  parts["c"] = np::array(codes, {groups, nb, kQuantRowGroup, words});
  parts["d"] = np::array(d, {groups, nb, kQuantRowGroup});
  parts["n"] = layout == QuantLayout::Nibble4 ? np::array(mins, {groups, nb, kQuantRowGroup}) : np::array(mins, {0});
  w.parts = Tree(std::move(parts));
  return w;
}

Array dequantize_int_dot(const QuantizedWeight& w) {
  const Tree::Dict& p = w.parts.dict();
  return lax::dequantize_packed(p.at("c").array(), p.at("d").array(), p.at("n").array(), w.quant, w.rows, w.cols);
}

}  // namespace

bool can_pack(GgmlType type) {
  return type == GgmlType::F32 || type == GgmlType::F16 || bits_of(type) != 0;
}

PackedTensor pack_tensor(const std::string& name, GgmlType type, int64_t rows, int64_t cols,
                         std::span<const uint8_t> bytes) {
  if (!can_pack(type))
    fail("load_weights", "tensor '", name, "' has type ", formats::ggml_type_name(type),
         ", which kiln cannot run yet (supported: f32, f16, q4_0, q4_1, q5_0, q8_0, q4_K, q6_K)");
  const int64_t block = formats::ggml_type_info(type).block_size;
  if (rows <= 0 || cols <= 0 || cols % block != 0)
    fail("load_weights", "tensor '", name, "' has ", rows, " rows of ", cols,
         " values, expected whole ", block, "-value blocks per row");
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
    const PackFormat& f = *format_of(type);
    f.pack(t, f, bytes);
  }
  return t;
}

PackedTensor concat_rows(const std::string& name, std::vector<PackedTensor>&& parts) {
  if (parts.empty()) fail("concat_rows", "tensor '", name, "' has no parts");
  PackedTensor out{name, parts[0].type, 0, parts[0].cols, {}, {}, {}, {}};
  // Each array is row-major [rows, k] on the host (rows are interleaved only by upload), so
  // the concatenation of the parts' arrays is the concatenation of their rows.
  auto append = []<typename T>(std::vector<T>& to, std::vector<T>& from) {
    to.insert(to.end(), from.begin(), from.end());
    from = {};
  };
  size_t words = 0, scales = 0, plain = 0;  // reserved: no regrowth doubles the peak
  for (const PackedTensor& p : parts)
    words += p.words.size(), scales += p.scales.size(), plain += p.plain_bits.size();
  out.words.reserve(words);
  out.scales.reserve(scales);
  out.mins.reserve(parts[0].mins.empty() ? 0 : scales);
  out.plain_bits.reserve(plain);
  for (PackedTensor& p : parts) {
    if (p.type != out.type || p.cols != out.cols)
      fail("concat_rows", "tensor '", p.name, "' (", formats::ggml_type_name(p.type), ", rows of ",
           p.cols, ") cannot join '", name, "' (", formats::ggml_type_name(out.type), ", rows of ",
           out.cols, ")");
    out.rows += p.rows;
    append(out.words, p.words);
    append(out.scales, p.scales);
    append(out.mins, p.mins);
    append(out.plain_bits, p.plain_bits);
  }
  return out;
}

float packed_value(const PackedTensor& t, int64_t row, int64_t col) {
  const int64_t i = row * t.cols + col;
  if (t.type == GgmlType::F32) {
    float f;
    std::memcpy(&f, &t.plain_bits[size_t(i)], 4);
    return f;
  }
  if (t.type == GgmlType::F16) return half_to_float(uint16_t(t.plain_bits[size_t(i)]));
  const PackFormat& f = *format_of(t.type);
  const int per_word = 32 / f.bits;
  const uint32_t q = (t.words[size_t(i / per_word)] >> (f.bits * (i % per_word))) & ((1u << f.bits) - 1);
  const float s = t.scales[size_t(i / f.block)];
  if (f.with_min) return float(q) * s + t.mins[size_t(i / f.block)];
  return (float(q) - f.offset) * s;
}

// Rows past which webgpu's matvec reduces serially (runtime.ts' treeMaxOutputs on a GPU), one
// invocation per row: there neighbouring invocations read neighbouring words only when rows
// are interleaved (a 128256 x 2048 q4_0 output projection took 2.24 ms row-contiguous against
// 0.36 ms interleaved on an H100), so such matrices keep the interleave.
constexpr int64_t kMaxContiguousRows = int64_t(1) << 16;

namespace {

std::atomic<int> int_dot_setting{-1};  // -1: not set, read $KILN_LLM_INT_DOT

}  // namespace

void set_int_dot_matvecs(bool on) { int_dot_setting = on ? 1 : 0; }

bool int_dot_matvecs() {
  if (int_dot_setting < 0) {
    const char* e = std::getenv("KILN_LLM_INT_DOT");
    int_dot_setting = e && std::string(e) == "0" ? 0 : 1;
  }
  return int_dot_setting == 1;
}

RowLayout row_layout_for(const std::string& device, int64_t rows) {
  if (int_dot_matvecs() && get_backend(device).has_quantized_matmul()) return RowLayout::IntDot;
  return get_backend(device).prefers_contiguous_weight_rows() && rows <= kMaxContiguousRows ? RowLayout::Contiguous
                                                                                              : RowLayout::Interleaved;
}

QuantizedWeight upload(const PackedTensor& t) { return upload(t, row_layout_for(default_device(), t.rows)); }

QuantizedWeight upload(const PackedTensor& t, RowLayout layout) {
  if (layout == RowLayout::IntDot) {
    if (int_dot_format(t.type)) return upload_int_dot(t);
    layout = RowLayout::Interleaved;
  }
  QuantizedWeight w{t.type, t.rows, t.cols, {}};
  Tree::Dict parts;
  if (t.type == GgmlType::F32) {
    parts["w"] = np::array(t.plain_bits.data(), {t.rows, t.cols}, DType::Float32);
  } else if (t.type == GgmlType::F16) {
    std::vector<uint16_t> half(t.plain_bits.begin(), t.plain_bits.end());
    parts["w"] = np::array(half.data(), {t.rows, t.cols}, DType::Float16);
  } else {
    const PackFormat& f = *format_of(t.type);
    const int64_t per_word = 32 / f.bits, nb = t.cols / f.block, g = interleave_of(t.rows, layout);
    auto put = [&](const auto& v, int64_t k) {
      const Shape shape{t.rows / g, k, g};
      return g == 1 ? np::array(v, shape) : np::array(interleave_rows(v, t.rows, g), shape);
    };
    parts["q"] = put(t.words, t.cols / per_word);
    parts["s"] = put(t.scales, nb);
    if (f.with_min) parts["m"] = put(t.mins, nb);
  }
  w.parts = Tree(std::move(parts));
  return w;
}

Array dequantize(const QuantizedWeight& w) {
  if (w.int_dot) return dequantize_int_dot(w);
  if (!bits_of(w.type)) return w.parts["w"].array().astype(DType::Float32);
  return unpack_viewed(w, [&](const Array& a, const Shape& tail) {
    Shape s{w.rows};
    s.insert(s.end(), tail.begin(), tail.end());
    return np::reshape(a, s);
  });
}

Array dequantize_rows(const QuantizedWeight& w, const Array& ids) {
  const int64_t n = ids.shape(0);
  if (w.int_dot) return np::take(dequantize_int_dot(w), ids, 0);
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
  if (w.int_dot) {
    const Tree::Dict& p = w.parts.dict();
    return lax::quantized_matmul(x.astype(DType::Float32), p.at("c").array(), p.at("d").array(), p.at("n").array(),
                                 w.quant, w.rows);
  }
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
