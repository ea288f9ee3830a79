// The decode_attention reference (decode_attention.h).
#include "backend/decode_attention.h"

#include <algorithm>
#include <vector>

#include "ir/error.h"
#include "ir/float32_math.h"

namespace kiln {

void decode_attention_reference(const DecodeAttentionShape& s, const float* q, const float* keys,
                                const float* values, const float* k, const float* v, int32_t start, float* out) {
  const int64_t D = s.head_dim, group = s.heads / s.kv_heads, row = s.kv_heads * D;
  const int64_t end = std::clamp<int64_t>(start, 0, s.n_ctx);
  std::vector<float> e(size_t(end + s.rows));
  for (int64_t t = 0; t < s.rows; ++t) {
    // Keys u in [begin, last) then the own row last (u = last = end + t).
    const int64_t begin = decode_attention_begin(s, end, t), last = end + t;
    auto key = [&](int64_t u, int64_t kh) { return (u < end ? keys + u * row : k + (u - end) * row) + kh * D; };
    auto value = [&](int64_t u, int64_t kh) { return (u < end ? values + u * row : v + (u - end) * row) + kh * D; };
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t kh = h / group;
      const float* qh = q + (t * s.heads + h) * D;
      auto score = [&](const float* kr) {
        float acc = 0;
        for (int64_t d = 0; d < D; ++d) acc += qh[d] * kr[d];
        return s.scale * acc;
      };
      float m = score(key(last, kh));  // the own row: always attended, so m is finite
      float& own = e[size_t(last - begin)];
      own = m;
      for (int64_t u = begin; u < last; ++u) m = std::max(m, e[size_t(u - begin)] = score(key(u, kh)));
      float total = 0;
      for (int64_t u = begin; u <= last; ++u) total += (e[size_t(u - begin)] = exp_f32(e[size_t(u - begin)] - m));
      float* o = out + (t * s.heads + h) * D;
      const float* vown = value(last, kh);
      for (int64_t d = 0; d < D; ++d) {
        float acc = 0;
        for (int64_t u = begin; u < last; ++u) acc += e[size_t(u - begin)] * value(u, kh)[d];
        o[d] = (acc + own * vown[d]) / total;
      }
    }
  }
}

void check_decode_attention_buffers(const DecodeAttentionShape& s, const int64_t* bytes, const std::string& device) {
  const int64_t row = s.kv_heads * s.head_dim, qn = s.rows * s.heads * s.head_dim;
  const int64_t sizes[7] = {qn, s.n_ctx * row, s.n_ctx * row, s.rows * row, s.rows * row, 1, qn};
  static const char* names[7] = {"q", "keys", "values", "k", "v", "start", "out"};
  for (int i = 0; i < 7; ++i) {
    const int64_t first = i < 6 ? s.offset[i] : 0;
    if (first < 0 || (first + sizes[i]) * 4 > bytes[i])
      fail("decode_attention", "on ", device, ": ", names[i], " [", first, ", ", first + sizes[i],
           ") does not fit its buffer of ", bytes[i] / 4, " elements");
  }
}

}  // namespace kiln
