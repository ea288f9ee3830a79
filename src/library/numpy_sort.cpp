// Sorting without a sort primitive: a bitonic network of compare-exchange steps, each one
// elementwise expression over views, so sort/argsort/top_k differentiate, batch and jit.
//
// Algorithm. The sorted axis is moved last and padded to N = 2^m. Stage (k, j), for
// k = 2, 4, .., N and j = k/2, .., 1, pairs element i with i ^ j: that partner is a view
// (reshape to [.., N/2j, 2, j], flip the axis of size 2, reshape back). Element i keeps
// the smaller of the pair (in the order below) when "i is the lower of the pair" equals
// "i lies in an ascending block of size k", and the larger otherwise. m(m+1)/2 stages,
// n log^2 n compares: no data-dependent control flow, so it runs unchanged under tracing.
//
// Order. Every element carries its original index; padding carries indices >= n and sorts
// after everything. Keys compare as NumPy: NaN after every number (before it when
// descending), -0.0 equal to 0.0, and equal keys by index, which makes the network stable
// (argsort agrees with NumPy's kind="stable" and JAX's default). Each step selects with
// `where`, never with min/max, so the tangent of sort is the permuted input tangent, even at
// ties (min/max would split it).
#include "library/array_args.h"
#include "library/lax.h"
#include "library/numpy.h"

