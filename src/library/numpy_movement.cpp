// numpy movement functions: reshapes, permutations, broadcasting, basic indexing,
// padding, joining and splitting, and gathers. All but take are views (no kernel).
#include <algorithm>
#include <numeric>

#include "library/array_args.h"

namespace kiln::numpy {

using namespace detail;

namespace {
Array shrink(const Array& a, const Ranges& r) {
  Params p;
  p.ranges = r;
  return bind1(Prim::Shrink, a, p);
}
Ranges full_ranges(const Shape& s) {
  Ranges r;
  for (int64_t d : s) r.push_back({0, d});
  return r;
}
Array slice_axis(const Array& a, int axis, int64_t begin, int64_t end) {
  Ranges r = full_ranges(a.shape());
  r[size_t(axis)] = {begin, end};
  return shrink(a, r);
}
}  // namespace

Array reshape(const Array& a, const Shape& shape) {
  return with_name("reshape", [&]() -> Array {
    Shape s = shape;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < s.size(); i++) {
      if (s[i] == -1) {
        if (infer >= 0) fail("reshape", "got shape ", shape_str(shape), ", expected at most one -1");
        infer = int(i);
      } else if (s[i] < 0) {
        fail("reshape", "got shape ", shape_str(shape), ", expected sizes >= 0 or -1");
      } else {
        known *= s[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || a.size() % known != 0)
        fail("reshape", "cannot reshape an array of shape ", shape_str(a.shape()), " into shape ", shape_str(shape));
      s[size_t(infer)] = a.size() / known;
    }
    if (kiln::prod(s) != a.size())
      fail("reshape", "cannot reshape an array of shape ", shape_str(a.shape()), " (size ", a.size(),
           ") into shape ", shape_str(shape));
    if (s == a.shape()) return a;
    Params p;
    p.shape = s;
    return bind1(Prim::Reshape, a, p);
  });
}

Array ravel(const Array& a) {
  return with_name("ravel", [&]() -> Array { return reshape(a, {a.size()}); });
}

Array transpose(const Array& a, std::optional<std::vector<int>> axes) {
  return with_name("transpose", [&]() -> Array {
    std::vector<int> perm;
    if (!axes) {
      for (int i = a.ndim() - 1; i >= 0; i--) perm.push_back(i);
    } else {
      if (int(axes->size()) != a.ndim())
        fail("transpose", "got ", axes->size(), " axes for an array of rank ", a.ndim(), ", expected ", a.ndim());
      for (int ax : *axes) perm.push_back(normalize_axis("transpose", ax, a.ndim()));
      std::vector<int> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (int i = 0; i < a.ndim(); i++)
        if (sorted[size_t(i)] != i) fail("transpose", "axes do not form a permutation of the array's axes");
    }
    bool identity = true;
    for (int i = 0; i < a.ndim(); i++) identity = identity && perm[size_t(i)] == i;
    if (identity) return a;
    Params p;
    p.axes = perm;
    return bind1(Prim::Transpose, a, p);
  });
}

Array swapaxes(const Array& a, int axis1, int axis2) {
  return with_name("swapaxes", [&]() -> Array {
    int i = normalize_axis("swapaxes", axis1, a.ndim()), j = normalize_axis("swapaxes", axis2, a.ndim());
    std::vector<int> perm(size_t(a.ndim()));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[size_t(i)], perm[size_t(j)]);
    return transpose(a, perm);
  });
}

