// The KV cache's layout, the position-masked writes of new keys/values, and the causal
// (optionally sliding-window) mask over cache positions.
#include "models/kv_cache.h"

#include "library/numpy.h"

namespace kiln::models {

namespace np = kiln::numpy;

Array kv_cache_zeros(const TransformerConfig& c, int64_t n_ctx) {
  return np::zeros({c.n_layer, 2, n_ctx, c.n_head_kv, c.head_dim});
}

Array place_rows(const Array& base, const Array& rows, const Array& start, int axis) {
  const int64_t n = base.shape(axis), t = rows.shape(axis);
  const Array rel = np::arange(n, DType::Int32) - start;  // int32 [n]
  const Array inside = np::logical_and(rel >= Array(0), rel < Array(int(t)));
  const Array src = np::take(rows, np::clip(rel, Array(0), Array(int(t - 1))), axis);
  Shape mask_shape(size_t(base.ndim()), 1);
  mask_shape[size_t(axis < 0 ? axis + base.ndim() : axis)] = n;
  return np::where(np::reshape(inside, mask_shape), src, base);
}

Array attention_mask(const Array& start, int64_t T, int64_t n_ctx, int64_t window) {
  const Array query_pos = np::reshape(np::arange(T, DType::Int32) + start, {T, 1});
  const Array key_pos = np::reshape(np::arange(n_ctx, DType::Int32), {1, n_ctx});
  Array allowed = key_pos <= query_pos;
  if (window > 0) allowed = np::logical_and(allowed, key_pos > query_pos - Array(int(window)));
  return allowed;
}

}  // namespace kiln::models
