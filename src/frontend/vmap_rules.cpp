// The batching rule of every primitive, in one table keyed by Prim. Each moves the batch
// axis to the front (broadcasting unbatched operands where shapes must agree) and
// prepends the batch axis to the primitive's params.
#include <algorithm>

#include "frontend/routine.h"
#include "frontend/rule_ops.h"
#include "frontend/vmap.h"

namespace kiln::frontend {

namespace {

using namespace ops;
using Arrays = std::vector<Array>;
using Dims_ = std::vector<BatchDim>;
using Out = std::pair<Array, BatchDim>;

Array front(const Array& x, BatchDim d, int64_t n) { return move_batch_axis(x, d, 0, n); }

// Elementwise (incl. where, casts): every operand batched at axis 0.
Out elementwise(Prim p, const Arrays& v, const Dims_& d, const Params& prm, int64_t n) {
  Arrays a;
  for (size_t i = 0; i < v.size(); i++) a.push_back(front(v[i], d[i], n));
  return {frontend::bind(p, a, prm), 0};
}

std::vector<int> shift(const std::vector<int>& axes) {
  std::vector<int> r;
  for (int a : axes) r.push_back(a + 1);
  return r;
}

// One-operand primitives whose params gain a leading batch axis.
VmapRule unary_rule(Prim p, std::function<Params(const Params&, int64_t)> adjust) {
  return [p, adjust](const Arrays& v, const Dims_& d, const Params& prm, int64_t n) -> Out {
    return {frontend::bind(p, {front(v[0], d[0], n)}, adjust(prm, n)), 0};
  };
}

Out window(const Arrays& v, const Dims_& d, const Params& prm, int64_t n) {
  Array x = front(v[0], d[0], n);
  Params q = prm;
  q.window.insert(q.window.begin(), 1);
  q.strides.insert(q.strides.begin(), 1);
  q.dilation.insert(q.dilation.begin(), 1);
  Array w = frontend::bind(Prim::Window, {x}, q);
  // [B, o..., 1, k...]: drop the batch axis's size-1 window axis.
  Shape s = w.shape();
  s.erase(s.begin() + x.ndim());
  return {reshape(w, s), 0};
}

Out gather(const Arrays& v, const Dims_& d, const Params& prm, int64_t n) {
  const int ax = prm.axes[0];
  if (!d[1]) {
    Params q = prm;
    q.axes = {ax + 1};
    return {frontend::bind(Prim::Gather, {front(v[0], d[0], n), v[1]}, q), 0};
  }
  Array idx = front(v[1], d[1], n);
  if (!d[0]) {
    // The batch axis of the indices lands where they do: at the gathered axis.
    return {frontend::bind(Prim::Gather, {v[0], idx}, prm), ax};
  }
  // Both batched: gather from the flattened (batch, axis) pair with offset indices.
  Array x = moveaxis(front(v[0], d[0], n), ax + 1, 1);  // [B, len, rest...]
  const int64_t len = x.shape()[1];
  Shape xs = x.shape();
  Shape flat{n * len};
  flat.insert(flat.end(), xs.begin() + 2, xs.end());
  x = reshape(x, flat);
  const std::string& dev = idx.device();
  const Shape& is = idx.shape();
  Array i = cast(idx, DType::Int32, false);
  i = where(binary(Prim::CmpLt, i, filled(is, DType::Int32, 0, dev)),
            add(i, filled(is, DType::Int32, double(len), dev)), i);
  i = binary(
      Prim::Max,
      binary(Prim::Min, i, filled(is, DType::Int32, double(std::max<int64_t>(len - 1, 0)), dev)),
      filled(is, DType::Int32, 0, dev));
  i = add(i, mul(iota(is, 0, dev), filled(is, DType::Int32, double(len), dev)));
  Params q = prm;
  q.axes = {0};
  Array g = frontend::bind(Prim::Gather, {x, i}, q);  // [B, P..., rest...]
  // rest = x's axes before `ax` then after it; put the leading ones back in front of P.
  const int np = int(is.size()) - 1;
  std::vector<int> perm{0};
  for (int k = 0; k < ax; k++) perm.push_back(1 + np + k);
  for (int k = 0; k < np; k++) perm.push_back(1 + k);
  for (int k = 1 + np + ax; k < g.ndim(); k++) perm.push_back(k);
  return {transpose(g, perm), 0};
}

std::vector<VmapRule> build_table() {
  std::vector<VmapRule> r(kNumPrims);
  for (size_t i = 0; i < kNumPrims; i++) {
    Prim p = Prim(i);
    if (prim_info(p).kind != PrimKind::Elementwise && prim_info(p).kind != PrimKind::Convert) continue;
    r[i] = [p](const Arrays& v, const Dims_& d, const Params& prm, int64_t n) {
      return elementwise(p, v, d, prm, n);
    };
  }
  auto set = [&](Prim p, VmapRule f) { r[size_t(p)] = std::move(f); };
  for (Prim p : {Prim::ReduceSum, Prim::ReduceProd, Prim::ReduceMax, Prim::ReduceMin, Prim::Flip})
    set(p, unary_rule(p, [](const Params& prm, int64_t) {
          Params q = prm;
          q.axes = shift(prm.axes);
          return q;
        }));
  for (Prim p : {Prim::Reshape, Prim::Expand})
    set(p, unary_rule(p, [](const Params& prm, int64_t n) {
          Params q = prm;
          q.shape.insert(q.shape.begin(), n);
          return q;
        }));
  set(Prim::Transpose, unary_rule(Prim::Transpose, [](const Params& prm, int64_t) {
        Params q = prm;
        q.axes = shift(prm.axes);
        q.axes.insert(q.axes.begin(), 0);
        return q;
      }));
  set(Prim::Pad, unary_rule(Prim::Pad, [](const Params& prm, int64_t) {
        Params q = prm;
        q.ranges.insert(q.ranges.begin(), {0, 0});
        return q;
      }));
  set(Prim::Shrink, unary_rule(Prim::Shrink, [](const Params& prm, int64_t n) {
        Params q = prm;
        q.ranges.insert(q.ranges.begin(), {0, n});
        return q;
      }));
  set(Prim::Stride, unary_rule(Prim::Stride, [](const Params& prm, int64_t) {
        Params q = prm;
        q.strides.insert(q.strides.begin(), 1);
        return q;
      }));
  set(Prim::Window, window);
  set(Prim::Gather, gather);
  set(Prim::QuantizedMatmul, quantized_matmul_vmap);
  set(Prim::DecodeAttention, decode_attention_vmap);
  return r;
}

const std::vector<VmapRule>& table() {
  static const std::vector<VmapRule> t = [] {
    auto r = build_table();
    check_rule_table("vmap", r, [](Prim) { return true; });
    return r;
  }();
  return t;
}

}  // namespace

bool has_vmap_rule(Prim p) { return bool(table()[size_t(p)]); }

const VmapRule& vmap_rule(Prim p) {
  const VmapRule& r = table()[size_t(p)];
  if (!r) fail("vmap", "primitive ", prim_name(p), " has no batching rule");
  return r;
}

}  // namespace kiln::frontend
