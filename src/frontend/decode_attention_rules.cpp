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
  const Aval& q = in[0];
  if (q.dtype != DType::Float32 || q.shape.size() != 2) bad("q is " + q.str() + ", expected float32[heads, head_dim]");
  const Aval& keys = in[1];
  if (keys.dtype != DType::Float32 || keys.shape.size() != 3)
    bad("keys is " + keys.str() + ", expected float32[n_ctx, kv_heads, head_dim]");
  const int64_t H = q.shape[0], D = q.shape[1], C = keys.shape[0], Hkv = keys.shape[1];
  if (keys.shape[2] != D) bad("keys is " + keys.str() + ", expected head_dim " + std::to_string(D) + " as q's");
  if (Hkv == 0 || H % Hkv != 0)
    bad("q has " + std::to_string(H) + " heads, expected a multiple of the cache's " + std::to_string(Hkv) +
        " kv heads");
  expect(in[2], "values", DType::Float32, {C, Hkv, D});
  expect(in[3], "k", DType::Float32, {Hkv, D});
  expect(in[4], "v", DType::Float32, {Hkv, D});
  expect(in[5], "start", DType::Int32, {});
  if (prm.sliding_window < 0) bad("got sliding_window = " + std::to_string(prm.sliding_window) + ", expected >= 0");
  if (!std::isfinite(prm.scale)) bad("got scale = " + std::to_string(prm.scale) + ", expected a finite number");
  return {{H, D}, DType::Float32, false};
}

Array decode_attention_formula(const std::vector<Array>& x, const Params& prm) {
  // Every operand with a leading batch axis B (vmap's; 1 otherwise).
  const Array &q = x[0], &keys = x[1], &values = x[2], &k = x[3], &v = x[4], &start = x[5];
  const int64_t B = q.shape()[0], H = q.shape()[1], D = q.shape()[2], C = keys.shape()[1], Hkv = keys.shape()[2];
  const int64_t G = H / Hkv, C1 = C + 1;
  const std::string dev = q.device();
  // The cache's rows and the new row as one [B, C + 1, Hkv, D] (pads add zeros).
  auto joined = [&](const Array& cache, const Array& row) {
    const Array below = pad(cache, {{0, 0}, {0, 1}, {0, 0}, {0, 0}});
    return add(below, pad(reshape(row, {B, 1, Hkv, D}), {{0, 0}, {C, 0}, {0, 0}, {0, 0}}));
  };
  const Shape big = {B, Hkv, G, C1, D};
  auto per_head = [&](const Array& rows) {  // [B, C1, Hkv, D] -> broadcast over the group
    return expand(reshape(transpose(rows, {0, 2, 1, 3}), {B, Hkv, 1, C1, D}), big);
  };
  const Array qg = expand(reshape(q, {B, Hkv, G, 1, D}), big);
  Array s = reduce_sum(mul(qg, per_head(joined(keys, k))), {4});  // [B, Hkv, G, C1]
  s = mul(s, filled(s.shape(), DType::Float32, prm.scale, dev));
  // Row c attended: c < start (and c > start - window), or c == C (the new row).
  const Shape rows = {B, C1};
  const Array pos = iota(rows, 1, dev);
  const Array st = expand(reshape(start, {B, 1}), rows);
  Array allowed = binary(Prim::CmpLt, pos, st);
  if (prm.sliding_window > 0)
    allowed = binary(Prim::And, allowed,
                     binary(Prim::CmpLt, sub(st, filled(rows, DType::Int32, double(prm.sliding_window), dev)), pos));
  allowed = binary(Prim::Or, allowed, binary(Prim::CmpEq, pos, filled(rows, DType::Int32, double(C), dev)));
  const Shape sc = s.shape();
  s = where(expand(reshape(allowed, {B, 1, 1, C1}), sc), s, filled(sc, DType::Float32, -INFINITY, dev));
  const Array m = unreduce(reduce(Prim::ReduceMax, s, {3}), sc, {3});
  const Array e = unary(Prim::Exp, sub(s, m));
  const Array p = div(e, unreduce(reduce_sum(e, {3}), sc, {3}));
  const Array pv = mul(expand(reshape(p, {B, Hkv, G, C1, 1}), big), per_head(joined(values, v)));
  return reshape(reduce_sum(pv, {3}), {B, H, D});  // [B, Hkv, G, D] -> [B, H, D]
}

Array decode_attention_unfused(const std::vector<Array>& x, const Params& prm) {
  std::vector<Array> one;
  for (const Array& a : x) {
    Shape s = a.shape();
    s.insert(s.begin(), 1);
    one.push_back(reshape(a, s));
  }
  const Array out = decode_attention_formula(one, prm);
  return reshape(out, {out.shape()[1], out.shape()[2]});
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