Array moveaxis(const Array& a, const std::vector<int>& source, const std::vector<int>& destination) {
  return with_name("moveaxis", [&]() -> Array {
    if (source.size() != destination.size())
      fail("moveaxis", "got ", source.size(), " source and ", destination.size(),
           " destination axes, expected equal numbers");
    int nd = a.ndim();
    std::vector<int> src, dst;
    for (int s : source) src.push_back(normalize_axis("moveaxis", s, nd));
    for (int d : destination) dst.push_back(normalize_axis("moveaxis", d, nd));
    // Repeated axes would build a non-permutation (and insert past the end below).
    for (auto* axes : {&src, &dst}) {
      std::vector<int> sorted = *axes;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        fail("moveaxis", "repeated axis in the ", axes == &src ? "source" : "destination",
             " axes, expected distinct axes");
    }
    std::vector<int> order;
    for (int i = 0; i < nd; i++)
      if (std::find(src.begin(), src.end(), i) == src.end()) order.push_back(i);
    std::vector<std::pair<int, int>> moves;
    for (size_t k = 0; k < src.size(); k++) moves.push_back({dst[k], src[k]});
    std::sort(moves.begin(), moves.end());
    for (auto [d, s] : moves) order.insert(order.begin() + d, s);
    return transpose(a, order);
  });
}

Array moveaxis(const Array& a, int source, int destination) {
  return with_name("moveaxis", [&]() -> Array { return moveaxis(a, std::vector<int>{source}, std::vector<int>{destination}); });
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  return with_name("broadcast_shapes", [&]() -> Shape { return broadcast_shape("broadcast_shapes", {a, b}); });
}

Array broadcast_to(const Array& a, const Shape& shape) {
  return with_name("broadcast_to", [&]() -> Array {
    for (int64_t d : shape)
      if (d < 0) fail("broadcast_to", "got shape ", shape_str(shape), ", expected non-negative sizes");
    if (shape.size() < a.shape().size())
      fail("broadcast_to", "cannot broadcast ", shape_str(a.shape()), " to the lower-rank shape ", shape_str(shape));
    for (size_t i = 0; i < a.shape().size(); i++) {
      int64_t d = a.shape()[i], t = shape[shape.size() - a.shape().size() + i];
      if (d != t && d != 1) fail("broadcast_to", "cannot broadcast ", shape_str(a.shape()), " to ", shape_str(shape));
    }
    return broadcast(a, shape);
  });
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays) {
  return with_name("broadcast_arrays", [&]() -> std::vector<Array> {
    std::vector<Shape> shapes;
    for (auto& a : arrays) shapes.push_back(a.shape());
    Shape s = broadcast_shape("broadcast_arrays", shapes);
    std::vector<Array> out;
    for (auto& a : arrays) out.push_back(broadcast(a, s));
    return out;
  });
}

Array expand_dims(const Array& a, Axes axes) {
  return with_name("expand_dims", [&]() -> Array {
    if (axes.all()) fail("expand_dims", "expected the axes to insert");
    int nd = a.ndim() + int(axes.list().size());
    std::vector<int> ax = normalize_axes("expand_dims", axes, nd);
    Shape s;
    size_t k = 0;
    for (int i = 0; i < nd; i++)
      s.push_back(std::find(ax.begin(), ax.end(), i) != ax.end() ? 1 : a.shape()[k++]);
    return reshape(a, s);
  });
}

Array squeeze(const Array& a, Axes axes) {
  return with_name("squeeze", [&]() -> Array {
    std::vector<int> ax;
    if (axes.all()) {
      for (int i = 0; i < a.ndim(); i++)
        if (a.shape()[size_t(i)] == 1) ax.push_back(i);
    } else {
      ax = normalize_axes("squeeze", axes, a.ndim());
      for (int i : ax)
        if (a.shape()[size_t(i)] != 1)
          fail("squeeze", "cannot select axis ", i, " of shape ", shape_str(a.shape()),
               " to squeeze: its size is not 1");
    }
    Shape s;
    for (int i = 0; i < a.ndim(); i++)
      if (std::find(ax.begin(), ax.end(), i) == ax.end()) s.push_back(a.shape()[size_t(i)]);
    return reshape(a, s);
  });
}

