// decode_attention's shape, jvp and batching rules (routine.h), and its unfused formula: the
// same attention written with ordinary primitives (scores, mask, softmax, weighted sum). The
// jvp and vmap rules go through the formula, so every transformation keeps working; only the
// primal runs as the fused routine.
#include <cmath>
#include <string>

#include "frontend/jvp.h"
#include "frontend/routine.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

namespace {

using namespace ops;

[[noreturn]] void bad(const std::string& what) { fail("decode_attention", what); }

void expect(const Aval& a, const char* name, DType dtype, const Shape& shape) {
  expect_routine_operand("decode_attention", a, name, dtype, shape);
}

}  // namespace

Aval decode_attention_shape(const std::vector<Aval>& in, const Params& prm) {
  // q [H, D] (one row: k and v [Hkv, D]) or [T, H, D] (T rows: k and v [T, Hkv, D]).
  const Aval& q = in[0];
  if (q.dtype != DType::Float32 || (q.shape.size() != 2 && q.shape.size() != 3))
    bad("q is " + q.str() + ", expected float32[heads, head_dim] or float32[rows, heads, head_dim]");
  const bool rows = q.shape.size() == 3;
  const Aval& keys = in[1];
  if (keys.dtype != DType::Float32 || keys.shape.size() != 3)
    bad("keys is " + keys.str() + ", expected float32[n_ctx, kv_heads, head_dim]");
  const int64_t T = rows ? q.shape[0] : 1, H = q.shape[rows], D = q.shape[rows + 1], C = keys.shape[0],
                Hkv = keys.shape[1];
  if (keys.shape[2] != D) bad("keys is " + keys.str() + ", expected head_dim " + std::to_string(D) + " as q's");
  if (Hkv == 0 || H % Hkv != 0)
    bad("q has " + std::to_string(H) + " heads, expected a multiple of the cache's " + std::to_string(Hkv) +
        " kv heads");
  expect(in[2], "values", DType::Float32, {C, Hkv, D});
  const Shape new_rows = rows ? Shape{T, Hkv, D} : Shape{Hkv, D};
  expect(in[3], "k", DType::Float32, new_rows);
  expect(in[4], "v", DType::Float32, new_rows);
  expect(in[5], "start", DType::Int32, {});
  if (prm.sliding_window < 0) bad("got sliding_window = " + std::to_string(prm.sliding_window) + ", expected >= 0");
  if (!std::isfinite(prm.scale)) bad("got scale = " + std::to_string(prm.scale) + ", expected a finite number");
  return {q.shape, DType::Float32, false};
}

