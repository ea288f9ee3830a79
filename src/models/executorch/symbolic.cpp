// Symbolic rules of bucketed traces: which result axes are dynamic (a symbol: the bucket's
// physical extent and the valid extent as a traced int32), and the few rules that change
// the computation: reductions and contractions over a dynamic axis masked to their identity,
// cat along a dynamic axis as a gather with run-time offsets, arange from run-time sizes.
// Everything else falls back to an exact-shape trace (NeedsExactShape).
#include "models/executorch/symbolic.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "library/numpy.h"

namespace kiln::executorch {

namespace np = kiln::numpy;

namespace {

using SymAxes = std::vector<int>;  // a symbol id per axis, -1 static
using SymRule = void (*)(OpCall&, OpRule);

const Slot& arg_slot(const OpCall& c, size_t i) { return c.frame().slot(c.arg_index(i)); }

bool is_tensor(const OpCall& c, size_t i) {
  return i < c.size() && std::holds_alternative<formats::PteTensor>(arg_slot(c, i).value->value);
}

SymAxes axes_of_slot(const Frame& f, int32_t v, int rank) {
  SymAxes a = f.slot(v).axes;
  a.resize(size_t(rank), -1);
  return a;
}

SymAxes axes_of(const OpCall& c, size_t i) { return axes_of_slot(c.frame(), c.arg_index(i), c.tensor(i).ndim()); }

bool any_sym(const SymAxes& a) {
  return std::any_of(a.begin(), a.end(), [](int s) { return s >= 0; });
}

int int_sym(const OpCall& c, size_t i) { return i < c.size() ? arg_slot(c, i).sym : -1; }

// The symbols of an IntList's items (-1 for static items).
SymAxes list_syms(const OpCall& c, size_t i) {
  SymAxes out;
  if (const auto* l = std::get_if<formats::PteIntList>(&arg_slot(c, i).value->value))
    for (int64_t v : l->items) out.push_back(c.frame().slot(int32_t(v)).sym);
  return out;
}

bool touches_symbols(const OpCall& c) {
  for (size_t i = 0; i < c.size(); ++i) {
    const Slot& s = arg_slot(c, i);
    if (s.sym >= 0 || any_sym(s.axes) || any_sym(list_syms(c, i))) return true;
    if (const auto* l = std::get_if<formats::PteTensorList>(&s.value->value))
      for (int32_t v : l->items)
        if (any_sym(c.frame().slot(v).axes)) return true;
  }
  return false;
}

Array result_array(const OpCall& c, size_t k) { return c.frame().slot(c.result_slots().at(k)).array; }
void set_axes(OpCall& c, size_t k, SymAxes a) {
  if (any_sym(a)) c.frame().slot(c.result_slots().at(k)).axes = std::move(a);
}

// Runs the plain rule reading symbols' physical sizes (the rule uses them as shapes).
void with_physical(OpCall& c, OpRule plain) {
  struct Reset {
    Frame& f;
    ~Reset() { f.physical_ints = false; }
  } reset{c.frame()};
  c.frame().physical_ints = true;
  plain(c);
}

int wrap(int64_t dim, int rank) {
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= std::max(rank, 1)) throw NeedsExactShape("dim out of range");
  return int(d);
}

std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

Array int32_scalar(int64_t v) { return np::array(std::vector<int32_t>{int32_t(v)}, Shape{}); }
Array iota(int64_t n) { return np::arange_impl(0, double(n), 1, true, int32); }

// True where the index along `axis` of an array of rank `rank` is below the symbol's valid
// extent, shaped to broadcast against that array.
Array valid_mask(const Sym& s, int rank, int axis) {
  std::vector<int64_t> shape(size_t(rank), 1);
  shape[size_t(axis)] = s.physical;
  return np::less(np::reshape(iota(s.physical), shape), s.valid);
}

Array masked(const Frame& f, const Array& x, const SymAxes& axes, int axis, const Array& fill) {
  return np::where(valid_mask(f.sym(axes[size_t(axis)]), x.ndim(), axis), x, fill);
}

// The symbols of a result of shape `out` broadcast from the tensor arguments (aligned from
// the right; an axis is dynamic where an argument's dynamic axis has the result's size).
SymAxes broadcast_axes(const OpCall& c, const Shape& out) {
  SymAxes r(out.size(), -1);
  auto merge = [&](const SymAxes& ax, const Shape& shape) {
    for (size_t j = 0; j < shape.size() && j < out.size(); ++j) {
      const size_t o = out.size() - shape.size() + j;
      if (ax[j] >= 0 && shape[j] == out[o] && r[o] < 0) r[o] = ax[j];
    }
  };
  for (size_t i = 0; i < c.size(); ++i) {
    if (is_tensor(c, i) && !c.is_none(i)) merge(axes_of(c, i), c.tensor(i).shape());
    if (const auto* l = std::get_if<formats::PteTensorList>(&arg_slot(c, i).value->value))
      for (int32_t v : l->items) {
        const Array a = c.frame().slot(v).array;
        if (a.valid()) merge(axes_of_slot(c.frame(), v, a.ndim()), a.shape());
      }
  }
  return r;
}

void elementwise(OpCall& c, OpRule plain) {
  plain(c);
  for (size_t k = 0; k < c.result_slots().size(); ++k)
    if (const Array r = result_array(c, k); r.valid()) set_axes(c, k, broadcast_axes(c, r.shape()));
}

void layer_norm(OpCall& c, OpRule plain) {  // (input, normalized_shape, weight, bias, eps)
  const SymAxes ax = axes_of(c, 0);
  const size_t normalized = c.ints(1).size();
  for (size_t j = ax.size() - std::min(normalized, ax.size()); j < ax.size(); ++j)
    if (ax[j] >= 0) throw NeedsExactShape("layer norm over a dynamic axis");
  elementwise(c, plain);
}

void softmax(OpCall& c, OpRule plain) {  // (self, dim, half_to_float)
  const SymAxes ax = axes_of(c, 0);
  const Array x = c.tensor(0);
  const int dim = wrap(c.integer(1), x.ndim());
  if (ax[size_t(dim)] >= 0)
    c.set_input(0, masked(c.frame(), x, ax, dim, Array(-std::numeric_limits<double>::infinity())));
  plain(c);
  set_axes(c, 0, ax);
}

// Reductions (self, dims, keepdim, ...): a dynamic reduced axis is masked to the identity.
template <int kIdentity>  // 0: zero, 1: -inf, 2: false
void reduction(OpCall& c, OpRule plain) {
  const Array x = c.tensor(0);
  SymAxes ax = axes_of(c, 0);
  std::vector<bool> reduced(ax.size(), c.is_none(1));
  if (!c.is_none(1)) {
    const std::vector<int64_t> dims = c.is_int_list(1) ? c.ints(1) : std::vector<int64_t>{c.integer(1)};
    if (dims.empty()) reduced.assign(ax.size(), true);
    for (int64_t d : dims) reduced[size_t(wrap(d, x.ndim()))] = true;
  }
  Array in = x;
  for (size_t j = 0; j < ax.size(); ++j) {
    if (!reduced[j] || ax[j] < 0) continue;
    if (kIdentity < 0) throw NeedsExactShape("a mean over a dynamic axis");
    const Array fill = kIdentity == 0   ? Array(0)
                       : kIdentity == 1 ? Array(-std::numeric_limits<double>::infinity())
                                        : Array(false);
    in = masked(c.frame(), in, ax, int(j), fill);
  }
  c.set_input(0, in);
  plain(c);
  const bool keepdim = c.boolean(2);
  SymAxes out;
  for (size_t j = 0; j < ax.size(); ++j)
    if (!reduced[j]) out.push_back(ax[j]);
    else if (keepdim) out.push_back(-1);
  set_axes(c, 0, out);
}

// mm (a, b), bmm (a, b), addmm (bias, a, b, beta, alpha): a dynamic contracted axis is
// masked to zero in both operands (padding may hold anything finite or not).
template <size_t kA>
void matmul(OpCall& c, OpRule plain) {
  const Array a = c.tensor(kA), b = c.tensor(kA + 1);
  const SymAxes aa = axes_of(c, kA), ba = axes_of(c, kA + 1);
  const int k = aa.back() >= 0 ? aa.back() : ba[ba.size() - 2];
  if (k >= 0) {
    SymAxes ka = aa, kb = ba;
    ka.back() = k;
    kb[kb.size() - 2] = k;
    c.set_input(kA, masked(c.frame(), a, ka, a.ndim() - 1, Array(0)));
    c.set_input(kA + 1, masked(c.frame(), b, kb, b.ndim() - 2, Array(0)));
  }
  plain(c);
  SymAxes out(aa.begin(), aa.end() - 1);
  out.push_back(ba.back());
  set_axes(c, 0, out);
}

// view (self, size): each dynamic axis must stay an axis of its own (the same static sizes
// before and after it), so that its valid region stays a prefix; else an exact-shape trace.
void view(OpCall& c, OpRule plain) {
  const SymAxes in = axes_of(c, 0);
  const Shape in_shape = c.tensor(0).shape();
  SymAxes out = list_syms(c, 1);
  with_physical(c, plain);
  const Shape out_shape = result_array(c, 0).shape();
  out.resize(out_shape.size(), -1);
  auto prod = [](const Shape& s, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t j = from; j < to; ++j) n *= s[j];
    return n;
  };
  // An axis of size 1 next to the dynamic one matches too (a bucket of 1): the size list's
  // own symbol says which axis it is.
  const SymAxes items = out;
  for (size_t p = 0; p < in.size(); ++p) {
    if (in[p] < 0) continue;
    std::optional<size_t> match;
    for (size_t q = 0; q < out.size(); ++q)
      if (out_shape[q] == in_shape[p] && prod(out_shape, 0, q) == prod(in_shape, 0, p) &&
          prod(out_shape, q + 1, out.size()) == prod(in_shape, p + 1, in.size()) &&
          (!match || (items[*match] < 0 && items[q] >= 0)))
        match = q;
    if (!match)
      throw NeedsExactShape("a view merging or splitting dynamic axis " + std::to_string(p) + " of " +
                            shape_text(in_shape) + " into " + shape_text(out_shape));
    if (out[*match] < 0) out[*match] = in[p];
  }
  set_axes(c, 0, out);
}