Array index(const Array& a, const std::vector<Index>& index) {
  return with_name("index", [&]() -> Array {
    // Expand the ellipsis (or pad with full slices) so every array axis has a term.
    int consumed = 0, ellipses = 0;
    for (auto& t : index) {
      if (std::holds_alternative<int64_t>(t) || std::holds_alternative<Slice>(t)) consumed++;
      if (std::holds_alternative<Ellipsis>(t)) ellipses++;
    }
    if (ellipses > 1) fail("index", "got ", ellipses, " ellipses, expected at most one");
    if (consumed > a.ndim())
      fail_as(ErrorKind::Range, "index", "too many indices: ", consumed, " for an array of rank ", a.ndim());
    std::vector<Index> terms;
    for (auto& t : index) {
      if (std::holds_alternative<Ellipsis>(t)) {
        for (int i = 0; i < a.ndim() - consumed; i++) terms.push_back(Slice{});
      } else {
        terms.push_back(t);
      }
    }
    if (!ellipses)
      for (int i = consumed; i < a.ndim(); i++) terms.push_back(Slice{});
    // Apply slices (shrink, flip, stride), then reshape away integer axes and add new ones.
    Array x = a;
    Ranges ranges;
    Dims steps;
    std::vector<int> flips;
    Shape out_shape;
    int axis = 0;
    for (auto& t : terms) {
      if (std::holds_alternative<NewAxis>(t)) {
        out_shape.push_back(1);
        continue;
      }
      int64_t n = a.shape()[size_t(axis)];
      if (auto* i = std::get_if<int64_t>(&t)) {
        int64_t k = *i < 0 ? *i + n : *i;
        if (k < 0 || k >= n)
          fail_as(ErrorKind::Range, "index", "index ", *i, " is out of bounds for axis ", axis, " with size ", n);
        ranges.push_back({k, k + 1});
        steps.push_back(1);
      } else {
        const Slice& s = std::get<Slice>(t);
        int64_t step = s.step.value_or(1);
        if (step == 0) fail("index", "slice step cannot be zero");
        // Python's slice.indices.
        auto clampi = [&](std::optional<int64_t> v, int64_t dflt) {
          if (!v) return dflt;
          int64_t x = *v < 0 ? *v + n : *v;
          if (step > 0) return std::clamp<int64_t>(x, 0, n);
          return std::clamp<int64_t>(x, -1, n - 1);
        };
        int64_t start = clampi(s.start, step > 0 ? 0 : n - 1);
        int64_t stop = clampi(s.stop, step > 0 ? n : -1);
        int64_t len = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                               : std::max<int64_t>(0, (start - stop - step - 1) / -step);
        int64_t as = step > 0 ? step : -step;
        if (step < 0) {
          flips.push_back(axis);
          start = n - 1 - start;  // position in the flipped axis
        }
        if (len == 0) start = 0;
        ranges.push_back({start, start + (len ? (len - 1) * as + 1 : 0)});
        steps.push_back(as);
        out_shape.push_back(len);
      }
      axis++;
    }
    if (!flips.empty()) {
      Params p;
      p.axes = flips;
      x = bind1(Prim::Flip, x, p);
    }
    x = shrink(x, ranges);
    if (std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s != 1; })) {
      Params p;
      p.strides = steps;
      x = bind1(Prim::Stride, x, p);
    }
    return reshape(x, out_shape);
  });
}

