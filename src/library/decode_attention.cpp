// lax::decode_attention (decode_attention.h): binds the routine primitive, or its formula where the
// device has no routine.
#include "library/decode_attention.h"

#include "backend/backend.h"
#include "frontend/primitive.h"
#include "frontend/routine.h"

namespace kiln::lax {

namespace {

frontend::Params params(float scale, int64_t sliding_window) {
  frontend::Params p;
  p.scale = scale;
  p.sliding_window = sliding_window;
  return p;
}

}  // namespace

Array decode_attention(const Array& q, const Array& keys, const Array& values, const Array& k, const Array& v,
                       const Array& start, float scale, int64_t sliding_window) {
  // A device without the routine for these rows (wasm and webgpu for several) computes the same
  // attention as ordinary kernels, so a program written with lax::decode_attention runs on every device.
  const Backend& be = get_backend(q.device());
  const bool rows = q.ndim() == 3 && q.shape(0) > 1;
  if (!be.has_decode_attention() || (rows && !be.has_prefill_attention()))
    return decode_attention_unfused(q, keys, values, k, v, start, scale, sliding_window);
  return frontend::bind(frontend::Prim::DecodeAttention, {q, keys, values, k, v, start}, params(scale, sliding_window));
}

Array decode_attention_unfused(const Array& q, const Array& keys, const Array& values, const Array& k,
                               const Array& v, const Array& start, float scale, int64_t sliding_window) {
  const frontend::Params p = params(scale, sliding_window);
  // The shape rule's checks and errors, then the formula.
  std::vector<frontend::Aval> avals;
  for (const Array* a : {&q, &keys, &values, &k, &v, &start}) avals.push_back({a->shape(), a->dtype(), false});
  frontend::shape_rule(frontend::Prim::DecodeAttention, avals, p);
  return frontend::decode_attention_unfused({q, keys, values, k, v, start}, p);
}

}  // namespace kiln::lax
