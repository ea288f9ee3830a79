// ggml block decoders: one function per block format, each computing every value with the float32
// operations of ggml's reference dequantize_row_* in the same order, and a table keyed by type.
#include "formats/ggml_blocks.h"

#include <cstring>

#include "ir/alu_op.h"  // half_to_float
#include "ir/error.h"

namespace kiln::formats {

namespace {

// std::bit_cast is missing from Debian Emscripten 3.1.6's libc++.
float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
float half_at(const uint8_t* p) { return half_to_float(le16(p)); }

void decode_f32(const uint8_t* b, float* y) { y[0] = float_from_bits(le32(b)); }
void decode_f16(const uint8_t* b, float* y) { y[0] = half_at(b); }
void decode_bf16(const uint8_t* b, float* y) { y[0] = bf16_to_f32(le16(b)); }

// Legacy 32-value blocks: value j sits in the low nibble of byte j, value j + 16 in its high one.
void decode_q4_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = float((qs[j] & 0x0F) - 8) * d;
    y[j + 16] = float((qs[j] >> 4) - 8) * d;
  }
}

void decode_q4_1(const uint8_t* b, float* y) {
  const float d = half_at(b), m = half_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = float(qs[j] & 0x0F) * d + m;
    y[j + 16] = float(qs[j] >> 4) * d + m;
  }
}

// Q5: bit j of the little-endian u32 qh is the 5th bit of value j.
void decode_q5_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint32_t qh = le32(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0x0F) | int((qh >> j) & 1) << 4;
    const int hi = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
    y[j] = float(lo - 16) * d;
    y[j + 16] = float(hi - 16) * d;
  }
}

void decode_q5_1(const uint8_t* b, float* y) {
  const float d = half_at(b), m = half_at(b + 2);
  const uint32_t qh = le32(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0x0F) | int((qh >> j) & 1) << 4;
    const int hi = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
    y[j] = float(lo) * d + m;
    y[j + 16] = float(hi) * d + m;
  }
}

void decode_q8_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  for (int j = 0; j < 32; ++j) y[j] = float(int8_t(b[2 + j])) * d;
}

// Q2_K: 16 sub-blocks of 16 values; scale byte s has the scale in its low nibble, the min in its
// high one. Value e reads 2 bits of byte 32 * (e / 128) + e % 32 at shift 2 * (e % 128 / 32).
void decode_q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* qs = b + 16;
  const float d = half_at(b + 80), dmin = half_at(b + 82);
  for (int sub = 0; sub < 16; ++sub) {
    const float dl = d * float(scales[sub] & 0x0F);
    const float ml = dmin * float(scales[sub] >> 4);
    for (int i = 0; i < 16; ++i) {
      const int e = sub * 16 + i;
      const int q = (qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
      y[e] = dl * float(q) - ml;
    }
  }
}

// Q3_K's 16 six-bit scales: low 4 bits from the nibbles of bytes 0-7 (low nibbles first),
// high 2 bits from bytes 8-11 (scale k: byte 8 + k % 4 at shift 2 * (k / 4)); stored + 32.
int q3_k_scale(const uint8_t* s, int k) {
  const int low = k < 8 ? s[k] & 0x0F : s[k - 8] >> 4;
  const int high = (s[8 + k % 4] >> (2 * (k / 4))) & 3;
  return (low | high << 4) - 32;
}

