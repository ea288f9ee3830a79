// Primitive shorthands for the transformation rules. Each returns its input unchanged
// when the primitive would be the identity, so rules add no needless nodes.
#include "frontend/rule_ops.h"

#include <algorithm>
#include <numeric>

namespace kiln::frontend::ops {

Array unary(Prim p, const Array& a) { return frontend::bind(p, {a}); }
Array binary(Prim p, const Array& a, const Array& b) { return frontend::bind(p, {a, b}); }
Array where(const Array& c, const Array& x, const Array& y) { return frontend::bind(Prim::Where, {c, x, y}); }

Array add_any(const Array& a, const Array& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return add(a, b);
}
Array neg_any(const Array& a) { return a.valid() ? neg(a) : a; }

Array full_like(const Array& x, double v) {
  return filled(x.shape(), x.dtype(), v, x.device(), x.weak_type());
}

Array zeros(const Aval& aval, const std::string& device) {
  return Array(make_constant(aval, device, 0));
}

Array filled(const Shape& shape, DType dtype, double v, const std::string& device, bool weak) {
  return Array(make_constant({shape, dtype, weak}, device, v));
}

Array iota(const Shape& shape, int axis, const std::string& device) {
  int64_t n = shape[size_t(axis)];
  Array line(make_from_exp({{n}, DType::Int32, false}, device, gidx_var(n), {}));
  Shape s1(shape.size(), 1);
  s1[size_t(axis)] = n;
  return expand(reshape(line, s1), shape);
}

Array cast(const Array& a, DType dtype, bool weak) {
  if (a.dtype() == dtype && a.weak_type() == weak) return a;
  Params p;
  p.dtype = dtype;
  p.weak = weak;
  return frontend::bind(Prim::Cast, {a}, p);
}

Array reshape(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  Params p;
  p.shape = shape;
  return frontend::bind(Prim::Reshape, {a}, p);
}

Array transpose(const Array& a, const std::vector<int>& perm) {
  bool id = true;
  for (size_t i = 0; i < perm.size(); i++) id = id && perm[i] == int(i);
  if (id) return a;
  Params p;
  p.axes = perm;
  return frontend::bind(Prim::Transpose, {a}, p);
}

Array expand(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  Params p;
  p.shape = shape;
  return frontend::bind(Prim::Expand, {a}, p);
}

Array pad(const Array& a, const Ranges& widths) {
  if (std::all_of(widths.begin(), widths.end(),
                  [](auto w) { return w.first == 0 && w.second == 0; }))
    return a;
  Params p;
  p.ranges = widths;
  return frontend::bind(Prim::Pad, {a}, p);
}

Array shrink(const Array& a, const Ranges& ranges) {
  bool id = true;
  for (size_t i = 0; i < ranges.size(); i++)
    id = id && ranges[i].first == 0 && ranges[i].second == a.shape()[i];
  if (id) return a;
  Params p;
  p.ranges = ranges;
  return frontend::bind(Prim::Shrink, {a}, p);
}

Array flip(const Array& a, const std::vector<int>& axes) {
  if (axes.empty()) return a;
  Params p;
  p.axes = axes;
  return frontend::bind(Prim::Flip, {a}, p);
}

Array reduce(Prim prim, const Array& a, const std::vector<int>& axes) {
  if (axes.empty()) return a;
  Params p;
  p.axes = axes;
  std::sort(p.axes.begin(), p.axes.end());
  return frontend::bind(prim, {a}, p);
}

Array unreduce(const Array& r, const Shape& shape, const std::vector<int>& axes) {
  Shape keep = shape;
  for (int ax : axes) keep[size_t(ax)] = 1;
  return expand(reshape(r, keep), shape);
}

Array moveaxis(const Array& a, int from, int to) {
  if (from == to) return a;
  std::vector<int> perm;
  for (int i = 0; i < a.ndim(); i++)
    if (i != from) perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  return transpose(a, perm);
}

Array insert_axis(const Array& a, int axis, int64_t n) {
  Shape s = a.shape();
  s.insert(s.begin() + axis, 1);
  Array r = reshape(a, s);
  s[size_t(axis)] = n;
  return expand(r, s);
}

Array sum_to(const Array& a, const Shape& to) {
  std::vector<int> axes;
  for (size_t i = 0; i < to.size(); i++)
    if (to[i] == 1 && a.shape()[i] != 1) axes.push_back(int(i));
  return reshape(reduce_sum(a, axes), to);
}

}  // namespace kiln::frontend::ops