Array decode_attention_formula(const std::vector<Array>& x, const Params& prm) {
  // Every operand with a leading batch axis B (vmap's; 1 otherwise), q [B, T, H, D] or [B, H,
  // D] (one row: given that axis here and the result without it).
  if (x[0].ndim() == 3) {
    std::vector<Array> y = x;
    for (int i : {0, 3, 4}) {
      Shape s = x[size_t(i)].shape();
      s.insert(s.begin() + 1, 1);
      y[size_t(i)] = reshape(x[size_t(i)], s);
    }
    const Array out = decode_attention_formula(y, prm);
    return reshape(out, {out.shape()[0], out.shape()[2], out.shape()[3]});
  }
  const Array &q = x[0], &keys = x[1], &values = x[2], &k = x[3], &v = x[4], &start = x[5];
  const int64_t B = q.shape()[0], T = q.shape()[1], H = q.shape()[2], D = q.shape()[3], C = keys.shape()[1],
                Hkv = keys.shape()[2];
  const int64_t G = H / Hkv, CT = C + T;
  const std::string dev = q.device();
  // The cache's rows and the new rows as one [B, C + T, Hkv, D] (pads add zeros).
  auto joined = [&](const Array& cache, const Array& rows) {
    const Array below = pad(cache, {{0, 0}, {0, T}, {0, 0}, {0, 0}});
    return add(below, pad(rows, {{0, 0}, {C, 0}, {0, 0}, {0, 0}}));
  };
  const Shape big = {B, Hkv, G, T, CT, D};
  auto per_head = [&](const Array& rows) {  // [B, CT, Hkv, D] -> broadcast over the group and T
    return expand(reshape(transpose(rows, {0, 2, 1, 3}), {B, Hkv, 1, 1, CT, D}), big);
  };
  // q as [B, Hkv, G, T, 1, D].
  const Array qt = transpose(reshape(q, {B, T, Hkv, G, D}), {0, 2, 3, 1, 4});
  const Array qg = expand(reshape(qt, {B, Hkv, G, T, 1, D}), big);
  Array s = reduce_sum(mul(qg, per_head(joined(keys, k))), {5});  // [B, Hkv, G, T, CT]
  s = mul(s, filled(s.shape(), DType::Float32, prm.scale, dev));
  // Query t (at position start + t) attends cache row c < C when c < start (and c > start +
  // t - window), new row j = c - C >= 0 when j <= t (and j > t - window).
  const Shape grid = {B, T, CT};
  const Array pos = iota(grid, 2, dev), t = iota(grid, 1, dev);
  const Array st = expand(reshape(start, {B, 1, 1}), grid);
  const Array cs = filled(grid, DType::Int32, double(C), dev);
  const Array in_cache = binary(Prim::CmpLt, pos, cs);
  Array cache_ok = binary(Prim::And, in_cache, binary(Prim::CmpLt, pos, st));
  const Array j = sub(pos, cs);
  const Array one = filled(grid, DType::Int32, 1.0, dev);
  Array new_ok = binary(Prim::And, binary(Prim::CmpLt, sub(cs, one), pos), binary(Prim::CmpLt, sub(j, t), one));
  if (prm.sliding_window > 0) {
    const Array w = filled(grid, DType::Int32, double(prm.sliding_window), dev);
    cache_ok = binary(Prim::And, cache_ok, binary(Prim::CmpLt, sub(add(st, t), w), pos));
    new_ok = binary(Prim::And, new_ok, binary(Prim::CmpLt, sub(t, w), j));
  }
  const Array allowed = binary(Prim::Or, cache_ok, new_ok);
  const Shape sc = s.shape();
  s = where(expand(reshape(allowed, {B, 1, 1, T, CT}), sc), s, filled(sc, DType::Float32, -INFINITY, dev));
  const Array m = unreduce(reduce(Prim::ReduceMax, s, {4}), sc, {4});
  const Array e = unary(Prim::Exp, sub(s, m));
  const Array p = div(e, unreduce(reduce_sum(e, {4}), sc, {4}));
  const Array pv = mul(expand(reshape(p, {B, Hkv, G, T, CT, 1}), big), per_head(joined(values, v)));
  const Array o = reduce_sum(pv, {4});  // [B, Hkv, G, T, D]
  return reshape(transpose(o, {0, 3, 1, 2, 4}), {B, T, H, D});
}

Array decode_attention_unfused(const std::vector<Array>& x, const Params& prm) {
  std::vector<Array> one;
  for (const Array& a : x) {
    Shape s = a.shape();
    s.insert(s.begin(), 1);
    one.push_back(reshape(a, s));
  }
  const Array out = decode_attention_formula(one, prm);
  Shape s = out.shape();
  s.erase(s.begin());
  return reshape(out, s);
}

std::pair<Array, Array> decode_attention_jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                             const Params& prm) {
  Array y = frontend::bind(Prim::DecodeAttention, x, prm);
  bool any = false;
  for (size_t i = 0; i < 5; ++i) any = any || t[i].valid();
  if (!any) return {y, Array()};
  // The tangent of the formula (linear in t, so linearize transposes it); start has none.
  std::vector<Array> tangents(t.begin(), t.end());
  tangents[5] = Array();
  auto f = [&](const std::vector<Array>& a) { return std::vector<Array>{decode_attention_unfused(a, prm)}; };
  return {y, jvp_flat(f, x, tangents).second[0]};
}

std::pair<Array, BatchDim> decode_attention_vmap(const std::vector<Array>& v, const std::vector<BatchDim>& d,
                                                 const Params& prm, int64_t n) {
  std::vector<Array> b;
  for (size_t i = 0; i < v.size(); ++i) b.push_back(move_batch_axis(v[i], d[i], 0, n));
  return {decode_attention_formula(b, prm), 0};
}

}  // namespace kiln::frontend