Array pad(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& pad_width,
          const std::string& mode, const Array& constant_value) {
  return with_name("pad", [&]() -> Array {
    size_t nd = size_t(a.ndim());
    Ranges w(pad_width.begin(), pad_width.end());
    if (w.size() == 1 && nd != 1) {
      const auto both = w[0];  // a copy: assign would read the element it overwrites
      w.assign(nd, both);
    }
    if (w.size() != nd)
      fail("pad", "got ", pad_width.size(), " (before, after) pairs for an array of rank ", nd,
           ", expected 1 or ", nd);
    for (auto [lo, hi] : w)
      if (lo < 0 || hi < 0) fail("pad", "got a negative pad width, expected widths >= 0");
    if (mode == "constant") {
      Params p;
      p.ranges = w;
      Array padded = bind1(Prim::Pad, a, p);
      // A constant zero needs no select: padding reads as zero.
      if (!constant_value.impl()->exp.is_const(0)) {
        Array ones = constant(a.shape(), DType::Bool, 1, a.device());
        Array mask = bind1(Prim::Pad, ones, p);
        Array c = cast(constant_value, a.dtype(), a.weak_type());
        return cast(where(mask, padded, c), a.dtype(), a.weak_type());
      }
      return padded;
    }
    if (mode != "edge" && mode != "reflect" && mode != "symmetric")
      fail("pad", "unknown mode '", mode, "', expected constant, edge, reflect or symmetric");
    Array x = a;
    for (size_t ax = 0; ax < nd; ax++) {
      auto [lo, hi] = w[ax];
      if (lo == 0 && hi == 0) continue;
      int axi = int(ax);
      if (x.shape()[ax] == 0) fail("pad", "cannot ", mode, "-pad an empty axis ", ax);
      // Reflections wider than the array repeat, as NumPy does: pad in rounds.
      while (lo > 0 || hi > 0) {
        int64_t n = x.shape()[ax];
        int64_t room = mode == "reflect" ? std::max<int64_t>(n - 1, 0) : n;
        if (mode == "reflect" && n == 1) {
          // A single element reflects to itself.
          room = std::max(lo, hi);
        }
        int64_t l = mode == "edge" ? lo : std::min(lo, room), h = mode == "edge" ? hi : std::min(hi, room);
        std::vector<Array> parts;
        auto flipped = [&](int64_t b, int64_t e) { return flip(slice_axis(x, axi, b, e), Axes(axi)); };
        if (l > 0) {
          if (mode == "edge") {
            Shape s = x.shape();
            s[ax] = l;
            parts.push_back(broadcast(slice_axis(x, axi, 0, 1), s));
          } else if (mode == "reflect") {
            parts.push_back(n == 1 ? broadcast(x, [&] { Shape s = x.shape(); s[ax] = l; return s; }())
                                   : flipped(1, l + 1));
          } else {
            parts.push_back(flipped(0, l));
          }
        }
        parts.push_back(x);
        if (h > 0) {
          if (mode == "edge") {
            Shape s = x.shape();
            s[ax] = h;
            parts.push_back(broadcast(slice_axis(x, axi, n - 1, n), s));
          } else if (mode == "reflect") {
            parts.push_back(n == 1 ? broadcast(x, [&] { Shape s = x.shape(); s[ax] = h; return s; }())
                                   : flipped(n - 1 - h, n - 1));
          } else {
            parts.push_back(flipped(n - h, n));
          }
        }
        x = concatenate(parts, axi);
        lo -= l;
        hi -= h;
      }
    }
    return x;
  });
}

Array concatenate(const std::vector<Array>& arrays, int axis) {
  return with_name("concatenate", [&]() -> Array {
    if (arrays.empty()) fail("concatenate", "need at least one array to concatenate");
    const Array& a0 = arrays[0];
    if (a0.ndim() == 0) fail("concatenate", "zero-dimensional arrays cannot be concatenated");
    int ax = normalize_axis("concatenate", axis, a0.ndim());
    int64_t total = 0;
    for (auto& a : arrays) {
      if (a.ndim() != a0.ndim())
        fail("concatenate", "all input arrays must have the same rank, got ", shape_str(a0.shape()),
             " and ", shape_str(a.shape()));
      for (int i = 0; i < a0.ndim(); i++)
        if (i != ax && a.shape()[size_t(i)] != a0.shape()[size_t(i)])
          fail("concatenate", "input shapes ", shape_str(a0.shape()), " and ", shape_str(a.shape()),
               " differ on axis ", i, ", expected equal sizes off the concatenation axis ", ax);
      total += a.shape()[size_t(ax)];
    }
    if (arrays.size() == 1) return a0;
    TypeInfo t = result_type(arrays);
    // Each piece is padded to the full length and selected by its padding mask, so the
    // result is one fused expression with no copies.
    Array out;
    int64_t offset = 0;
    for (auto& a : arrays) {
      int64_t n = a.shape()[size_t(ax)];
      Params p;
      p.ranges.assign(size_t(a0.ndim()), {0, 0});
      p.ranges[size_t(ax)] = {offset, total - offset - n};
      Array piece = bind1(Prim::Pad, cast(a, t.dtype, t.weak), p);
      if (!out.valid()) {
        out = piece;
      } else {
        Array mask = bind1(Prim::Pad, constant(a.shape(), DType::Bool, 1, a.device()), p);
        out = frontend::bind(Prim::Where, {mask, piece, out});
      }
      offset += n;
    }
    return out;
  });
}

