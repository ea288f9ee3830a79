// numpy indexed updates, JAX's x.at[idx].get/set/add/multiply/min/max: the index becomes one
// flat index along the merged advanced axes, and the scatter is written with primitives.
//
// Layout: x's advanced axes (integers and index arrays) are moved to the front and merged
// into one axis of size M, its slices applied to the other axes: y_sub [M, S...]. The index
// arrays broadcast to B (K elements) and give one flat index per update (-1 where an update
// is dropped). The scatter along axis 0 is a one-hot comparison [K, M] of those indices
// against an iota, selected with the updates and reduced over K (sum, product, min, max; for
// set, the largest update position that hits, so the last duplicate wins as on JAX's CPU).
// Then the sliced region is gathered back into place. Every step is a primitive, so jvp,
// grad, vmap and jit come from their rules (docs/ARCHITECTURE.md, "Indexed updates").
#include <algorithm>
#include <limits>
#include <numeric>

#include "frontend/transforms.h"
#include "library/array_args.h"

namespace kiln::numpy {

using namespace detail;

namespace {

enum class Op { Get, Set, Add, Mul, Min, Max };
enum class Mode { Promise, Clip, Drop };  // "fill" is "drop" for updates

const char* op_name(Op op) {
  switch (op) {
    case Op::Get: return "at.get";
    case Op::Set: return "at.set";
    case Op::Add: return "at.add";
    case Op::Mul: return "at.multiply";
    case Op::Min: return "at.min";
    case Op::Max: return "at.max";
  }
  return "at";
}

Mode parse_mode(const char* op, const std::string& m, bool& fill) {
  fill = m == "fill";
  if (m.empty() || m == "promise_in_bounds") return Mode::Promise;
  if (m == "clip") return Mode::Clip;
  if (m == "drop" || m == "fill") return Mode::Drop;
  fail(op, "got mode '", m, "', expected 'promise_in_bounds', 'clip', 'drop' or 'fill'");
}

// Python's slice.indices: the first position, the step and the length along an axis of n.
struct Span {
  int64_t start, step, len;
};
Span span_of(const char* op, const Slice& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  if (step == 0) fail(op, "slice step cannot be zero");
  auto clampi = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return step > 0 ? std::clamp<int64_t>(x, 0, n) : std::clamp<int64_t>(x, -1, n - 1);
  };
  int64_t start = clampi(s.start, step > 0 ? 0 : n - 1), stop = clampi(s.stop, step > 0 ? n : -1);
  int64_t len = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                         : std::max<int64_t>(0, (start - stop - step - 1) / -step);
  return {start, step, len};
}

// What an index means for x: the merged layout and the flat index of every update.
struct Plan {
  std::vector<int> perm;       // x -> [advanced axes..., sliced axes...]
  Shape merged;                // [M, sliced axes' sizes...]
  std::vector<Span> spans;     // per sliced axis
  std::vector<Index> slices;   // [all, the slices...]: y -> y_sub
  Shape B;                     // broadcast shape of the advanced terms (K elements)
  Shape S;                     // the sliced axes' lengths
  Array flat;                  // int32 [B...], in [0, M) (clamped)
  Array valid;                 // bool [B...]: every advanced index was in bounds
  int before = -1;             // NumPy order: S[0..before), B, S[before..); -1: B first
};

Plan plan_index(const char* op, const Array& x, const std::vector<AtIndex>& index) {
  int consumed = 0, ellipses = 0;
  for (const auto& t : index) (std::holds_alternative<Ellipsis>(t.term) ? ellipses : consumed)++;
  if (ellipses > 1) fail(op, "got ", ellipses, " ellipses, expected at most one");
  if (consumed > x.ndim()) fail_as(ErrorKind::Range, op, "too many indices: ", consumed, " for an array of rank ", x.ndim());
  std::vector<const AtIndex*> terms;
  AtIndex all{Slice{}};
  for (const auto& t : index) {
    if (!std::holds_alternative<Ellipsis>(t.term)) terms.push_back(&t);
    else
      for (int i = consumed; i < x.ndim(); i++) terms.push_back(&all);
  }
  while (int(terms.size()) < x.ndim()) terms.push_back(&all);

  Plan p;
  std::vector<int> adv, rest;
  for (int a = 0; a < x.ndim(); a++)
    (std::holds_alternative<Slice>(terms[size_t(a)]->term) ? rest : adv).push_back(a);
  p.perm = adv;
  p.perm.insert(p.perm.end(), rest.begin(), rest.end());
  const std::string& dev = x.device();
  // The advanced terms: int32 arrays, broadcast together.
  std::vector<Array> idx;
  for (int a : adv) {
    const auto& t = terms[size_t(a)]->term;
    if (auto* i = std::get_if<int64_t>(&t)) {
      idx.push_back(constant({}, DType::Int32, double(*i), dev));
      continue;
    }
    const Array& ia = std::get<Array>(t);
    if (!is_int(ia.dtype()))
      fail(op, "got an index array of dtype ", dtype_name(ia.dtype()), ", expected an integer dtype");
    idx.push_back(cast(ia, DType::Int32, false));
  }
  std::vector<Shape> shapes;
  for (const Array& i : idx) shapes.push_back(i.shape());
  p.B = broadcast_shape(op, shapes);
  int64_t M = 1;
  for (int a : adv) M *= x.shape()[size_t(a)];
  p.flat = constant(p.B, DType::Int32, 0, dev);
  p.valid = constant(p.B, DType::Bool, 1, dev);
  int64_t stride = M;
  for (size_t k = 0; k < adv.size(); k++) {
    int64_t n = x.shape()[size_t(adv[k])];
    stride /= std::max<int64_t>(n, 1);
    Array i = broadcast(idx[k], p.B);
    i = where(less(i, 0), add(i, constant({}, DType::Int32, double(n), dev)), i);  // wrap once
    p.valid = logical_and(p.valid, logical_and(greater_equal(i, 0), less(i, constant({}, DType::Int32, double(n), dev))));
    i = clip(i, Array(0), Array(int(std::max<int64_t>(n - 1, 0))));
    p.flat = add(p.flat, multiply(i, constant({}, DType::Int32, double(stride), dev)));
  }
  p.merged = {M};
  p.slices = {Slice{}};
  for (int a : rest) {
    int64_t n = x.shape()[size_t(a)];
    p.merged.push_back(n);
    p.spans.push_back(span_of(op, std::get<Slice>(terms[size_t(a)]->term), n));
    p.slices.push_back(std::get<Slice>(terms[size_t(a)]->term));
    p.S.push_back(p.spans.back().len);
  }
  bool adjacent = adv.empty() || adv.back() - adv.front() == int(adv.size()) - 1;
  if (adjacent && !adv.empty()) p.before = adv.front();
  return p;
}

// [B..., S...] <-> NumPy's order of x[idx]'s axes.
std::vector<int> to_numpy_order(const Plan& p) {
  int nb = int(p.B.size()), ns = int(p.S.size());
  std::vector<int> perm;
  if (p.before < 0) {
    perm.resize(size_t(nb + ns));
    std::iota(perm.begin(), perm.end(), 0);
    return perm;
  }
  for (int i = 0; i < p.before; i++) perm.push_back(nb + i);
  for (int i = 0; i < nb; i++) perm.push_back(i);
  for (int i = p.before; i < ns; i++) perm.push_back(nb + i);
  return perm;
}

std::vector<int> inverse(const std::vector<int>& perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); i++) inv[size_t(perm[i])] = int(i);
  return inv;
}

