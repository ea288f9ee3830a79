// The operations the TypeScript wrapper calls by name: one table from the wrapper's op name
// to a kiln C++ call. Arguments arrive as Arrays, options as a JS object (js_values.h).
#include <functional>
#include <map>

#include "js_values.h"
#include "backend/backend.h"
#include "kiln/linalg.h"
#include "kiln/lax.h"
#include "op_table.h"

namespace kiln::js {
namespace {

namespace np = kiln::numpy;
using Args = std::vector<Array>;

void need(const std::string& op, const Args& x, size_t n) {
  if (x.size() != n) fail(op, "got ", x.size(), " array arguments, expected ", n);
}

// A dtype when the option is given, float32 otherwise.
DType dtype_or(const val& p, DType d) { return get_dtype(p, "dtype").value_or(d); }

std::vector<std::pair<int64_t, int64_t>> get_pairs(const val& p, const char* key) {
  std::vector<std::pair<int64_t, int64_t>> out;
  val v = p[key];
  const std::string what = std::string("option '") + key + "'";
  int n = js_length(v, what);
  for (int i = 0; i < n; i++) {
    const std::string item = what + "[" + std::to_string(i) + "]";
    if (js_length(v[i], item) != 2) fail(current_op(), item, " has ", js_length(v[i], item), " entries, expected a (low, high) pair");
    out.push_back({js_int64(v[i][0], item), js_int64(v[i][1], item)});
  }
  return out;
}

lax::Padding get_padding(const val& p, const char* key) {
  val v = p[key];
  if (v.isString()) return js_string(v, key);
  return get_pairs(p, key);
}

// An index term {start, stop, step} (each optional) as a Slice.
Slice slice_term(const val& t) {
  Slice s;
  if (is_set(t["start"])) s.start = js_int64(t["start"], "slice start");
  if (is_set(t["stop"])) s.stop = js_int64(t["stop"], "slice stop");
  if (is_set(t["step"])) s.step = js_int64(t["step"], "slice step");
  return s;
}

// x.at(...).method(u): operands [x, the index Arrays..., u]; terms {i} | {start, stop, step}
// | {ellipsis} | {array: k} (the k-th index Array); method, mode and fillValue in p.
Array indexed_update(const Args& x, const val& p) {
  std::vector<np::AtIndex> idx;
  val terms = p["index"];
  for (int i = 0, n = js_length(terms, "option 'index'"); i < n; i++) {
    val t = terms[i];
    if (is_set(t["array"])) idx.emplace_back(x.at(size_t(1 + js_int(t["array"], "index array"))));
    else if (is_set(t["i"])) idx.emplace_back(js_int64(t["i"], "index"));
    else if (is_set(t["ellipsis"])) idx.emplace_back(ellipsis);
    else idx.emplace_back(slice_term(t));
  }
  auto ref = np::at(x.at(0), idx);
  const std::string m = get_str(p, "method", "get"), mode = get_str(p, "mode", "");
  if (m == "get") {
    std::optional<double> fv;
    if (is_set(p["fillValue"])) fv = get_num(p, "fillValue", 0);
    return ref.get(mode, fv);
  }
  const Array& u = x.back();
  if (m == "set") return ref.set(u, mode);
  if (m == "add") return ref.add(u, mode);
  if (m == "multiply") return ref.multiply(u, mode);
  if (m == "min") return ref.min(u, mode);
  if (m == "max") return ref.max(u, mode);
  fail("at", "got method '", m, "', expected get, set, add, multiply, min or max");
}

std::vector<Index> get_index(const val& p) {
  // Terms: {i: n} | {start, stop, step} (slice) | {newaxis: true} | {ellipsis: true}.
  std::vector<Index> out;
  val terms = p["index"];
  int n = js_length(terms, "option 'index'");
  for (int i = 0; i < n; i++) {
    val t = terms[i];
    if (t.typeOf().as<std::string>() != "object" || t.isNull()) fail(current_op(), "index term ", i, " got ", js_describe(t), ", expected an object");
    if (is_set(t["i"])) out.push_back(js_int64(t["i"], "index"));
    else if (is_set(t["newaxis"])) out.push_back(newaxis);
    else if (is_set(t["ellipsis"])) out.push_back(ellipsis);
    else out.push_back(slice_term(t));
  }
  return out;
}

using Unary = Array (*)(const Array&);
using Binary = Array (*)(const Array&, const Array&);

const std::map<std::string, Unary>& unary_ops() {
  static const std::map<std::string, Unary> t = {
      {"negative", np::negative}, {"positive", np::positive}, {"abs", np::abs},
      {"sign", np::sign}, {"exp", np::exp}, {"exp2", np::exp2}, {"expm1", np::expm1},
      {"log", np::log}, {"log1p", np::log1p}, {"log2", np::log2}, {"log10", np::log10},
      {"sqrt", np::sqrt}, {"rsqrt", np::rsqrt}, {"square", np::square},
      {"reciprocal", np::reciprocal}, {"sin", np::sin}, {"cos", np::cos}, {"tan", np::tan},
      {"arcsin", np::arcsin}, {"arccos", np::arccos}, {"arctan", np::arctan},
      {"sinh", np::sinh}, {"cosh", np::cosh}, {"tanh", np::tanh}, {"arcsinh", np::arcsinh},
      {"arccosh", np::arccosh}, {"arctanh", np::arctanh}, {"erf", np::erf},
      {"erf_inv", lax::erf_inv}, {"floor", np::floor}, {"ceil", np::ceil},
      {"round", np::round}, {"trunc", np::trunc}, {"logical_not", np::logical_not},
      {"invert", np::invert}, {"isnan", np::isnan}, {"isinf", np::isinf},
      {"isfinite", np::isfinite}, {"ravel", np::ravel},
      {"stop_gradient", static_cast<Array (*)(const Array&)>(kiln::stop_gradient)},
      {"relu", nn::relu}, {"relu6", nn::relu6}, {"sigmoid", nn::sigmoid},
      {"log_sigmoid", nn::log_sigmoid}, {"silu", nn::silu}, {"softplus", nn::softplus},
  };
  return t;
}

const std::map<std::string, Binary>& binary_ops() {
  static const std::map<std::string, Binary> t = {
      {"add", np::add}, {"subtract", np::subtract}, {"multiply", np::multiply},
      {"divide", np::divide}, {"floor_divide", np::floor_divide}, {"mod", np::mod},
      {"power", np::power}, {"maximum", np::maximum}, {"minimum", np::minimum},
      {"arctan2", np::arctan2}, {"logaddexp", np::logaddexp}, {"equal", np::equal}, {"not_equal", np::not_equal},
      {"less", np::less}, {"less_equal", np::less_equal}, {"greater", np::greater},
      {"greater_equal", np::greater_equal}, {"logical_and", np::logical_and},
      {"logical_or", np::logical_or}, {"logical_xor", np::logical_xor},
      {"bitwise_and", np::bitwise_and}, {"bitwise_or", np::bitwise_or},
      {"bitwise_xor", np::bitwise_xor}, {"left_shift", np::left_shift},
      {"right_shift", np::right_shift}, {"matmul", np::matmul}, {"dot", np::dot},
      {"vdot", np::vdot}, {"inner", np::inner}, {"outer", np::outer},
  };
  return t;
}

using Reduce = Array (*)(const Array&, Axes, bool);

const std::map<std::string, Reduce>& reduce_ops() {
  static const std::map<std::string, Reduce> t = {
      {"sum", np::sum}, {"prod", np::prod}, {"max", np::max}, {"min", np::min},
      {"mean", np::mean}, {"any", np::any}, {"all", np::all},
  };
  return t;
}

// Everything that is not a plain unary, binary or reduction.
const std::map<std::string, OpFn>& other_ops() {
  static const std::map<std::string, OpFn> t = {
      // ---- creation (on the device chosen by the caller, see call_op) ----
      {"zeros", [](const Args&, const val& p) { return from_array(np::zeros(get_shape(p, "shape"), dtype_or(p, float32))); }},
      {"ones", [](const Args&, const val& p) { return from_array(np::ones(get_shape(p, "shape"), dtype_or(p, float32))); }},
      {"full", [](const Args& x, const val& p) { need("full", x, 1); return from_array(np::full(get_shape(p, "shape"), x[0], get_dtype(p, "dtype"))); }},
      {"arange", [](const Args&, const val& p) {
         return from_array(np::arange_impl(get_num(p, "start", 0), get_num(p, "stop", 0), get_num(p, "step", 1),
                                           true, dtype_or(p, int32)));
       }},
      {"linspace", [](const Args&, const val& p) {
         return from_array(np::linspace(get_num(p, "start", 0), get_num(p, "stop", 0), get_int(p, "num", 50),
                                        get_bool(p, "endpoint", true), dtype_or(p, float32)));
       }},
      {"eye", [](const Args&, const val& p) {
         return from_array(np::eye(get_int(p, "n", 0), get_opt_int(p, "m"), get_int(p, "k", 0), dtype_or(p, float32)));
       }},
      // ---- elementwise with options ----
      {"where", [](const Args& x, const val&) { need("where", x, 3); return from_array(np::where(x[0], x[1], x[2])); }},
      {"clip", [](const Args& x, const val& p) {
         size_t i = 1;
         std::optional<Array> lo, hi;
         if (get_bool(p, "hasMin", false)) lo = x.at(i++);
         if (get_bool(p, "hasMax", false)) hi = x.at(i++);
         return from_array(np::clip(x.at(0), lo, hi));
       }},
      // need_dtype: a missing or unknown dtype is an Error (dereferencing the empty optional
      // read whatever lay in memory).
      {"astype", [](const Args& x, const val& p) { need("astype", x, 1); return from_array(x[0].astype(need_dtype(p, "dtype"))); }},
      {"convert_element_type", [](const Args& x, const val& p) { need("convert_element_type", x, 1); return from_array(lax::convert_element_type(x[0], need_dtype(p, "dtype"))); }},
      {"bitcast_convert_type", [](const Args& x, const val& p) { need("bitcast_convert_type", x, 1); return from_array(lax::bitcast_convert_type(x[0], need_dtype(p, "dtype"))); }},
      // ---- reductions with extra options ----
      {"var", [](const Args& x, const val& p) { return from_array(np::var(x.at(0), get_axes(p, "axis"), get_bool(p, "keepdims", false), get_int(p, "ddof", 0))); }},
      {"std", [](const Args& x, const val& p) { return from_array(np::std(x.at(0), get_axes(p, "axis"), get_bool(p, "keepdims", false), get_int(p, "ddof", 0))); }},
      {"argmax", [](const Args& x, const val& p) { return from_array(np::argmax(x.at(0), get_opt_int(p, "axis"), get_bool(p, "keepdims", false))); }},
      {"argmin", [](const Args& x, const val& p) { return from_array(np::argmin(x.at(0), get_opt_int(p, "axis"), get_bool(p, "keepdims", false))); }},
      {"cumsum", [](const Args& x, const val& p) { return from_array(np::cumsum(x.at(0), get_opt_int(p, "axis"))); }},
      {"cumprod", [](const Args& x, const val& p) { return from_array(np::cumprod(x.at(0), get_opt_int(p, "axis"))); }},
      // ---- movement ----
      {"reshape", [](const Args& x, const val& p) { return from_array(np::reshape(x.at(0), get_shape(p, "shape"))); }},
      {"transpose", [](const Args& x, const val& p) {
         std::optional<std::vector<int>> perm;
         if (is_set(p["perm"])) perm = get_ints(p, "perm");
         return from_array(np::transpose(x.at(0), perm));
       }},
      {"swapaxes", [](const Args& x, const val& p) { return from_array(np::swapaxes(x.at(0), get_int(p, "a", 0), get_int(p, "b", 0))); }},
      {"moveaxis", [](const Args& x, const val& p) { return from_array(np::moveaxis(x.at(0), get_int(p, "src", 0), get_int(p, "dst", 0))); }},
      {"broadcast_to", [](const Args& x, const val& p) { return from_array(np::broadcast_to(x.at(0), get_shape(p, "shape"))); }},
      {"expand_dims", [](const Args& x, const val& p) { return from_array(np::expand_dims(x.at(0), get_axes(p, "axis"))); }},
      {"squeeze", [](const Args& x, const val& p) { return from_array(np::squeeze(x.at(0), get_axes(p, "axis"))); }},
      {"flip", [](const Args& x, const val& p) { return from_array(np::flip(x.at(0), get_axes(p, "axis"))); }},
      {"repeat", [](const Args& x, const val& p) { return from_array(np::repeat(x.at(0), get_int(p, "repeats", 1), get_opt_int(p, "axis"))); }},
      {"tile", [](const Args& x, const val& p) { return from_array(np::tile(x.at(0), get_int64s(p, "reps"))); }},
      {"pad", [](const Args& x, const val& p) { return from_array(np::pad(x.at(0), get_pairs(p, "width"), get_str(p, "mode", "constant"), get_num(p, "value", 0))); }},
      {"concatenate", [](const Args& x, const val& p) { return from_array(np::concatenate(x, get_int(p, "axis", 0))); }},
      {"stack", [](const Args& x, const val& p) { return from_array(np::stack(x, get_int(p, "axis", 0))); }},
      {"split", [](const Args& x, const val& p) {
         if (js_is_array(p["indices"])) return from_arrays(np::split(x.at(0), get_int64s(p, "indices"), get_int(p, "axis", 0)));
         return from_arrays(np::split(x.at(0), int64_t(get_int(p, "sections", 1)), get_int(p, "axis", 0)));
       }},
      {"take", [](const Args& x, const val& p) { need("take", x, 2); return from_array(np::take(x[0], x[1], get_opt_int(p, "axis"))); }},
      {"take_along_axis", [](const Args& x, const val& p) { need("take_along_axis", x, 2); return from_array(np::take_along_axis(x[0], x[1], get_int(p, "axis", 0))); }},
      {"index", [](const Args& x, const val& p) { return from_array(np::index(x.at(0), get_index(p))); }},
      {"at", [](const Args& x, const val& p) { return from_array(indexed_update(x, p)); }},
      {"tensordot", [](const Args& x, const val& p) {
         need("tensordot", x, 2);
         if (js_is_array(p["axes"])) {
           val a = p["axes"];
           std::vector<int> l, r;
           for (int i = 0; i < js_length(a[0], "option 'axes'[0]"); i++) l.push_back(js_int(a[0][i], "option 'axes'[0]"));
           for (int i = 0; i < js_length(a[1], "option 'axes'[1]"); i++) r.push_back(js_int(a[1][i], "option 'axes'[1]"));
           return from_array(np::tensordot(x[0], x[1], {l, r}));
         }
         return from_array(np::tensordot(x[0], x[1], get_int(p, "axes", 2)));
       }},
      {"einsum", [](const Args& x, const val& p) { return from_array(np::einsum(get_str(p, "subscripts", ""), x)); }},
      // ---- lax ----
      {"conv_general_dilated", [](const Args& x, const val& p) {
         need("conv_general_dilated", x, 2);
         return from_array(lax::conv_general_dilated(x[0], x[1], get_int64s(p, "strides"), get_padding(p, "padding"),
                                                     get_int64s(p, "lhsDilation"), get_int64s(p, "rhsDilation"),
                                                     std::nullopt, get_int(p, "featureGroupCount", 1)));
       }},
      {"reduce_window", [](const Args& x, const val& p) {
         static const std::map<std::string, lax::WindowOp> ops = {
             {"sum", lax::WindowOp::Sum}, {"max", lax::WindowOp::Max}, {"min", lax::WindowOp::Min}, {"prod", lax::WindowOp::Prod}};
         auto it = ops.find(get_str(p, "op", ""));
         if (it == ops.end()) fail("reduceWindow", "got op '", get_str(p, "op", ""), "', expected sum, max, min or prod");
         return from_array(lax::reduce_window(x.at(0), it->second, get_int64s(p, "window"), get_int64s(p, "strides"),
                                              get_padding(p, "padding")));
       }},
      // ---- nn ----
      {"elu", [](const Args& x, const val& p) { return from_array(nn::elu(x.at(0), get_num(p, "alpha", 1.0))); }},
      {"leaky_relu", [](const Args& x, const val& p) { return from_array(nn::leaky_relu(x.at(0), get_num(p, "negativeSlope", 0.01))); }},
      {"gelu", [](const Args& x, const val& p) { return from_array(nn::gelu(x.at(0), get_bool(p, "approximate", true))); }},
      {"softmax", [](const Args& x, const val& p) { return from_array(nn::softmax(x.at(0), is_set(p["axis"]) ? get_axes(p, "axis") : Axes(-1))); }},
      {"log_softmax", [](const Args& x, const val& p) { return from_array(nn::log_softmax(x.at(0), is_set(p["axis"]) ? get_axes(p, "axis") : Axes(-1))); }},
      {"logsumexp", [](const Args& x, const val& p) { return from_array(nn::logsumexp(x.at(0), get_axes(p, "axis"), get_bool(p, "keepdims", false))); }},
      {"standardize", [](const Args& x, const val& p) {
         return from_array(nn::standardize(x.at(0), is_set(p["axis"]) ? get_axes(p, "axis") : Axes(-1), std::nullopt, std::nullopt,
                                           get_num(p, "epsilon", 1e-5)));
       }},
      {"one_hot", [](const Args& x, const val& p) { return from_array(nn::one_hot(x.at(0), get_int(p, "numClasses", 0), dtype_or(p, float32), get_int(p, "axis", -1))); }},
      {"dot_product_attention", [](const Args& x, const val& p) {
         need("dotProductAttention", x, 3);
         std::optional<double> scale;
         if (is_set(p["scale"])) scale = js_number(p["scale"], "option 'scale'");
         return from_array(nn::dot_product_attention(x[0], x[1], x[2], std::nullopt, std::nullopt, scale, get_bool(p, "isCausal", false)));
       }},
      // ---- random (keys are uint32 arrays of shape [2], as jax-js's raw keys) ----
      // ---- sorting and linear algebra (numpy_sort.cpp, linalg_*.cpp) ----
      {"sort", [](const Args& x, const val& p) { return from_array(np::sort(x.at(0), get_opt_int(p, "axis"), get_bool(p, "descending", false))); }},
      {"argsort", [](const Args& x, const val& p) { return from_array(np::argsort(x.at(0), get_opt_int(p, "axis"), get_bool(p, "descending", false))); }},
      {"top_k", [](const Args& x, const val& p) {
         auto [v, i] = lax::top_k(x.at(0), get_int(p, "k", 0), get_int(p, "axis", -1));
         return from_arrays({v, i});
       }},
      {"cholesky", [](const Args& x, const val& p) {
         return from_array(linalg::cholesky(x.at(0), get_bool(p, "upper", false), get_bool(p, "symmetrizeInput", true)));
       }},
      {"triangular_solve", [](const Args& x, const val& p) {
         need("triangularSolve", x, 2);
         return from_array(linalg::triangular_solve(x[0], x[1], get_bool(p, "leftSide", false), get_bool(p, "lower", false),
                                                    get_bool(p, "transposeA", false), get_bool(p, "unitDiagonal", false)));
       }},
      {"lu", [](const Args& x, const val&) {
         auto [l, piv, perm] = linalg::lu(x.at(0));
         return from_arrays({l, piv, perm});
       }},
      {"solve", [](const Args& x, const val&) { need("solve", x, 2); return from_array(linalg::solve(x[0], x[1])); }},
      {"inv", [](const Args& x, const val&) { return from_array(linalg::inv(x.at(0))); }},
      {"det", [](const Args& x, const val&) { return from_array(linalg::det(x.at(0))); }},
      {"qr", [](const Args& x, const val& p) {
         auto [q, r] = linalg::qr(x.at(0), get_str(p, "mode", "reduced"));
         return from_arrays({q, r});
       }},
      {"slogdet", [](const Args& x, const val&) {
         auto [sign, logdet] = linalg::slogdet(x.at(0));
         return from_arrays({sign, logdet});
       }},
      {"random_key", [](const Args&, const val& p) { return from_array(random::key(int64_t(get_num(p, "seed", 0)))); }},
      {"random_split", [](const Args& x, const val& p) {
         if (js_is_array(p["num"])) return from_array(random::split(x.at(0), get_shape(p, "num")));
         return from_array(random::split(x.at(0), int64_t(get_int(p, "num", 2))));
       }},
      {"random_fold_in", [](const Args& x, const val&) { need("foldIn", x, 2); return from_array(random::fold_in(x[0], x[1])); }},
      {"random_bits", [](const Args& x, const val& p) { return from_array(random::bits(x.at(0), get_shape(p, "shape"))); }},
      {"random_uniform", [](const Args& x, const val& p) {
         return from_array(random::uniform(x.at(0), get_shape(p, "shape"), dtype_or(p, float32), get_num(p, "minval", 0.0), get_num(p, "maxval", 1.0)));
       }},
      {"random_normal", [](const Args& x, const val& p) { return from_array(random::normal(x.at(0), get_shape(p, "shape"), dtype_or(p, float32))); }},
      {"random_bernoulli", [](const Args& x, const val& p) {
         std::optional<Shape> shape;
         if (is_set(p["shape"])) shape = get_shape(p, "shape");
         return from_array(random::bernoulli(x.at(0), x.size() > 1 ? x[1] : Array(0.5), shape));
       }},
      {"random_categorical", [](const Args& x, const val& p) {
         need("categorical", x, 2);
         std::optional<Shape> shape;
         if (is_set(p["shape"])) shape = get_shape(p, "shape");
         return from_array(random::categorical(x[0], x[1], get_int(p, "axis", -1), shape));
       }},
      {"random_randint", [](const Args& x, const val& p) {
         need("randint", x, 3);
         return from_array(random::randint(x[0], get_shape(p, "shape"), x[1], x[2], dtype_or(p, int32)));
       }},
      {"random_permutation", [](const Args& x, const val& p) {
         if (x.size() == 1) return from_array(random::permutation(x[0], int64_t(get_int(p, "n", 0))));
         need("permutation", x, 2);
         return from_array(random::permutation(x[0], x[1], get_int(p, "axis", 0), get_bool(p, "independent", false)));
       }},
      // One token's attention over a KV cache (the routine primitive; "unfused": its formula).
      {"decode_attention", [](const Args& x, const val& p) {
         need("decodeAttention", x, 6);
         const float scale = float(get_num(p, "scale", 1.0));
         const int64_t window = get_int(p, "slidingWindow", 0);
         return from_array(get_bool(p, "unfused", false)
                               ? lax::decode_attention_unfused(x[0], x[1], x[2], x[3], x[4], x[5], scale, window)
                               : lax::decode_attention(x[0], x[1], x[2], x[3], x[4], x[5], scale, window));
       }},
      {"random_truncated_normal", [](const Args& x, const val& p) {
         need("truncatedNormal", x, 3);
         std::optional<Shape> shape;
         if (is_set(p["shape"])) shape = get_shape(p, "shape");
         return from_array(random::truncated_normal(x[0], x[1], x[2], shape, dtype_or(p, float32)));
       }},
  };
  return t;
}

}  // namespace

val call_op(const std::string& name, const val& args, const val& params) {
  try {
    OpName op_name(name);
    if (params.typeOf().as<std::string>() != "object" || params.isNull()) fail(name, "got options ", js_describe(params), ", expected an object");
    OnDevice scope(get_str(params, "device", ""));  // for the duration of one creation op
    Args x = to_arrays(args);
    if (auto it = unary_ops().find(name); it != unary_ops().end()) {
      need(name, x, 1);
      return from_array(it->second(x[0]));
    }
    if (auto it = binary_ops().find(name); it != binary_ops().end()) {
      need(name, x, 2);
      return from_array(it->second(x[0], x[1]));
    }
    if (auto it = reduce_ops().find(name); it != reduce_ops().end()) {
      need(name, x, 1);
      return from_array(it->second(x[0], get_axes(params, "axis"), get_bool(params, "keepdims", false)));
    }
    if (auto it = other_ops().find(name); it != other_ops().end()) return it->second(x, params);
    if (auto it = spectral_ops().find(name); it != spectral_ops().end()) return it->second(x, params);
    fail("kiln", "no operation named '", name, "'");
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

}  // namespace kiln::js