void permute(OpCall& c, OpRule plain) {  // (self, dims)
  const SymAxes in = axes_of(c, 0);
  SymAxes out;
  for (int64_t d : c.ints(1)) out.push_back(in[size_t(wrap(d, int(in.size())))]);
  plain(c);
  set_axes(c, 0, out);
}

void unsqueeze(OpCall& c, OpRule plain) {  // (self, dim)
  SymAxes ax = axes_of(c, 0);
  ax.insert(ax.begin() + wrap(c.integer(1), int(ax.size()) + 1), -1);
  plain(c);
  set_axes(c, 0, ax);
}

void squeeze_dims(OpCall& c, OpRule plain) {  // (self, dims): dims of size 1 go
  const SymAxes ax = axes_of(c, 0);
  const Array x = c.tensor(0);
  std::vector<bool> gone(ax.size(), false);
  for (int64_t d : c.ints(1)) {
    const int j = wrap(d, x.ndim());
    gone[size_t(j)] = x.shape(j) == 1;
  }
  plain(c);
  SymAxes out;
  for (size_t j = 0; j < ax.size(); ++j)
    if (!gone[j]) out.push_back(ax[j]);
  set_axes(c, 0, out);
}

void expand(OpCall& c, OpRule plain) {  // (self, size, implicit)
  const SymAxes in = axes_of(c, 0);
  const Shape in_shape = c.tensor(0).shape();
  SymAxes out = list_syms(c, 1);
  with_physical(c, plain);
  const Shape out_shape = result_array(c, 0).shape();
  const size_t lead = out.size() - in.size();
  for (size_t j = lead; j < out.size(); ++j)
    if (out[j] < 0 && in[j - lead] >= 0 && in_shape[j - lead] == out_shape[j]) out[j] = in[j - lead];
  set_axes(c, 0, out);
}

