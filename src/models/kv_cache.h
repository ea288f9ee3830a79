// The KV cache as one preallocated array [n_layer, 2, n_ctx, n_head_kv, head_dim] and the lazy
// writes that place a step's keys and values at a position known only at run time.
#pragma once
#include <cstdint>

#include "frontend/array.h"
#include "models/transformer.h"

namespace kiln::models {

// Zeros of the cache's shape for a context of n_ctx positions.
Array kv_cache_zeros(const TransformerConfig& config, int64_t n_ctx);

// `base` with `rows` placed at [start, start + rows.shape(axis)) along `axis` (start: int32
// []): an elementwise select over a gather, so one compiled kernel serves every start.
Array place_rows(const Array& base, const Array& rows, const Array& start, int axis);

// For each query position start + t (t < T), which cache positions c it may attend: c <=
// start + t (causal), and c > start + t - window when window > 0. bool [T, n_ctx].
Array attention_mask(const Array& start, int64_t T, int64_t n_ctx, int64_t window);

}  // namespace kiln::models