Shape shape_of(const Plan& p) {
  Shape s = p.B;
  s.insert(s.end(), p.S.begin(), p.S.end());
  return s;
}

// The reduction over the K updates that hit each of the M rows, combined with y_sub.
Array scatter_rows(Op op, const Array& y_sub, const Array& f, const Array& u) {
  const std::string& dev = y_sub.device();
  const int64_t K = f.size(), M = y_sub.shape()[0];
  Shape full{K};
  full.insert(full.end(), y_sub.shape().begin(), y_sub.shape().end());
  Array hit_km = equal(reshape(f, {K, 1}), iota({K, M}, 1, dev));  // [K, M]
  Shape ones_s(y_sub.shape().size() - 1, 1);
  Shape km1 = {K, M}, k1s = {K, 1};
  km1.insert(km1.end(), ones_s.begin(), ones_s.end());
  k1s.insert(k1s.end(), y_sub.shape().begin() + 1, y_sub.shape().end());
  if (op == Op::Set) {
    // The last update that hits a row wins (XLA's CPU order; JAX leaves it unspecified).
    Array w = max(where(hit_km, iota({K, M}, 0, dev), Array(-1)), 0);  // [M]
    Array sel = take(u, maximum(w, 0), 0);                          // [M, S...]
    Shape m1 = {M};
    m1.insert(m1.end(), ones_s.begin(), ones_s.end());
    return where(reshape(greater_equal(w, 0), m1), sel, y_sub);
  }
  Array hit = broadcast(reshape(hit_km, km1), full);
  Array uu = broadcast(reshape(u, k1s), full);
  DType dt = y_sub.dtype();
  double big = dt == DType::Int32    ? double(std::numeric_limits<int32_t>::max())
               : dt == DType::Uint32 ? double(std::numeric_limits<uint32_t>::max())
               : dt == DType::Bool   ? 1.0
                                     : std::numeric_limits<double>::infinity();
  double small = dt == DType::Int32 ? double(std::numeric_limits<int32_t>::min())
                 : is_int(dt) || dt == DType::Bool ? 0.0
                                                   : -std::numeric_limits<double>::infinity();
  auto fill = [&](double v) { return constant({}, dt, v, dev); };
  switch (op) {
    case Op::Add: return add(y_sub, sum(where(hit, uu, fill(0)), 0));
    case Op::Mul: return multiply(y_sub, prod(where(hit, uu, fill(1)), 0));
    case Op::Min: return minimum(y_sub, min(where(hit, uu, fill(big)), 0));
    case Op::Max: return maximum(y_sub, max(where(hit, uu, fill(small)), 0));
    default: break;
  }
  return y_sub;
}