// slice (self, dim, start?, end?, step): [0, end) of a static axis with a dynamic end gives a
// dynamic axis; a dynamic axis sliced whole stays as it is; anything else is exact-shape.
void slice(OpCall& c, OpRule plain) {
  SymAxes ax = axes_of(c, 0);
  const Array x = c.tensor(0);
  const int dim = wrap(c.integer(1), x.ndim());
  const int end_sym = int_sym(c, 3);
  const bool from_zero = c.is_none(2) || (int_sym(c, 2) < 0 && c.integer(2) == 0);
  const bool static_args = int_sym(c, 2) < 0 && end_sym < 0;
  if (ax[size_t(dim)] < 0 && static_args) {
    plain(c);
  } else if (ax[size_t(dim)] < 0 && from_zero && end_sym >= 0 && c.integer(4) == 1) {
    if (c.frame().sym(end_sym).physical > x.shape(dim)) throw NeedsExactShape("slice past the end");
    with_physical(c, plain);
    ax[size_t(dim)] = end_sym;
  } else if (ax[size_t(dim)] >= 0 && from_zero && c.integer(4) == 1 &&
             (c.is_none(3) || end_sym == ax[size_t(dim)] || (end_sym < 0 && c.integer(3) >= x.shape(dim)))) {
    with_physical(c, plain);
  } else {
    throw NeedsExactShape("a slice of a dynamic axis");
  }
  set_axes(c, 0, ax);
}

