// The table from ExecuTorch operator names to kiln rules, with the elementwise, comparison
// and reduction rules (one line each); larger rules live in operator_rules_{nn,shape}.cpp.
#include "models/executorch/operator_rules.h"

#include <algorithm>
#include <map>

#include "library/lax.h"
#include "library/nn.h"
#include "library/numpy.h"

namespace kiln::executorch {

namespace np = kiln::numpy;

namespace {

// add/sub with alpha: self op alpha * other (alpha is 1 in every exported program seen).
Array times_alpha(const OpCall& c, const Array& other, size_t alpha_arg) {
  if (c.is_none(alpha_arg) || c.real(alpha_arg) == 1.0) return other;
  return np::multiply(other, c.scalar(alpha_arg));
}

// Reduction axes: an IntList (empty = all, as ATen's sum/mean), a single Int, or None.
Axes reduction_axes(const OpCall& c, size_t i) {
  if (c.is_none(i)) return Axes();
  if (!c.is_int_list(i)) return Axes(int(c.integer(i)));
  const std::vector<int64_t> dims = c.ints(i);
  if (dims.empty()) return Axes();
  return Axes(std::vector<int>(dims.begin(), dims.end()));
}

template <Array (*F)(const Array&)>
void unary(OpCall& c) {
  c.result(F(c.tensor(0)));
}

template <Array (*F)(const Array&, const Array&)>
void binary(OpCall& c) {
  c.result(F(c.tensor(0), c.tensor(1)));
}

template <Array (*F)(const Array&, const Array&)>
void binary_scalar(OpCall& c) {
  c.result(F(c.tensor(0), c.scalar(1)));
}

template <Array (*F)(const Array&, Axes, bool)>
void reduction(OpCall& c) {
  c.result(F(c.tensor(0), reduction_axes(c, 1), c.boolean(2)));
}

Array relu(const Array& x) { return nn::relu(x); }
Array sigmoid(const Array& x) { return nn::sigmoid(x); }
Array true_divide(const Array& a, const Array& b) { return np::divide(a, b); }

// executorch_prim's integer arithmetic on sizes computed at run time (sym ints); overflow
// and division by zero are errors (the operands come from the file).
template <bool (*F)(int64_t, int64_t, int64_t*)>
void sym_arith(OpCall& c) {
  int64_t out = 0;
  if (!F(c.integer(0), c.integer(1), &out)) c.fail("integer overflow or division by zero");
  c.result_int(out);
}
bool add_ints(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool sub_ints(int64_t a, int64_t b, int64_t* out) { return !__builtin_sub_overflow(a, b, out); }
bool mul_ints(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool floordiv_ints(int64_t a, int64_t b, int64_t* out) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  const int64_t q = a / b;
  *out = (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  return true;
}

const std::map<std::string, OpRule>& table() {
  static const std::map<std::string, OpRule> t = {
      // elementwise arithmetic; results are cast to the planned dtype by OpCall::results
      {"aten::add.out", [](OpCall& c) { c.result(np::add(c.tensor(0), times_alpha(c, c.tensor(1), 2))); }},
      {"aten::sub.out", [](OpCall& c) { c.result(np::subtract(c.tensor(0), times_alpha(c, c.tensor(1), 2))); }},
      {"aten::add.Scalar_out", [](OpCall& c) { c.result(np::add(c.tensor(0), times_alpha(c, c.scalar(1), 2))); }},
      {"aten::sub.Scalar_out", [](OpCall& c) { c.result(np::subtract(c.tensor(0), times_alpha(c, c.scalar(1), 2))); }},
      {"aten::mul.out", binary<np::multiply>},
      {"aten::mul.Scalar_out", binary_scalar<np::multiply>},
      {"aten::div.out", binary<true_divide>},
      {"aten::div.Scalar_out", binary_scalar<true_divide>},
      {"aten::pow.Tensor_Scalar_out", binary_scalar<np::power>},
      {"aten::pow.Tensor_Tensor_out", binary<np::power>},
      {"aten::maximum.out", binary<np::maximum>},
      {"aten::minimum.out", binary<np::minimum>},
      {"aten::where.self_out", [](OpCall& c) { c.result(np::where(c.tensor(0), c.tensor(1), c.tensor(2))); }},
      {"aten::clamp.out", [](OpCall& c) {
         c.result(np::clip(c.tensor(0), c.is_none(1) ? std::nullopt : std::optional(c.scalar(1)),
                           c.is_none(2) ? std::nullopt : std::optional(c.scalar(2))));
       }},
      {"aten::leaky_relu.out", [](OpCall& c) { c.result(nn::leaky_relu(c.tensor(0), c.real(1))); }},
      {"aten::hardtanh.out", [](OpCall& c) { c.result(np::clip(c.tensor(0), c.scalar(1), c.scalar(2))); }},
      // comparisons and logic
      {"aten::eq.Scalar_out", binary_scalar<np::equal>},
      {"aten::ne.Scalar_out", binary_scalar<np::not_equal>},
      {"aten::lt.Scalar_out", binary_scalar<np::less>},
      {"aten::le.Scalar_out", binary_scalar<np::less_equal>},
      {"aten::gt.Scalar_out", binary_scalar<np::greater>},
      {"aten::ge.Scalar_out", binary_scalar<np::greater_equal>},
      {"aten::eq.Tensor_out", binary<np::equal>},
      {"aten::ne.Tensor_out", binary<np::not_equal>},
      {"aten::lt.Tensor_out", binary<np::less>},
      {"aten::le.Tensor_out", binary<np::less_equal>},
      {"aten::gt.Tensor_out", binary<np::greater>},
      {"aten::ge.Tensor_out", binary<np::greater_equal>},
      {"aten::logical_and.out", binary<np::logical_and>},
      {"aten::logical_or.out", binary<np::logical_or>},
      {"aten::logical_xor.out", binary<np::logical_xor>},
      {"aten::logical_not.out", unary<np::logical_not>},
      // unary math and activations
      {"aten::relu.out", unary<relu>},
      {"aten::sigmoid.out", unary<sigmoid>},
      {"aten::tanh.out", unary<np::tanh>},
      {"aten::exp.out", unary<np::exp>},
      {"aten::log.out", unary<np::log>},
      {"aten::sqrt.out", unary<np::sqrt>},
      {"aten::rsqrt.out", unary<np::rsqrt>},
      {"aten::abs.out", unary<np::abs>},
      {"aten::neg.out", unary<np::negative>},
      {"aten::sin.out", unary<np::sin>},
      {"aten::cos.out", unary<np::cos>},
      {"aten::erf.out", unary<np::erf>},
      {"aten::floor.out", unary<np::floor>},
      {"aten::ceil.out", unary<np::ceil>},
      {"aten::reciprocal.out", unary<np::reciprocal>},
      {"aten::gelu.out", rules::gelu},
      {"aten::_softmax.out", rules::softmax},
      {"aten::_log_softmax.out", rules::log_softmax},
      // reductions
      {"aten::sum.IntList_out", reduction<np::sum>},
      {"aten::mean.out", reduction<np::mean>},
      {"aten::mean.dtype_out", [](OpCall& c) { c.result(np::mean(c.tensor(0))); }},  // (self, dtype?)
      {"aten::amax.out", reduction<np::amax>},
      {"aten::amin.out", reduction<np::amin>},
      {"aten::any.out", reduction<np::any>},
      {"aten::any.dims_out", reduction<np::any>},
      {"aten::var.correction_out", [](OpCall& c) {  // (self, dims?, correction?, keepdim)
         c.result(np::var(c.tensor(0), reduction_axes(c, 1), c.boolean(3), c.is_none(2) ? 1 : c.integer(2)));
       }},
      {"aten::max.dim_max", [](OpCall& c) {  // (self, dim, keepdim) -> (values, indices)
         const Array x = c.tensor(0);
         const int dim = int(c.integer(1));
         c.results({np::max(x, dim, c.boolean(2)), np::argmax(x, dim, c.boolean(2))});
       }},
      {"aten::cumsum.out", [](OpCall& c) { c.result(np::cumsum(c.tensor(0), int(c.integer(1)))); }},
      {"aten::argmax.out", [](OpCall& c) {
         c.result(np::argmax(c.tensor(0), c.is_none(1) ? std::nullopt : std::optional<int>(int(c.integer(1))),
                             c.boolean(2)));
       }},
      // linear algebra, convolution, normalization, pooling, embedding
      {"aten::addmm.out", rules::addmm},
      {"aten::mm.out", rules::mm},
      {"aten::bmm.out", rules::bmm},
      {"aten::convolution.out", rules::convolution},
      {"aten::_native_batch_norm_legit_no_training.out", rules::batch_norm_no_training},
      {"aten::native_layer_norm.out", rules::layer_norm},
      {"aten::max_pool2d_with_indices.out", rules::max_pool2d_with_indices},
      {"aten::avg_pool2d.out", rules::avg_pool2d},
      {"aten::embedding.out", rules::embedding},
      {"aten::native_group_norm.out", rules::group_norm},
      {"aten::upsample_nearest2d.vec_out", rules::upsample_nearest2d},
      // views, copies, joins, creation
      {"aten::permute_copy.out", rules::permute},
      {"aten::view_copy.out", rules::view},
      {"executorch_prim::et_view.default", rules::view},
      {"aten::unsqueeze_copy.out", rules::unsqueeze},
      {"aten::squeeze_copy.dims_out", rules::squeeze_dims},
      {"aten::expand_copy.out", rules::expand},
      {"aten::slice_copy.Tensor_out", rules::slice},
      {"aten::select_copy.int_out", rules::select},
      {"aten::cat.out", rules::cat},
      {"aten::index_select.out", rules::index_select},
      {"aten::gather.out", rules::gather},
      {"aten::constant_pad_nd.out", rules::constant_pad},
      {"aten::split_with_sizes_copy.out", rules::split_with_sizes},
      {"dim_order_ops::_to_dim_order_copy.out", rules::to_dim_order_copy},
      {"dim_order_ops::_clone_dim_order.out", rules::to_dim_order_copy},
      {"aten::arange.start_out", rules::arange_start},
      {"aten::arange.out", rules::arange},
      {"aten::full.out", rules::full},
      {"aten::full_like.out", rules::full_like},
      {"aten::scalar_tensor.out", rules::scalar_tensor},
      // sizes computed at run time
      {"aten::sym_size.int", rules::sym_size},
      {"executorch_prim::add.Scalar", sym_arith<add_ints>},
      {"executorch_prim::sub.Scalar", sym_arith<sub_ints>},
      {"executorch_prim::mul.Scalar", sym_arith<mul_ints>},
      {"executorch_prim::floordiv.Scalar", sym_arith<floordiv_ints>},
  };
  return t;
}

}  // namespace

OpRule find_rule(const std::string& full_name) {
  auto it = table().find(full_name);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> supported_operators() {
  std::vector<std::string> names;
  for (const auto& [name, _] : table()) names.push_back(name);
  return names;
}

}  // namespace kiln::executorch
