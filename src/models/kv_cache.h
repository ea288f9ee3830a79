// The KV cache: one preallocated array [n_layer, 2, n_ctx, n_head_kv, head_dim] that a step
// reads (positions before its start) and the runtime extends in place with the step's new
// keys and values, and the masks of attention over it.
#pragma once
#include <cstdint>

#include "frontend/array.h"
#include "models/transformer.h"

namespace kiln::models {

// Zeros of the cache's shape for a context of n_ctx positions, realized on the current
// default device (its buffer is written in place by kv_cache_write).
Array kv_cache_zeros(const TransformerConfig& config, int64_t n_ctx);

// Writes rows [0, count) of a step's new keys and values (each float32 [T, n_head_kv,
// head_dim], T >= count; one pair per layer) at positions [start, start + count) of `cache`,
// in place: a step returns only its new rows, so a decode step moves O(layers * heads * dim)
// bytes instead of rewriting the whole cache. Each array is copied on the device from where
// the step left it (a row-major view at an offset of a buffer: a decode step's keys are a
// view of the RoPE kernel's output and its values of the q/k/v matvec's, so no kernel packs
// them into an output of their own; anything else is realized first). The cache must be a
// buffer only the caller holds.
struct LayerRows {
  Array keys, values;
};
void kv_cache_write(Array& cache, const std::vector<LayerRows>& layers, int64_t start, int64_t count);
// The same with each layer's keys and values stacked as one float32 [2, T, n_head_kv, head_dim].
void kv_cache_write(Array& cache, const std::vector<Array>& layer_rows, int64_t start, int64_t count);

// Which cache positions c the queries at positions start + t (t < T) may attend: c < start
// (the rows already written; the step's own rows come from new_rows_mask), and c > start + t -
// window when window > 0. bool [T, n_ctx].
Array cache_mask(const Array& start, int64_t T, int64_t n_ctx, int64_t window);

// Which of the step's own rows s (s < T) query t may attend: s <= t (causal), and s > t -
// window when window > 0. bool [T, T].
Array new_rows_mask(int64_t T, int64_t window);

}  // namespace kiln::models