void select(OpCall& c, OpRule plain) {  // (self, dim, index)
  SymAxes ax = axes_of(c, 0);
  const int dim = wrap(c.integer(1), int(ax.size()));
  if (ax[size_t(dim)] >= 0) throw NeedsExactShape("a select on a dynamic axis");
  plain(c);
  ax.erase(ax.begin() + dim);
  set_axes(c, 0, ax);
}

// cat (tensors, dim) along a dynamic axis: the parts' valid rows are packed from the front,
// a gather whose source index moves at run-time offsets (the KV cache's append).
void cat(OpCall& c, OpRule plain) {
  const auto& items = std::get<formats::PteTensorList>(arg_slot(c, 0).value->value).items;
  const std::vector<Array> parts = c.tensors(0);
  if (parts.empty()) c.fail("no tensors to concatenate");
  const int dim = wrap(c.integer(1), parts[0].ndim());
  bool dynamic = false;
  for (size_t k = 0; k < parts.size(); ++k)
    dynamic |= axes_of_slot(c.frame(), items[k], parts[k].ndim())[size_t(dim)] >= 0;
  if (!dynamic) {
    plain(c);
    SymAxes out = broadcast_axes(c, result_array(c, 0).shape());
    out[size_t(dim)] = -1;
    return set_axes(c, 0, out);
  }
  const Array joined = np::concatenate(parts, dim);
  const Array i = iota(joined.shape(dim));
  Array index = i, at = int32_scalar(0);
  int64_t physical_at = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const int s = axes_of_slot(c.frame(), items[k], parts[k].ndim())[size_t(dim)];
    const Array n = s >= 0 ? c.frame().sym(s).valid : int32_scalar(parts[k].shape(dim));
    const Array inside = np::logical_and(np::greater_equal(i, at), np::less(i, np::add(at, n)));
    index = np::where(inside, np::add(np::subtract(i, at), int32_scalar(physical_at)), index);
    at = np::add(at, n);
    physical_at += parts[k].shape(dim);
  }
  c.result(np::take(joined, index, dim));
  SymAxes out = broadcast_axes(c, joined.shape());
  out[size_t(dim)] = c.frame().add_sym(Sym{joined.shape(dim), at});
  set_axes(c, 0, out);
}

void split_with_sizes(OpCall& c, OpRule plain) {  // (self, sizes, dim)
  const SymAxes ax = axes_of(c, 0);
  if (ax[size_t(wrap(c.integer(2), int(ax.size())))] >= 0) throw NeedsExactShape("a split of a dynamic axis");
  plain(c);
  for (size_t k = 0; k < c.result_slots().size(); ++k) set_axes(c, k, ax);
}

void embedding(OpCall& c, OpRule plain) {  // (weight, indices, ...)
  if (any_sym(axes_of(c, 0))) throw NeedsExactShape("an embedding table with a dynamic axis");
  SymAxes out = axes_of(c, 1);
  plain(c);
  out.push_back(-1);
  set_axes(c, 0, out);
}

// arange (end) / arange.start (start, end, step) with dynamic bounds: the values start at the
// run-time start; the physical length is the bucket's.
template <bool kStart>
void arange(OpCall& c, OpRule plain) {
  const size_t end = kStart ? 1 : 0;
  const int ss = kStart ? int_sym(c, 0) : -1, es = int_sym(c, end);
  if (ss < 0 && es < 0) return plain(c);
  if (kStart && c.real(2) != 1.0) throw NeedsExactShape("arange with a step and dynamic bounds");
  auto bound = [&](int s, size_t i) -> std::pair<int64_t, Array> {
    if (s >= 0) return {c.frame().sym(s).physical, c.frame().sym(s).valid};
    const int64_t v = c.integer(i);
    return {v, int32_scalar(v)};
  };
  const auto [p0, v0] = kStart ? bound(ss, 0) : std::pair<int64_t, Array>{0, int32_scalar(0)};
  const auto [p1, v1] = bound(es, end);
  if (p1 < p0) throw NeedsExactShape("arange of a negative length");
  c.result(np::add(iota(p1 - p0), v0));
  set_axes(c, 0, {c.frame().add_sym(Sym{p1 - p0, np::subtract(v1, v0)})});
}

void full(OpCall& c, OpRule plain) {  // (size, fill_value)
  const SymAxes out = list_syms(c, 0);
  with_physical(c, plain);
  set_axes(c, 0, out);
}

void sym_size(OpCall& c, OpRule plain) {  // (self, dim) -> Int
  const SymAxes ax = axes_of(c, 0);
  plain(c);
  c.frame().slot(c.arg_index(c.size() - 1)).sym = ax[size_t(wrap(c.integer(1), int(ax.size())))];
}