// y_sub [M, S...] back into y [M, R...]: a gather per sliced axis, selected by the region.
Array put_region(const Plan& p, const Array& y, const Array& y_sub) {
  Array out = y_sub;
  Array mask;
  const std::string& dev = y.device();
  for (size_t j = 0; j < p.spans.size(); j++) {
    const Span& s = p.spans[j];
    int64_t n = p.merged[j + 1];
    if (s.start == 0 && s.step == 1 && s.len == n) continue;
    if (s.len == 0) return y;
    std::vector<double> pos(static_cast<size_t>(n)), in(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; r++) {
      int64_t d = r - s.start;
      bool hit = d % s.step == 0 && d / s.step >= 0 && d / s.step < s.len;
      pos[size_t(r)] = hit ? double(d / s.step) : 0;
      in[size_t(r)] = hit;
    }
    int ax = int(j) + 1;
    out = take(out, host_array(pos, {n}, DType::Int32, dev), ax);
    Shape ms(p.merged.size(), 1);
    ms[size_t(ax)] = n;
    Array m = reshape(host_array(in, {n}, DType::Bool, dev), ms);
    mask = mask.valid() ? logical_and(mask, m) : m;
  }
  return mask.valid() ? where(mask, out, y) : out;
}

Array apply(Op op, const Array& x, const std::vector<AtIndex>& idx, const Array* updates,
            const std::string& mode_s, std::optional<double> fill_value) {
  const char* op_s = op_name(op);
  return with_name(op_s, [&]() -> Array {
    bool fill = false;
    Mode mode = parse_mode(op_s, mode_s, fill);
    Plan p = plan_index(op_s, x, idx);
    if (op == Op::Get && mode == Mode::Drop) fill = true;  // a dropped read is filled
    Array y = reshape(transpose(x, p.perm), p.merged);
    Array y_sub = index(y, p.slices);
    Shape internal = shape_of(p);
    std::vector<int> np_order = to_numpy_order(p);
    if (op == Op::Get) {
      Array g = take(y_sub, p.flat, 0);  // [B..., S...], clamped (promise_in_bounds, clip)
      Shape vs = p.B;
      vs.resize(internal.size(), 1);
      // promise_in_bounds reads a clamped value but, as JAX's transpose (a scatter that
      // drops), sends no gradient through an out-of-bounds index.
      if (mode == Mode::Promise) g = where(reshape(p.valid, vs), g, stop_gradient(g));
      if (fill) {
        DType dt = x.dtype();
        double fv = fill_value ? *fill_value
                    : is_float(dt)       ? std::numeric_limits<double>::quiet_NaN()
                    : dt == DType::Int32 ? double(std::numeric_limits<int32_t>::min())
                    : dt == DType::Uint32 ? double(std::numeric_limits<uint32_t>::max())
                                          : 1.0;
        g = where(reshape(p.valid, vs), g, constant({}, dt, fv, x.device()));
      }
      return transpose(g, np_order);
    }
    Shape np_shape;
    for (int a : np_order) np_shape.push_back(internal[size_t(a)]);
    Array u = cast(broadcast_to(asarray(*updates), np_shape), x.dtype(), x.weak_type());
    int64_t K = 1;
    for (int64_t d : p.B) K *= d;
    Shape ks = {K};
    ks.insert(ks.end(), p.S.begin(), p.S.end());
    u = reshape(transpose(u, inverse(np_order)), ks);
    Array f = reshape(p.flat, {K});
    if (mode != Mode::Clip) f = where(reshape(p.valid, {K}), f, Array(-1));
    Array y2 = put_region(p, y, scatter_rows(op, y_sub, f, u));
    Shape xt;
    for (int a : p.perm) xt.push_back(x.shape()[size_t(a)]);
    return transpose(reshape(y2, xt), inverse(p.perm));
  });
}

}  // namespace

Array IndexUpdate::get(const std::string& mode, std::optional<double> fill_value) const {
  return apply(Op::Get, x_, index_, nullptr, mode, fill_value);
}
Array IndexUpdate::set(const Array& v, const std::string& mode) const { return apply(Op::Set, x_, index_, &v, mode, {}); }
Array IndexUpdate::add(const Array& v, const std::string& mode) const { return apply(Op::Add, x_, index_, &v, mode, {}); }
Array IndexUpdate::multiply(const Array& v, const std::string& mode) const {
  return apply(Op::Mul, x_, index_, &v, mode, {});
}
Array IndexUpdate::min(const Array& v, const std::string& mode) const { return apply(Op::Min, x_, index_, &v, mode, {}); }
Array IndexUpdate::max(const Array& v, const std::string& mode) const { return apply(Op::Max, x_, index_, &v, mode, {}); }

IndexUpdate at(const Array& x, std::vector<AtIndex> index) { return IndexUpdate(x, std::move(index)); }

}  // namespace kiln::numpy