Array stack(const std::vector<Array>& arrays, int axis) {
  return with_name("stack", [&]() -> Array {
    if (arrays.empty()) fail("stack", "need at least one array to stack");
    for (auto& a : arrays)
      if (a.shape() != arrays[0].shape())
        fail("stack", "all input arrays must have the same shape, got ", shape_str(arrays[0].shape()),
             " and ", shape_str(a.shape()));
    int ax = normalize_axis("stack", axis, arrays[0].ndim() + 1);
    std::vector<Array> parts;
    for (auto& a : arrays) parts.push_back(expand_dims(a, ax));
    return concatenate(parts, ax);
  });
}

std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int axis) {
  return with_name("split", [&]() -> std::vector<Array> {
    int ax = normalize_axis("split", axis, a.ndim());
    int64_t n = a.shape()[size_t(ax)];
    std::vector<Array> out;
    int64_t prev = 0;
    for (size_t i = 0; i <= indices.size(); i++) {
      // As NumPy: piece i is a[indices[i-1]:indices[i]], empty when the bounds cross.
      int64_t e = i < indices.size() ? std::clamp<int64_t>(indices[i] < 0 ? indices[i] + n : indices[i], 0, n) : n;
      out.push_back(slice_axis(a, ax, prev, std::max(prev, e)));
      prev = e;
    }
    return out;
  });
}

std::vector<Array> split(const Array& a, int64_t sections, int axis) {
  return with_name("split", [&]() -> std::vector<Array> {
    int ax = normalize_axis("split", axis, a.ndim());
    int64_t n = a.shape()[size_t(ax)];
    if (sections <= 0 || n % sections != 0)
      fail("split", "array split does not result in an equal division: ", n, " into ", sections, " sections");
    std::vector<int64_t> idx;
    for (int64_t i = 1; i < sections; i++) idx.push_back(i * (n / sections));
    return split(a, idx, ax);
  });
}

Array flip(const Array& a, Axes axes) {
  return with_name("flip", [&]() -> Array {
    Params p;
    p.axes = normalize_axes("flip", axes, a.ndim());
    if (p.axes.empty()) return a;
    return bind1(Prim::Flip, a, p);
  });
}

Array repeat(const Array& a, int64_t repeats, std::optional<int> axis) {
  return with_name("repeat", [&]() -> Array {
    if (repeats < 0) fail("repeat", "got repeats ", repeats, ", expected >= 0");
    Array x = axis ? a : ravel(a);
    int ax = normalize_axis("repeat", axis ? *axis : 0, x.ndim());
    Shape s = x.shape();
    s.insert(s.begin() + ax + 1, 1);
    Shape e = s;
    e[size_t(ax) + 1] = repeats;
    Shape out = x.shape();
    out[size_t(ax)] *= repeats;
    return reshape(broadcast(reshape(x, s), e), out);
  });
}

Array repeat(const Array& a, const std::vector<int64_t>& repeats, std::optional<int> axis) {
  return with_name("repeat", [&]() -> Array {
    Array x = axis ? a : ravel(a);
    int ax = normalize_axis("repeat", axis ? *axis : 0, x.ndim());
    int64_t n = x.shape()[size_t(ax)];
    if (repeats.size() == 1) return repeat(x, repeats[0], ax);
    if (int64_t(repeats.size()) != n)
      fail("repeat", "got ", repeats.size(), " repeats for an axis of size ", n, ", expected ", n, " or 1");
    std::vector<int32_t> idx;
    for (int64_t i = 0; i < n; i++) {
      if (repeats[size_t(i)] < 0) fail("repeat", "got a negative repeat count ", repeats[size_t(i)]);
      for (int64_t k = 0; k < repeats[size_t(i)]; k++) idx.push_back(int32_t(i));
    }
    return take(x, array(idx, {int64_t(idx.size())}), ax);
  });
}