// executorch_prim's integer arithmetic on a dynamic size: the physical result for shapes,
// the same arithmetic on the valid extents for values.
template <Array (*F)(const Array&, const Array&)>
void sym_arith(OpCall& c, OpRule plain) {
  const int a = int_sym(c, 0), b = int_sym(c, 1);
  if (a < 0 && b < 0) return plain(c);
  with_physical(c, plain);
  auto valid = [&](int s, size_t i) { return s >= 0 ? c.frame().sym(s).valid : int32_scalar(c.integer(i)); };
  Slot& out = c.frame().slot(c.arg_index(c.size() - 1));
  out.sym = c.frame().add_sym(Sym{*out.runtime_int, F(valid(a, 0), valid(b, 1))});
}

const std::map<std::string, SymRule>& table() {
  static const std::map<std::string, SymRule> t = [] {
    std::map<std::string, SymRule> m = {
        {"aten::native_layer_norm.out", layer_norm},
        {"aten::_softmax.out", softmax},
        {"aten::_log_softmax.out", softmax},
        {"aten::sum.IntList_out", reduction<0>},
        {"aten::amax.out", reduction<1>},
        {"aten::any.out", reduction<2>},
        {"aten::any.dims_out", reduction<2>},
        {"aten::mean.out", reduction<-1>},
        {"aten::mm.out", matmul<0>},
        {"aten::bmm.out", matmul<0>},
        {"aten::addmm.out", matmul<1>},
        {"aten::view_copy.out", view},
        {"executorch_prim::et_view.default", view},
        {"aten::permute_copy.out", permute},
        {"aten::unsqueeze_copy.out", unsqueeze},
        {"aten::squeeze_copy.dims_out", squeeze_dims},
        {"aten::expand_copy.out", expand},
        {"aten::slice_copy.Tensor_out", slice},
        {"aten::select_copy.int_out", select},
        {"aten::cat.out", cat},
        {"aten::split_with_sizes_copy.out", split_with_sizes},
        {"aten::embedding.out", embedding},
        {"aten::arange.start_out", arange<true>},
        {"aten::arange.out", arange<false>},
        {"aten::full.out", full},
        {"aten::sym_size.int", sym_size},
        {"executorch_prim::add.Scalar", sym_arith<np::add>},
        {"executorch_prim::sub.Scalar", sym_arith<np::subtract>},
        {"executorch_prim::mul.Scalar", sym_arith<np::multiply>},
        {"executorch_prim::floordiv.Scalar", sym_arith<np::floor_divide>},
    };
    // Elementwise operators: result axes broadcast from the tensor arguments; their scalar
    // arguments read a dynamic size's valid extent (OpCall::scalar).
    for (const char* name :
         {"aten::add.out", "aten::sub.out", "aten::add.Scalar_out", "aten::sub.Scalar_out", "aten::mul.out",
          "aten::mul.Scalar_out", "aten::div.out", "aten::div.Scalar_out", "aten::pow.Tensor_Scalar_out",
          "aten::pow.Tensor_Tensor_out", "aten::maximum.out", "aten::minimum.out", "aten::where.self_out",
          "aten::clamp.out", "aten::leaky_relu.out", "aten::hardtanh.out", "aten::eq.Scalar_out",
          "aten::ne.Scalar_out", "aten::lt.Scalar_out", "aten::le.Scalar_out", "aten::gt.Scalar_out",
          "aten::ge.Scalar_out", "aten::eq.Tensor_out", "aten::ne.Tensor_out", "aten::lt.Tensor_out",
          "aten::le.Tensor_out", "aten::gt.Tensor_out", "aten::ge.Tensor_out", "aten::logical_and.out",
          "aten::logical_or.out", "aten::logical_xor.out", "aten::logical_not.out", "aten::relu.out",
          "aten::sigmoid.out", "aten::tanh.out", "aten::exp.out", "aten::log.out", "aten::sqrt.out",
          "aten::rsqrt.out", "aten::abs.out", "aten::neg.out", "aten::sin.out", "aten::cos.out",
          "aten::erf.out", "aten::floor.out", "aten::ceil.out", "aten::reciprocal.out", "aten::gelu.out",
          "aten::full_like.out", "aten::scalar_tensor.out", "dim_order_ops::_to_dim_order_copy.out",
          "dim_order_ops::_clone_dim_order.out"})
      m.emplace(name, elementwise);
    return m;
  }();
  return t;
}

}  // namespace

void run_symbolic(OpCall& c, OpRule plain) {
  auto it = table().find(c.op());
  if (it != table().end()) return it->second(c, plain);
  if (touches_symbols(c)) throw NeedsExactShape(c.op() + " has no rule for dynamic sizes");
  plain(c);
}

}  // namespace kiln::executorch
