// The decode_attention reference (decode_attention.h).
#include "backend/decode_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/error.h"

namespace kiln {

void decode_attention_reference(const DecodeAttentionShape& s, const float* q, const float* keys,
                                const float* values, const float* k, const float* v, int32_t start, float* out) {
  const int64_t D = s.head_dim, group = s.heads / s.kv_heads, row = s.kv_heads * D;
  const int64_t end = std::clamp<int64_t>(start, 0, s.n_ctx), begin = decode_attention_begin(s, end);
  std::vector<float> e(size_t(std::max<int64_t>(end - begin, 0)) + 1);
  for (int64_t h = 0; h < s.heads; ++h) {
    const int64_t kh = h / group;
    const float* qh = q + h * D;
    auto score = [&](const float* key) {
      float acc = 0;
      for (int64_t d = 0; d < D; ++d) acc += qh[d] * key[d];
      return s.scale * acc;
    };
    float m = score(k + kh * D);  // the new row: always attended, so m is finite
    e.back() = m;
    for (int64_t c = begin; c < end; ++c) m = std::max(m, e[size_t(c - begin)] = score(keys + c * row + kh * D));
    float total = 0;
    for (float& x : e) total += (x = std::exp(x - m));
    float* o = out + h * D;
    for (int64_t d = 0; d < D; ++d) {
      float acc = 0;
      for (int64_t c = begin; c < end; ++c) acc += e[size_t(c - begin)] * values[c * row + kh * D + d];
      o[d] = (acc + e.back() * v[kh * D + d]) / total;
    }
  }
}

void check_decode_attention_buffers(const DecodeAttentionShape& s, const int64_t* bytes, const std::string& device) {
  const int64_t row = s.kv_heads * s.head_dim, qn = s.heads * s.head_dim;
  const int64_t sizes[7] = {qn, s.n_ctx * row, s.n_ctx * row, row, row, 1, qn};
  static const char* names[7] = {"q", "keys", "values", "k", "v", "start", "out"};
  for (int i = 0; i < 7; ++i) {
    const int64_t first = i < 6 ? s.offset[i] : 0;
    if (first < 0 || (first + sizes[i]) * 4 > bytes[i])
      fail("decode_attention", "on ", device, ": ", names[i], " [", first, ", ", first + sizes[i],
           ") does not fit its buffer of ", bytes[i] / 4, " elements");
  }
}

}  // namespace kiln