namespace kiln::numpy {

using namespace detail;

namespace {

struct Keyed {
  Array key;  // [.., N]
  Array idx;  // [.., N] int32, original positions (>= n for padding)
};

// a strictly before b (the order described at the top), elementwise.
Array before(const Keyed& a, const Keyed& b, int64_t n, bool descending) {
  Array lt = descending ? greater(a.key, b.key) : less(a.key, b.key);
  Array eq = equal(a.key, b.key);
  if (is_float(a.key.dtype())) {
    Array an = isnan(a.key), bn = isnan(b.key);
    Array nan_order = descending ? logical_and(an, logical_not(bn)) : logical_and(bn, logical_not(an));
    lt = logical_or(lt, nan_order);
    eq = logical_or(eq, logical_and(an, bn));
  }
  Array real = logical_or(lt, logical_and(eq, less(a.idx, b.idx)));
  Array a_pad = greater_equal(a.idx, Array(int(n))), b_pad = greater_equal(b.idx, Array(int(n)));
  // Two pads order by index; a real element is before any pad.
  return where(logical_or(a_pad, b_pad), logical_or(logical_not(a_pad), logical_and(b_pad, less(a.idx, b.idx))),
               real);
}

// The element at i ^ j along the last axis (a view, no data moves).
Array partner(const Array& x, int64_t j) {
  Shape s = x.shape();
  int64_t N = s.back();
  Shape split = s;
  split.back() = N / (2 * j);
  split.push_back(2);
  split.push_back(j);
  return reshape(flip(reshape(x, split), Axes(int(split.size()) - 2)), s);
}

// Sorts `key` (sorted axis last) and returns sorted keys with their original indices.
Keyed bitonic_sort_last(const Array& key, bool descending) {
  int64_t n = key.shape().back();
  int64_t N = 1;
  while (N < n) N *= 2;
  int nd = key.ndim();
  Shape idx_shape(size_t(nd), 1);
  idx_shape.back() = N;
  Array iota = arange(int64_t(0), N, int64_t(1), DType::Int32);
  Keyed cur{key, broadcast_to(iota.reshape(idx_shape), [&] {
               Shape s = key.shape();
               s.back() = N;
               return s;
             }())};
  if (N > n) {
    std::vector<std::pair<int64_t, int64_t>> widths(size_t(nd), {0, 0});
    widths.back() = {0, N - n};
    cur.key = pad(key, widths);
  }
  for (int64_t k = 2; k <= N; k *= 2) {
    for (int64_t j = k / 2; j >= 1; j /= 2) {
      Keyed other{partner(cur.key, j), partner(cur.idx, j)};
      // Positions that keep the smaller element: lower of the pair == in an ascending block.
      Array lower = equal(mod(floor_divide(iota, Array(int(j))), Array(2)), Array(0));
      Array ascending = equal(mod(floor_divide(iota, Array(int(k))), Array(2)), Array(0));
      Array keep_min = equal(lower, ascending).reshape(idx_shape);
      // Keeping the smaller: stay unless the partner is strictly before; the larger: stay
      // unless this one is strictly before. Ties stay on both sides, so each step permutes.
      Array take_self = where(keep_min, logical_not(before(other, cur, n, descending)),
                              logical_not(before(cur, other, n, descending)));
      cur = Keyed{where(take_self, cur.key, other.key), where(take_self, cur.idx, other.idx)};
      // One kernel per step: each step reads its input at two positions, so an unrealized
      // chain would double in size per step. A no-op under tracing (jit fuses by its rules).
      cur.key.eval();
      cur.idx.eval();
    }
  }
  if (N > n) {
    std::vector<Index> keep{ellipsis, Slice{0, n, std::nullopt}};
    cur = Keyed{index(cur.key, keep), index(cur.idx, keep)};
  }
  return cur;
}

// Moves `axis` last (flattening first for nullopt) and sorts.
Keyed sort_along(const char* op, const Array& a, std::optional<int> axis, bool descending, int* ax_out) {
  Array x = a;
  int ax;
  if (!axis) {
    x = ravel(a);
    ax = 0;
  } else {
    if (a.ndim() == 0) fail(op, "got a 0-d array, expected at least one dimension (or axis=None)");
    ax = normalize_axis(op, *axis, a.ndim());
  }
  *ax_out = ax;
  Array last = moveaxis(x, ax, -1);
  // Bool keys sort as int32 (false < true) and cast back.
  if (last.dtype() == DType::Bool) last = last.astype(DType::Int32);
  if (last.shape().back() <= 1) {
    Shape s = last.shape();
    return Keyed{last, zeros(s, DType::Int32)};
  }
  return bitonic_sort_last(last, descending);
}

}  // namespace

Array sort(const Array& a, std::optional<int> axis, bool descending) {
  return with_name("sort", [&]() -> Array {
    int ax;
    Keyed r = sort_along("sort", a, axis, descending, &ax);
    Array key = a.dtype() == DType::Bool ? r.key.astype(DType::Bool) : r.key;
    return moveaxis(key, -1, ax);
  });
}

Array argsort(const Array& a, std::optional<int> axis, bool descending) {
  return with_name("argsort", [&]() -> Array {
    int ax;
    Keyed r = sort_along("argsort", a, axis, descending, &ax);
    return moveaxis(r.idx, -1, ax);
  });
}

}  // namespace kiln::numpy

namespace kiln::lax {

std::pair<Array, Array> top_k(const Array& operand, int64_t k, int axis) {
  return with_name("top_k", [&]() -> std::pair<Array, Array> {
    if (operand.ndim() == 0) fail("top_k", "got a 0-d array, expected at least one dimension");
    int ax = numpy::detail::normalize_axis("top_k", axis, operand.ndim());
    int64_t n = operand.shape(ax);
    if (k < 0 || k > n) fail("top_k", "got k = ", k, ", expected 0 <= k <= ", n, " (the size of axis ", ax, ")");
    // Descending and stable: of equal values the lower index comes first, as JAX's top_k.
    int sorted_ax;
    numpy::Keyed r = numpy::sort_along("top_k", operand, ax, /*descending=*/true, &sorted_ax);
    std::vector<Index> keep{ellipsis, Slice{0, k, std::nullopt}};
    Array values = numpy::index(r.key, keep), indices = numpy::index(r.idx, keep);
    if (operand.dtype() == DType::Bool) values = values.astype(DType::Bool);
    return {numpy::moveaxis(values, -1, ax), numpy::moveaxis(indices, -1, ax)};
  });
}

}  // namespace kiln::lax