// Q3_K: 2 low bits as Q2_K, the 3rd bit of value e is bit e / 32 of hmask byte e % 32; a clear
// bit subtracts 4.
void decode_q3_k(const uint8_t* b, float* y) {
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* scales = b + 96;
  const float d = half_at(b + 108);
  for (int sub = 0; sub < 16; ++sub) {
    const float dl = d * float(q3_k_scale(scales, sub));
    for (int i = 0; i < 16; ++i) {
      const int e = sub * 16 + i;
      const int low = (qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
      const int high_clear = ((hmask[e % 32] >> (e / 32)) & 1) == 0;
      y[e] = dl * float(low - 4 * high_clear);
    }
  }
}

// Q4_K: 8 sub-blocks of 32; sub-block s takes the low (even s) or high (odd s) nibbles of
// bytes 32 * (s / 2) .. +31.
void decode_q4_k(const uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qs = b + 16;
  for (int sub = 0; sub < 8; ++sub) {
    int sc, m;
    ggml_k_scale_min(scales, sub, sc, m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    const uint8_t* q = qs + 32 * (sub / 2);
    const int shift = 4 * (sub % 2);
    for (int l = 0; l < 32; ++l) y[sub * 32 + l] = d1 * float((q[l] >> shift) & 0x0F) - m1;
  }
}

// Q5_K: Q4_K's nibbles plus a 5th bit: bit s of qh byte l for value l of sub-block s.
void decode_q5_k(const uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  for (int sub = 0; sub < 8; ++sub) {
    int sc, m;
    ggml_k_scale_min(scales, sub, sc, m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    const uint8_t* q = qs + 32 * (sub / 2);
    const int shift = 4 * (sub % 2);
    for (int l = 0; l < 32; ++l) {
      const int v = ((q[l] >> shift) & 0x0F) | ((qh[l] >> sub) & 1) << 4;
      y[sub * 32 + l] = d1 * float(v) - m1;
    }
  }
}

// Q6_K: two halves of 128; in half h, value r takes the nibble (r / 64) of ql byte
// 64 h + r % 64 and 2 high bits of qh byte 32 h + r % 32 at shift 2 * (r / 32); 16 int8 scales.
void decode_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, r = e % 128;
    const int low = (ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0F;
    const int high = (qh[32 * h + r % 32] >> (2 * (r / 32))) & 3;
    y[e] = d * float(scales[e / 16]) * float((low | high << 4) - 32);
  }
}

struct BlockDecoder {
  GgmlType type;
  void (*decode)(const uint8_t* block, float* out);
};

constexpr BlockDecoder kDecoders[] = {
    {GgmlType::F32, decode_f32},   {GgmlType::F16, decode_f16},   {GgmlType::BF16, decode_bf16},
    {GgmlType::Q4_0, decode_q4_0}, {GgmlType::Q4_1, decode_q4_1}, {GgmlType::Q5_0, decode_q5_0},
    {GgmlType::Q5_1, decode_q5_1}, {GgmlType::Q8_0, decode_q8_0}, {GgmlType::Q2_K, decode_q2_k},
    {GgmlType::Q3_K, decode_q3_k}, {GgmlType::Q4_K, decode_q4_k}, {GgmlType::Q5_K, decode_q5_k},
    {GgmlType::Q6_K, decode_q6_k},
};

const BlockDecoder* find_decoder(GgmlType type) {
  for (const auto& d : kDecoders)
    if (d.type == type) return &d;
  return nullptr;
}

}  // namespace

float bf16_to_f32(uint16_t bits) { return float_from_bits(uint32_t(bits) << 16); }

void ggml_k_scale_min(const uint8_t* s, int sub, int& scale, int& min) {
  if (sub < 4) {
    scale = s[sub] & 63;
    min = s[sub + 4] & 63;
  } else {
    scale = (s[sub + 4] & 0x0F) | (s[sub - 4] >> 6) << 4;
    min = (s[sub + 4] >> 4) | (s[sub] >> 6) << 4;
  }
}

bool can_dequantize(GgmlType type) { return find_decoder(type) != nullptr; }

void dequantize(GgmlType type, std::span<const uint8_t> bytes, int64_t n_values, float* out) {
  const char* op = "dequantize";
  const BlockDecoder* decoder = find_decoder(type);
  if (!decoder) {
    if (!find_ggml_type(uint32_t(type))) fail(op, "unknown ggml type id ", uint32_t(type));
    fail(op, "no decoder for ggml type ", ggml_type_name(type),
         ", expected f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K or q6_K");
  }
  const GgmlTypeInfo& info = ggml_type_info(type);
  const int64_t want = ggml_bytes_for(type, n_values, op);
  if (int64_t(bytes.size()) != want)
    fail(op, info.name, ": got ", bytes.size(), " bytes for ", n_values, " values, expected ",
         want);
  const int64_t blocks = n_values / info.block_size;
  for (int64_t i = 0; i < blocks; ++i)
    decoder->decode(bytes.data() + i * info.block_bytes, out + i * info.block_size);
}

}  // namespace kiln::formats
