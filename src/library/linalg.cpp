// numpy linear algebra: matmul, dot, vdot, inner, outer, tensordot and einsum.
// All are one labelled contraction: broadcast, multiply, ReduceSum (one fused kernel).
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "frontend/primitive.h"
#include "library/array_args.h"
#include "library/einsum_spec.h"
#include "library/numpy.h"

namespace kiln::numpy {
namespace {

using frontend::bind;
using frontend::Params;
using frontend::Prim;

// ---- primitive shorthands (each a no-op when nothing changes, so views stay simple) ----

using numpy::detail::cast;
using numpy::detail::expand_to;
using numpy::detail::permute;
using numpy::detail::reshape_to;

std::string shapes_str(const Array& a, const Array& b) {
  return shape_str(a.shape()) + " and " + shape_str(b.shape());
}

// ---- the contraction ----

// An operand whose axes carry labels; equal labels across operands are the same axis.
struct Labeled {
  Array x;
  std::vector<int> labels;
};

bool has(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }
int index_of(const std::vector<int>& v, int l) {
  return int(std::find(v.begin(), v.end(), l) - v.begin());
}

// The result type (JAX promotion of all operands) and the type products are summed in.
// bool sums in int32 and is cast back (x != 0), which gives jnp's OR-of-ANDs; float16
// sums in float32 and rounds once at the end, as XLA's CPU dot does.
struct ContractType {
  TypeInfo out;
  DType acc;
};

ContractType contract_type(const std::vector<Array>& xs) {
  TypeInfo t{xs[0].dtype(), xs[0].weak_type()};
  for (size_t i = 1; i < xs.size(); i++) t = promote(t, {xs[i].dtype(), xs[i].weak_type()});
  DType acc = t.dtype == DType::Bool      ? DType::Int32
              : t.dtype == DType::Float16 ? DType::Float32
                                          : t.dtype;
  return {t, acc};
}

// Sums the product of one or two labelled operands over every label not in `keep`; the
// result's axes follow `keep`. Label sizes must agree or be 1 (which broadcasts); callers
// validate that. The operands are transposed and reshaped (views) so that kept labels come
// first and summed labels last, then expanded to one shape: the lazy frontend fuses the
// multiply into the ReduceSum kernel, so nothing of the full shape is materialized.
Array contract(const std::vector<Labeled>& ops, const std::vector<int>& keep, DType acc) {
  std::vector<int> order = keep;
  for (auto& op : ops)
    for (int l : op.labels)
      if (!has(order, l)) order.push_back(l);
  const size_t nsum = order.size() - keep.size();
  std::map<int, int64_t> size;
  for (auto& op : ops)
    for (size_t i = 0; i < op.labels.size(); i++) {
      auto [it, fresh] = size.emplace(op.labels[i], op.x.shape()[i]);
      if (!fresh && it->second == 1) it->second = op.x.shape()[i];
    }
  Shape full;
  for (int l : order) full.push_back(size[l]);
  if (ops.size() == 1 && nsum == 0) {
    std::vector<int> perm;
    for (int l : order) perm.push_back(index_of(ops[0].labels, l));
    return permute(ops[0].x, perm);
  }
  Array prod;
  for (auto& op : ops) {
    std::vector<int> perm;
    Shape aligned;
    for (int l : order) {
      if (has(op.labels, l)) {
        perm.push_back(index_of(op.labels, l));
        aligned.push_back(op.x.shape()[size_t(perm.back())]);
      } else {
        aligned.push_back(1);
      }
    }
    // Views first, the cast after: expanding a cast expression would realize it.
    Array y = cast(expand_to(reshape_to(permute(op.x, perm), aligned), full), acc, false);
    prod = prod.valid() ? frontend::bind(Prim::Mul, {prod, y}) : y;
  }
  if (nsum == 0) return prod;
  Params p;
  p.axes.resize(nsum);
  std::iota(p.axes.begin(), p.axes.end(), int(keep.size()));
  return frontend::bind(Prim::ReduceSum, {prod}, p);
}

// Contracts two validated operands and casts to their promoted type.
Array contract2(const Array& a, const std::vector<int>& la, const Array& b,
                const std::vector<int>& lb, const std::vector<int>& keep) {
  ContractType t = contract_type({a, b});
  Array r = contract({{a, la}, {b, lb}}, keep, t.acc);
  return cast(r, t.out.dtype, t.out.weak);
}

std::vector<int> iota_labels(int from, int n) {
  std::vector<int> v(size_t(std::max(n, 0)));
  std::iota(v.begin(), v.end(), from);
  return v;
}

// The elementwise product of a scalar with an array (dot/inner with a 0-d operand).
Array scalar_product(const Array& a, const Array& b) {
  std::vector<int> la = iota_labels(0, a.ndim()), lb = iota_labels(0, b.ndim());
  return contract2(a, la, b, lb, a.ndim() ? la : lb);
}

Array flatten_(const Array& a) { return reshape_to(a, Shape{a.size()}); }

// Takes the diagonal of every label repeated within one operand: the two axes move last,
// merge into one of n*n elements, and a stride of n + 1 keeps the diagonal (a view).
Labeled take_diagonals(Labeled op) {
  for (;;) {
    size_t i = 0, j = 0;
    for (size_t a = 0; a < op.labels.size() && !j; a++)
      for (size_t b = a + 1; b < op.labels.size() && !j; b++)
        if (op.labels[a] == op.labels[b]) i = a, j = b;
    if (!j) return op;
    std::vector<int> perm, labels;
    Shape s;
    for (size_t k = 0; k < op.labels.size(); k++)
      if (k != i && k != j) {
        perm.push_back(int(k));
        labels.push_back(op.labels[k]);
        s.push_back(op.x.shape()[k]);
      }
    perm.push_back(int(i));
    perm.push_back(int(j));
    const int64_t n = op.x.shape()[i];
    s.push_back(n * n);
    Array x = reshape_to(permute(op.x, perm), s);
    Params p;
    p.strides.assign(s.size(), 1);
    p.strides.back() = n + 1;
    op.x = frontend::bind(Prim::Stride, {x}, p);
    labels.push_back(op.labels[i]);
    op.labels = labels;
  }
}

}  // namespace

// ---- the public functions ----

Array matmul(const Array& a, const Array& b) {
  return with_name("matmul", [&]() -> Array {
    if (a.ndim() == 0 || b.ndim() == 0)
      fail("matmul", "got shapes ", shapes_str(a, b),
           ", expected operands of rank >= 1 (use multiply for scalars)");
    const bool a1 = a.ndim() == 1, b1 = b.ndim() == 1;
    // NumPy: a 1-d a gets a leading 1, a 1-d b a trailing 1, removed from the result.
    const Shape as = a1 ? Shape{1, a.shape(0)} : a.shape();
    const Shape bs = b1 ? Shape{b.shape(0), 1} : b.shape();
    const int64_t ka = as.back(), kb = bs[bs.size() - 2];
    if (ka != kb)
      fail("matmul", "inner dimensions differ: got shapes ", shapes_str(a, b),
           ", expected a.shape[-1] (", ka, ") == b.shape[", b1 ? "0" : "-2", "] (", kb, ")");
    const int na = int(as.size()) - 2, nb = int(bs.size()) - 2, R = std::max(na, nb);
    for (int i = 0; i < R; i++) {
      int64_t da = i < R - na ? 1 : as[size_t(i - (R - na))];
      int64_t db = i < R - nb ? 1 : bs[size_t(i - (R - nb))];
      if (da != db && da != 1 && db != 1)
        fail("matmul", "batch dimensions do not broadcast: got shapes ", shapes_str(a, b),
             ", expected equal batch sizes or 1");
    }
    // Labels: batch 0..R-1 (right-aligned, as broadcasting), then n = R, k = R+1, m = R+2.
    std::vector<int> la = iota_labels(R - na, na), lb = iota_labels(R - nb, nb);
    la.insert(la.end(), {R, R + 1});
    lb.insert(lb.end(), {R + 1, R + 2});
    std::vector<int> keep = iota_labels(0, R);
    keep.insert(keep.end(), {R, R + 2});
    Array r = contract2(reshape_to(a, as), la, reshape_to(b, bs), lb, keep);
    Shape out = r.shape();
    if (b1) out.erase(out.end() - 1);
    if (a1) out.erase(out.end() - (b1 ? 1 : 2));
    return reshape_to(r, out);
  });
}

Array dot(const Array& a, const Array& b) {
  return with_name("dot", [&]() -> Array {
    if (a.ndim() == 0 || b.ndim() == 0) return scalar_product(a, b);
    const int na = a.ndim(), nb = b.ndim();
    const int bk = nb == 1 ? 0 : nb - 2;  // b's contracted axis
    if (a.shape(-1) != b.shape()[size_t(bk)])
      fail("dot", "got shapes ", shapes_str(a, b), ", expected a.shape[-1] (", a.shape(-1),
           ") == b.shape[", nb == 1 ? "0" : "-2", "] (", b.shape()[size_t(bk)], ")");
    const int K = na - 1;
    std::vector<int> la = iota_labels(0, na), lb, keep = iota_labels(0, na - 1);
    for (int i = 0, next = na; i < nb; i++) {
      lb.push_back(i == bk ? K : next++);
      if (i != bk) keep.push_back(lb.back());
    }
    return contract2(a, la, b, lb, keep);
  });
}

Array vdot(const Array& a, const Array& b) {
  return with_name("vdot", [&]() -> Array {
    if (a.size() != b.size())
      fail("vdot", "got shapes ", shapes_str(a, b), " with ", a.size(), " and ", b.size(),
           " elements, expected equal sizes");
    return contract2(flatten_(a), {0}, flatten_(b), {0}, {});
  });
}

Array inner(const Array& a, const Array& b) {
  return with_name("inner", [&]() -> Array {
    if (a.ndim() == 0 || b.ndim() == 0) return scalar_product(a, b);
    if (a.shape(-1) != b.shape(-1))
      fail("inner", "got shapes ", shapes_str(a, b), ", expected a.shape[-1] (", a.shape(-1),
           ") == b.shape[-1] (", b.shape(-1), ")");
    const int na = a.ndim(), nb = b.ndim(), K = na + nb;
    std::vector<int> la = iota_labels(0, na - 1), lb = iota_labels(na - 1, nb - 1);
    std::vector<int> keep = la;
    keep.insert(keep.end(), lb.begin(), lb.end());
    la.push_back(K);
    lb.push_back(K);
    return contract2(a, la, b, lb, keep);
  });
}

Array outer(const Array& a, const Array& b) {
  return with_name("outer", [&]() -> Array { return contract2(flatten_(a), {0}, flatten_(b), {1}, {0, 1}); });
}

Array tensordot(const Array& a, const Array& b, int axes) {
  return with_name("tensordot", [&]() -> Array {
    if (axes < 0 || axes > std::min(a.ndim(), b.ndim()))
      fail("tensordot", "got axes=", axes, " for shapes ", shapes_str(a, b),
           ", expected 0 <= axes <= ", std::min(a.ndim(), b.ndim()));
    std::vector<int> aa, ba;
    for (int i = 0; i < axes; i++) {
      aa.push_back(a.ndim() - axes + i);
      ba.push_back(i);
    }
    return tensordot(a, b, {aa, ba});
  });
}

Array tensordot(const Array& a, const Array& b,
                const std::pair<std::vector<int>, std::vector<int>>& axes) {
  return with_name("tensordot", [&]() -> Array {
    const auto& [aa, ba] = axes;
    if (aa.size() != ba.size())
      fail("tensordot", "got ", aa.size(), " axes for a and ", ba.size(),
           " for b, expected equal counts");
    // Contracted labels are 0..n-1; free axes get labels from n on.
    const int n = int(aa.size());
    std::vector<int> la(size_t(a.ndim()), -1), lb(size_t(b.ndim()), -1);
    for (int j = 0; j < n; j++) {
      int x = aa[size_t(j)] < 0 ? aa[size_t(j)] + a.ndim() : aa[size_t(j)];
      int y = ba[size_t(j)] < 0 ? ba[size_t(j)] + b.ndim() : ba[size_t(j)];
      if (x < 0 || x >= a.ndim() || y < 0 || y >= b.ndim())
        fail("tensordot", "axis pair (", aa[size_t(j)], ", ", ba[size_t(j)],
             ") is out of range for shapes ", shapes_str(a, b));
      if (la[size_t(x)] != -1 || lb[size_t(y)] != -1)
        fail("tensordot", "axis pair (", aa[size_t(j)], ", ", ba[size_t(j)],
             ") repeats an axis, expected each axis at most once");
      if (a.shape()[size_t(x)] != b.shape()[size_t(y)])
        fail("tensordot", "contracted axes ", x, " of ", shape_str(a.shape()), " and ", y, " of ",
             shape_str(b.shape()), " differ in size (", a.shape()[size_t(x)], " vs ",
             b.shape()[size_t(y)], "), expected equal sizes");
      la[size_t(x)] = lb[size_t(y)] = j;
    }
    std::vector<int> keep;
    int next = n;
    for (auto* l : {&la, &lb})
      for (int& v : *l)
        if (v == -1) keep.push_back(v = next++);
    return contract2(a, la, b, lb, keep);
  });
}

Array einsum(const std::string& subscripts, const std::vector<Array>& operands) {
  return with_name("einsum", [&]() -> Array {
    // ---- parse and validate everything before touching an array ----
    std::vector<Shape> shapes;
    for (const Array& x : operands) shapes.push_back(x.shape());
    const detail::EinsumSpec spec = detail::parse_einsum(subscripts, shapes);
    const std::vector<std::vector<int>>& labels = spec.labels;
    const std::vector<int>& out = spec.out;

    // ---- compute: diagonals, then pairwise contractions left to right ----
    const ContractType t = contract_type(operands);
    std::vector<Labeled> ops;
    for (size_t i = 0; i < operands.size(); i++)
      ops.push_back(take_diagonals({operands[i], labels[i]}));
    // Labels still needed after operand i: the output's and those of later operands.
    auto needed_after = [&](size_t i) {
      std::set<int> need(out.begin(), out.end());
      for (size_t j = i + 1; j < ops.size(); j++)
        need.insert(ops[j].labels.begin(), ops[j].labels.end());
      return need;
    };
    // Sums labels no one else needs out of one operand, keeping the product small.
    auto presum = [&](Labeled op, const std::set<int>& need) {
      std::vector<int> keep;
      for (int l : op.labels)
        if (need.count(l)) keep.push_back(l);
      if (keep.size() == op.labels.size()) return op;
      return Labeled{contract({op}, keep, t.acc), keep};
    };
    Labeled acc = presum(ops[0], needed_after(0));
    for (size_t i = 1; i < ops.size(); i++) {
      std::set<int> need = needed_after(i);
      std::set<int> need_i = need;
      need_i.insert(acc.labels.begin(), acc.labels.end());
      Labeled op = presum(ops[i], need_i);
      std::vector<int> keep;
      for (int l : out)
        if (has(acc.labels, l) || has(op.labels, l)) keep.push_back(l);
      for (auto* ls : {&acc.labels, &op.labels})
        for (int l : *ls)
          if (need.count(l) && !has(keep, l)) keep.push_back(l);
      acc = Labeled{contract({acc, op}, keep, t.acc), keep};
    }
    if (acc.labels != out) acc = Labeled{contract({acc}, out, t.acc), out};
    return cast(acc.x, t.out.dtype, t.out.weak);
  });
}

}  // namespace kiln::numpy