Array tile(const Array& a, const std::vector<int64_t>& reps) {
  return with_name("tile", [&]() -> Array {
    for (int64_t r : reps)
      if (r < 0) fail("tile", "got a negative repetition ", r);
    size_t nd = std::max(reps.size(), size_t(a.ndim()));
    Shape s(nd - size_t(a.ndim()), 1);
    s.insert(s.end(), a.shape().begin(), a.shape().end());
    std::vector<int64_t> r(nd - reps.size(), 1);
    r.insert(r.end(), reps.begin(), reps.end());
    Shape split_shape, expanded, out;
    for (size_t i = 0; i < nd; i++) {
      split_shape.push_back(1);
      split_shape.push_back(s[i]);
      expanded.push_back(r[i]);
      expanded.push_back(s[i]);
      out.push_back(r[i] * s[i]);
    }
    // A new array in NumPy, so the bound of created arrays (the view below could stay lazy).
    check_array_size("tile", expanded, a.dtype());
    return reshape(broadcast(reshape(a, split_shape), expanded), out);
  });
}

Array take(const Array& a, const Array& indices, std::optional<int> axis) {
  return with_name("take", [&]() -> Array {
    Array x = axis ? a : ravel(a);
    int ax = normalize_axis("take", axis ? *axis : 0, x.ndim());
    if (!is_int(indices.dtype()))
      fail("take", "got indices of dtype ", dtype_name(indices.dtype()), ", expected an integer dtype");
    if (x.shape()[size_t(ax)] == 0 && indices.size() > 0)
      fail("take", "cannot take from an empty axis ", ax, " of shape ", shape_str(x.shape()));
    Params p;
    p.axes = {ax};
    return frontend::bind(Prim::Gather, {x, indices}, p);
  });
}

Array take_along_axis(const Array& a, const Array& indices, int axis) {
  return with_name("take_along_axis", [&]() -> Array {
    int ax = normalize_axis("take_along_axis", axis, a.ndim());
    if (indices.ndim() != a.ndim())
      fail("take_along_axis", "got indices of rank ", indices.ndim(), " for an array of rank ", a.ndim(),
           ", expected equal ranks");
    if (!is_int(indices.dtype()))
      fail("take_along_axis", "got indices of dtype ", dtype_name(indices.dtype()), ", expected an integer dtype");
    // Broadcast every axis but `ax`, then gather from the flattened array with flat indices.
    Shape a_other = a.shape(), i_other = indices.shape();
    a_other[size_t(ax)] = 1;
    i_other[size_t(ax)] = 1;
    Shape b = broadcast_shape("take_along_axis", {a_other, i_other});
    Shape ishape = b;
    ishape[size_t(ax)] = indices.shape()[size_t(ax)];
    Shape ashape = b;
    ashape[size_t(ax)] = a.shape()[size_t(ax)];
    Array x = broadcast(a, ashape);
    int64_t n = ashape[size_t(ax)];
    Array idx = cast(broadcast(indices, ishape), DType::Int32, false);
    Array nn = constant({}, DType::Int32, double(n), a.device());
    idx = where(less(idx, 0), add(idx, nn), idx);
    idx = clip(idx, Array(0), subtract(nn, 1));
    Array flat = constant(ishape, DType::Int32, 0, a.device());
    int64_t stride = 1;
    for (int i = int(ishape.size()) - 1; i >= 0; i--) {
      Array term = i == ax ? idx : iota(ishape, i, a.device());
      flat = add(flat, multiply(term, constant({}, DType::Int32, double(stride), a.device())));
      stride *= ashape[size_t(i)];
    }
    return take(ravel(x), flat, 0);
  });
}

}  // namespace kiln::numpy
