// The KV cache's layout, its in-place extension by a step's new rows, and the causal
// (optionally sliding-window) masks of attention over the cache and over the step's rows.
#include "models/kv_cache.h"

#include "backend/backend.h"
#include "frontend/array_impl.h"
#include "library/numpy.h"

namespace kiln::models {

namespace np = kiln::numpy;

Array kv_cache_zeros(const TransformerConfig& c, int64_t n_ctx) {
  Array cache = np::zeros({c.n_layer, 2, n_ctx, c.n_head_kv, c.head_dim});
  cache.eval();  // a buffer of its own, for kv_cache_write to write into
  return cache;
}

void kv_cache_write(Array& cache, const std::vector<LayerRows>& layers, int64_t start, int64_t count) {
  const int64_t n_layer = cache.shape(0), n_ctx = cache.shape(2);
  const int64_t row = cache.shape(3) * cache.shape(4);  // floats per position
  if (int64_t(layers.size()) != n_layer)
    fail("kv_cache_write", "rows of ", layers.size(), " layers for a cache of ", n_layer);
  const BufferRef& buf = cache.impl()->buffer();
  for (int64_t l = 0; l < n_layer; ++l) {
    const Array* parts[2] = {&layers[size_t(l)].keys, &layers[size_t(l)].values};
    for (int64_t half = 0; half < 2; ++half) {  // keys, then values
      const Array& a = *parts[half];
      const int64_t T = a.ndim() == 3 ? a.shape(0) : 0;
      if (a.ndim() != 3 || a.shape(1) * a.shape(2) != row || count < 0 || count > T || start < 0 ||
          start + count > n_ctx)
        fail("kv_cache_write", "layer ", l, "'s ", half ? "values " : "keys ", shape_str(a.shape()), " (", count,
             " at ", start, ") do not fit the cache ", shape_str(cache.shape()));
      if (a.dtype() != DType::Float32 || a.device() != cache.device())
        fail("kv_cache_write", "layer ", l, "'s rows are ", dtype_name(a.dtype()), " on ", a.device(),
             ", expected float32 on the cache's device ", cache.device());
      // Copied on the device (no round trip through the host, which webgpu cannot read
      // synchronously) from where the step left the rows: a row-major view is read at its
      // offset in its buffer (realizing it was a copy kernel per layer).
      const auto [rows, offset] = frontend::buffer_and_offset(a);
      const int64_t dst = ((l * 2 + half) * n_ctx + start) * row;
      buf->backend().copy(rows->handle(), offset * 4, buf->handle(), dst * 4, count * row * 4);
    }
  }
}

void kv_cache_write(Array& cache, const std::vector<Array>& layer_rows, int64_t start, int64_t count) {
  std::vector<LayerRows> layers;
  for (size_t l = 0; l < layer_rows.size(); ++l) {
    const Array& kv = layer_rows[l];
    if (kv.ndim() != 4 || kv.shape(0) != 2)
      fail("kv_cache_write", "layer ", l, "'s rows ", shape_str(kv.shape()), " do not fit the cache ",
           shape_str(cache.shape()), ", expected [2, T, n_head_kv, head_dim]");
    layers.push_back({np::index(kv, {int64_t(0)}), np::index(kv, {int64_t(1)})});
  }
  kv_cache_write(cache, layers, start, count);
}

Array cache_mask(const Array& start, int64_t T, int64_t n_ctx, int64_t window) {
  const Array query_pos = np::reshape(np::arange(T, DType::Int32) + start, {T, 1});
  const Array key_pos = np::reshape(np::arange(n_ctx, DType::Int32), {1, n_ctx});
  Array allowed = key_pos < np::reshape(start, {1, 1});
  if (window > 0) allowed = np::logical_and(allowed, key_pos > query_pos - Array(int(window)));
  return np::broadcast_to(allowed, {T, n_ctx});
}

Array new_rows_mask(int64_t T, int64_t window) {
  const Array t = np::reshape(np::arange(T, DType::Int32), {T, 1});
  const Array s = np::reshape(np::arange(T, DType::Int32), {1, T});
  Array allowed = s <= t;
  if (window > 0) allowed = np::logical_and(allowed, s > t - Array(int(window)));
  return allowed;
}

}  // namespace kiln::models
