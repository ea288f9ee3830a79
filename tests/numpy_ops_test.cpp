// Checks every op of the C++ API against the NumPy references in tests/fixtures/numpy_ops.txt
// (tools/gen_numpy_fixtures.py): one parametrized test per fixture case, named by its id.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_values.h"
#include "fixture_reader.h"
#include "kiln/kiln.h"

namespace numpy_ops_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
using kiln_test::FixtureArray;
using kiln_test::FixtureCase;
using kiln_test::FixtureInput;
using kiln_test::Params;
namespace np = kiln::numpy;
namespace lax = kiln::lax;

using Outputs = std::vector<Array>;
// What an op gets: its operands (views applied) and its params; `raw` is the fixture's
// inputs, for ops that build arrays from data themselves (array(vector)).
struct Call {
  const std::vector<Array>& in;
  const Params& p;
  const std::vector<FixtureInput>& raw;
  const Array& at(size_t i) const {
    if (i >= in.size()) throw std::runtime_error("fixture case has too few inputs");
    return in[i];
  }
};
using OpFn = std::function<Outputs(const Call&)>;

// ---- params -> kiln argument types ----
kiln::DType dtype_param(const Params& p, const std::string& key = "dtype") {
  return kiln::dtype_from_name(p.str(key));
}

std::optional<kiln::DType> opt_dtype(const Params& p, const std::string& key = "dtype") {
  if (!p.has(key) || p.is_none(key)) return std::nullopt;
  return dtype_param(p, key);
}

kiln::Shape shape_param(const Params& p, const std::string& key) { return p.integers(key); }

// "none" -> all axes; "list a b ..." -> a list; "k" -> one axis.
kiln::Axes axes_param(const Params& p, const std::string& key = "axis") {
  const auto& t = p.tokens(key);
  if (t.size() == 1 && t[0] == "none") return kiln::Axes();
  if (!t.empty() && t[0] == "list") {
    std::vector<int> v;
    for (size_t i = 1; i < t.size(); ++i) v.push_back(std::stoi(t[i]));
    return kiln::Axes(v);
  }
  if (t.size() != 1) throw std::runtime_error("bad axes param '" + key + "'");
  return kiln::Axes(std::stoi(t[0]));
}

std::optional<int> opt_axis(const Params& p, const std::string& key = "axis") {
  if (!p.has(key) || p.is_none(key)) return std::nullopt;
  return static_cast<int>(p.integer(key));
}

bool flag(const Params& p, const std::string& key, bool fallback = false) {
  return p.has(key) ? p.integer(key) != 0 : fallback;
}

std::vector<kiln::Index> index_param(const std::vector<std::string>& tokens) {
  std::vector<kiln::Index> out;
  for (const auto& t : tokens) out.push_back(kiln_test::index_term(t));
  return out;
}

std::vector<std::pair<int64_t, int64_t>> pairs_of(const std::vector<int64_t>& flat) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace_back(flat[i], flat[i + 1]);
  return out;
}

lax::Padding padding_param(const Params& p, const std::string& key = "padding") {
  const auto& t = p.tokens(key);
  if (t.size() == 1 && !t[0].empty() && std::isalpha(static_cast<unsigned char>(t[0][0])))
    return lax::Padding(t[0]);
  return lax::Padding(pairs_of(p.integers(key)));
}

lax::WindowOp window_op(const std::string& s) {
  if (s == "sum") return lax::WindowOp::Sum;
  if (s == "max") return lax::WindowOp::Max;
  if (s == "min") return lax::WindowOp::Min;
  if (s == "prod") return lax::WindowOp::Prod;
  throw std::runtime_error("unknown window op " + s);
}

// A weakly typed scalar for params such as pad's constant value.
Array scalar_like(const std::string& text, kiln::DType like) {
  if (kiln::is_float(like)) return Array(std::strtod(text.c_str(), nullptr));
  return Array(static_cast<int>(std::stoll(text)));
}

// ---- building inputs ----
Array apply_view(const Array& a, const kiln_test::FixtureView& v) {
  std::vector<int64_t> ints;
  if (v.kind == "transpose") {
    std::vector<int> perm;
    for (const auto& s : v.args) perm.push_back(std::stoi(s));
    return np::transpose(a, perm);
  }
  if (v.kind == "index") return np::index(a, index_param(v.args));
  if (v.kind == "flip") {
    std::vector<int> axes;
    for (const auto& s : v.args) axes.push_back(std::stoi(s));
    return np::flip(a, kiln::Axes(axes));
  }
  if (v.kind == "pad") {
    for (size_t i = 1; i < v.args.size(); ++i) ints.push_back(std::stoll(v.args[i]));
    return np::pad(a, pairs_of(ints), "constant", scalar_like(v.args.at(0), a.dtype()));
  }
  if (v.kind == "broadcast_to") {
    for (const auto& s : v.args) ints.push_back(std::stoll(s));
    return np::broadcast_to(a, ints);
  }
  throw std::runtime_error("unknown view kind " + v.kind);
}

Array base_array(const FixtureInput& in) {
  const FixtureArray& a = in.array;
  if (in.weak) {
    if (a.is_float()) return Array(a.floats.at(0));
    return Array(static_cast<int>(a.ints.at(0)));
  }
  std::vector<uint8_t> bytes = a.bytes();
  return np::array(bytes.data(), a.shape, kiln::dtype_from_name(a.dtype));
}

Array make_input(const FixtureInput& in) {
  Array x = base_array(in);
  for (const auto& v : in.views) x = apply_view(x, v);
  return x;
}

// ---- the dispatch table: one entry per API function ----
template <typename F>
OpFn one(F f) {
  return [f](const Call& c) { return Outputs{f(c)}; };
}

#define UNARY(name)                                             \
  {                                                             \
#name, one([](const Call& c) { return np::name(c.at(0)); }) \
  }
#define BINARY(name)                                                     \
  {                                                                      \
#name, one([](const Call& c) { return np::name(c.at(0), c.at(1)); }) \
  }
#define REDUCE(name)                                                    \
  {                                                                     \
#name, one([](const Call& c) {                                      \
      return np::name(c.at(0), axes_param(c.p), flag(c.p, "keepdims")); \
    })                                                                  \
  }
#define BINOP(key, expr)                      \
  {                                           \
    key, one([](const Call& c) {              \
      const Array &a = c.at(0), &b = c.at(1); \
      return expr;                            \
    })                                        \
  }

Array array_from_vector(const Call& c) {
  const FixtureArray& a = c.raw.at(0).array;
  kiln::Shape shape = c.p.has("shape_override") ? shape_param(c.p, "shape_override") : a.shape;
  if (a.dtype == "float32")
    return np::array(std::vector<float>(a.floats.begin(), a.floats.end()), shape);
  if (a.dtype == "float64")
    return np::array(std::vector<double>(a.floats.begin(), a.floats.end()), shape);
  if (a.dtype == "int32")
    return np::array(std::vector<int32_t>(a.ints.begin(), a.ints.end()), shape);
  if (a.dtype == "uint32")
    return np::array(std::vector<uint32_t>(a.ints.begin(), a.ints.end()), shape);
  if (a.dtype == "bool") {
    std::vector<bool> v;
    for (int64_t x : a.ints) v.push_back(x != 0);
    return np::array(v, shape);
  }
  throw std::runtime_error("array(vector) has no overload for " + a.dtype);
}

Array conv_general(const Call& c) {
  std::optional<lax::ConvDimensionNumbers> dn;
  if (c.p.has("dimension_numbers")) {
    const auto& t = c.p.tokens("dimension_numbers");
    dn = lax::ConvDimensionNumbers{t.at(0), t.at(1), t.at(2)};
  }
  return lax::conv_general_dilated(
      c.at(0), c.at(1), c.p.integers("window_strides"), padding_param(c.p),
      c.p.integers("lhs_dilation"), c.p.integers("rhs_dilation"), dn,
      c.p.integer("feature_group_count", 1), c.p.integer("batch_group_count", 1));
}

Array clip_call(const Call& c) {
  std::optional<Array> lo, hi;
  size_t k = 1;
  for (const auto& b : c.p.tokens("bounds")) (b == "min" ? lo : hi) = c.at(k++);
  return np::clip(c.at(0), lo, hi);
}

const std::map<std::string, OpFn>& table() {
  static const std::map<std::string, OpFn> t = {
      // creation
      {"array", one([](const Call& c) { return c.at(0); })},
      {"array(vector)", one(array_from_vector)},
      {"asarray", one([](const Call& c) { return np::asarray(c.at(0), opt_dtype(c.p)); })},
      {"zeros", one([](const Call& c) {
         return c.p.has("dtype") ? np::zeros(shape_param(c.p, "shape"), dtype_param(c.p))
                                 : np::zeros(shape_param(c.p, "shape"));
       })},
      {"ones", one([](const Call& c) {
         return c.p.has("dtype") ? np::ones(shape_param(c.p, "shape"), dtype_param(c.p))
                                 : np::ones(shape_param(c.p, "shape"));
       })},
      {"full", one([](const Call& c) {
         return np::full(shape_param(c.p, "shape"), c.at(0), opt_dtype(c.p));
       })},
      {"zeros_like", one([](const Call& c) { return np::zeros_like(c.at(0), opt_dtype(c.p)); })},
      {"ones_like", one([](const Call& c) { return np::ones_like(c.at(0), opt_dtype(c.p)); })},
      {"full_like",
       one([](const Call& c) { return np::full_like(c.at(0), c.at(1), opt_dtype(c.p)); })},
      // "integral 1": the bounds are C++ integers (the default dtype is then int32)
      {"arange(stop)", one([](const Call& c) {
         if (flag(c.p, "integral")) return np::arange(c.p.integer("stop"), opt_dtype(c.p));
         return np::arange(c.p.real("stop"), opt_dtype(c.p));
       })},
      {"arange(start,stop,step)", one([](const Call& c) {
         if (flag(c.p, "integral"))
           return np::arange(c.p.integer("start"), c.p.integer("stop"), c.p.integer("step"),
                             opt_dtype(c.p));
         return np::arange(c.p.real("start"), c.p.real("stop"), c.p.real("step"), opt_dtype(c.p));
       })},
      {"linspace", one([](const Call& c) {
         return np::linspace(c.p.real("start"), c.p.real("stop"), c.p.integer("num"),
                             flag(c.p, "endpoint", true), dtype_param(c.p));
       })},
      {"eye", one([](const Call& c) {
         std::optional<int64_t> m;
         if (c.p.has("m")) m = c.p.integer("m");
         return np::eye(c.p.integer("n"), m, c.p.integer("k", 0), dtype_param(c.p));
       })},
      // elementwise
      BINARY(add),
      BINARY(subtract),
      BINARY(multiply),
      BINARY(divide),
      BINARY(true_divide),
      BINARY(floor_divide),
      BINARY(mod),
      BINARY(remainder),
      BINARY(power),
      UNARY(negative),
      UNARY(positive),
      UNARY(abs),
      UNARY(absolute),
      UNARY(sign),
      UNARY(exp),
      UNARY(exp2),
      UNARY(expm1),
      UNARY(log),
      UNARY(log1p),
      UNARY(log2),
      UNARY(log10),
      UNARY(sqrt),
      UNARY(rsqrt),
      UNARY(square),
      UNARY(reciprocal),
      UNARY(sin),
      UNARY(cos),
      UNARY(tan),
      UNARY(arcsin),
      UNARY(arccos),
      UNARY(arctan),
      BINARY(arctan2),
      BINARY(logaddexp),
      UNARY(sinh),
      UNARY(cosh),
      UNARY(tanh),
      UNARY(arcsinh),
      UNARY(arccosh),
      UNARY(arctanh),
      UNARY(erf),
      UNARY(floor),
      UNARY(ceil),
      UNARY(round),
      UNARY(trunc),
      BINARY(maximum),
      BINARY(minimum),
      BINARY(equal),
      BINARY(not_equal),
      BINARY(less),
      BINARY(less_equal),
      BINARY(greater),
      BINARY(greater_equal),
      BINARY(logical_and),
      BINARY(logical_or),
      BINARY(logical_xor),
      UNARY(logical_not),
      BINARY(bitwise_and),
      BINARY(bitwise_or),
      BINARY(bitwise_xor),
      UNARY(bitwise_not),
      UNARY(invert),
      BINARY(left_shift),
      BINARY(right_shift),
      UNARY(isnan),
      UNARY(isinf),
      UNARY(isfinite),
      {"where", one([](const Call& c) { return np::where(c.at(0), c.at(1), c.at(2)); })},
      {"clip", one(clip_call)},
      // operators
      BINOP("operator+", a + b),
      BINOP("operator*", a * b),
      BINOP("operator/", a / b),
      BINOP("operator%", a % b),
      BINOP("operator<", a < b),
      BINOP("operator<=", a <= b),
      BINOP("operator>", a > b),
      BINOP("operator>=", a >= b),
      BINOP("operator==", a == b),
      BINOP("operator!=", a != b),
      BINOP("operator&", a & b),
      BINOP("operator|", a | b),
      BINOP("operator^", a ^ b),
      {"operator-",
       one([](const Call& c) { return c.in.size() == 1 ? -c.at(0) : c.at(0) - c.at(1); })},
      {"operator~", one([](const Call& c) { return ~c.at(0); })},
      {"operator!", one([](const Call& c) { return !c.at(0); })},
      // reductions
      REDUCE(sum),
      REDUCE(prod),
      REDUCE(max),
      REDUCE(min),
      REDUCE(amax),
      REDUCE(amin),
      REDUCE(mean),
      REDUCE(any),
      REDUCE(all),
      {"var", one([](const Call& c) {
         return np::var(c.at(0), axes_param(c.p), flag(c.p, "keepdims"), c.p.integer("ddof", 0));
       })},
      {"std", one([](const Call& c) {
         return np::std(c.at(0), axes_param(c.p), flag(c.p, "keepdims"), c.p.integer("ddof", 0));
       })},
      {"argmax", one([](const Call& c) {
         return np::argmax(c.at(0), opt_axis(c.p), flag(c.p, "keepdims"));
       })},
      {"argmin", one([](const Call& c) {
         return np::argmin(c.at(0), opt_axis(c.p), flag(c.p, "keepdims"));
       })},
      {"cumsum", one([](const Call& c) { return np::cumsum(c.at(0), opt_axis(c.p)); })},
      {"cumprod", one([](const Call& c) { return np::cumprod(c.at(0), opt_axis(c.p)); })},
      // movement
      {"reshape",
       one([](const Call& c) { return np::reshape(c.at(0), shape_param(c.p, "shape")); })},
      {"ravel", one([](const Call& c) { return np::ravel(c.at(0)); })},
      {"transpose", one([](const Call& c) {
         if (c.p.is_none("axes")) return np::transpose(c.at(0));
         kiln::Axes ax = axes_param(c.p, "axes");
         return np::transpose(c.at(0), ax.list());
       })},
      {"swapaxes", one([](const Call& c) {
         return np::swapaxes(c.at(0), static_cast<int>(c.p.integer("axis1")),
                             static_cast<int>(c.p.integer("axis2")));
       })},
      {"moveaxis(int)", one([](const Call& c) {
         return np::moveaxis(c.at(0), static_cast<int>(c.p.integer("source")),
                             static_cast<int>(c.p.integer("destination")));
       })},
      {"moveaxis(vector)", one([](const Call& c) {
         return np::moveaxis(c.at(0), c.p.ints("source"), c.p.ints("destination"));
       })},
      {"broadcast_to",
       one([](const Call& c) { return np::broadcast_to(c.at(0), shape_param(c.p, "shape")); })},
      {"broadcast_arrays", [](const Call& c) { return np::broadcast_arrays(c.in); }},
      {"broadcast_shapes", one([](const Call& c) {
         return np::zeros(np::broadcast_shapes(shape_param(c.p, "a"), shape_param(c.p, "b")),
                          kiln::int32);
       })},
      {"expand_dims", one([](const Call& c) { return np::expand_dims(c.at(0), axes_param(c.p)); })},
      {"squeeze", one([](const Call& c) { return np::squeeze(c.at(0), axes_param(c.p)); })},
      {"index",
       one([](const Call& c) { return np::index(c.at(0), index_param(c.p.tokens("index"))); })},
      {"pad", one([](const Call& c) {
         const Array& a = c.at(0);
         Array value = c.p.has("constant_value") ? scalar_like(c.p.str("constant_value"), a.dtype())
                                                 : Array(0);
         return np::pad(a, pairs_of(c.p.integers("pad_width")), c.p.str("mode"), value);
       })},
      {"concatenate", one([](const Call& c) {
         return np::concatenate(c.in, static_cast<int>(c.p.integer("axis")));
       })},
      {"stack",
       one([](const Call& c) { return np::stack(c.in, static_cast<int>(c.p.integer("axis"))); })},
      {"split(sections)",
       [](const Call& c) {
         return np::split(c.at(0), c.p.integer("sections"), static_cast<int>(c.p.integer("axis")));
       }},
      {"split(indices)",
       [](const Call& c) {
         return np::split(c.at(0), c.p.integers("indices"), static_cast<int>(c.p.integer("axis")));
       }},
      {"flip", one([](const Call& c) { return np::flip(c.at(0), axes_param(c.p)); })},
      {"repeat(int)", one([](const Call& c) {
         return np::repeat(c.at(0), c.p.integer("repeats"), opt_axis(c.p));
       })},
      {"repeat(vector)", one([](const Call& c) {
         return np::repeat(c.at(0), c.p.integers("repeats"), opt_axis(c.p));
       })},
      {"tile", one([](const Call& c) { return np::tile(c.at(0), c.p.integers("reps")); })},
      {"take", one([](const Call& c) { return np::take(c.at(0), c.at(1), opt_axis(c.p)); })},
      {"take_along_axis", one([](const Call& c) {
         return np::take_along_axis(c.at(0), c.at(1), static_cast<int>(c.p.integer("axis")));
       })},
      // linear algebra
      BINARY(matmul),
      BINARY(dot),
      BINARY(vdot),
      BINARY(inner),
      BINARY(outer),
      {"tensordot(int)", one([](const Call& c) {
         return np::tensordot(c.at(0), c.at(1), static_cast<int>(c.p.integer("axes")));
       })},
      {"tensordot(pairs)", one([](const Call& c) {
         return np::tensordot(c.at(0), c.at(1),
                              std::make_pair(c.p.ints("a_axes"), c.p.ints("b_axes")));
       })},
      {"einsum", one([](const Call& c) { return np::einsum(c.p.str("subscripts"), c.in); })},
      // lax
      {"conv_general_dilated", one(conv_general)},
      {"conv", one([](const Call& c) {
         return lax::conv(c.at(0), c.at(1), c.p.integers("window_strides"), padding_param(c.p));
       })},
      {"reduce_window", one([](const Call& c) {
         return lax::reduce_window(c.at(0), window_op(c.p.str("op")),
                                   c.p.integers("window_dimensions"),
                                   c.p.integers("window_strides"), padding_param(c.p),
                                   c.p.integers("base_dilation"), c.p.integers("window_dilation"));
       })},
      {"max_pool", one([](const Call& c) {
         return lax::max_pool(c.at(0), c.p.integers("window"), c.p.integers("strides"),
                              padding_param(c.p));
       })},
      {"avg_pool", one([](const Call& c) {
         return lax::avg_pool(c.at(0), c.p.integers("window"), c.p.integers("strides"),
                              padding_param(c.p), flag(c.p, "count_include_pad", true));
       })},
      {"convert_element_type",
       one([](const Call& c) { return lax::convert_element_type(c.at(0), dtype_param(c.p)); })},
      {"bitcast_convert_type",
       one([](const Call& c) { return lax::bitcast_convert_type(c.at(0), dtype_param(c.p)); })},
      // Array methods
      {"Array.astype", one([](const Call& c) { return c.at(0).astype(dtype_param(c.p)); })},
      {"Array.reshape",
       one([](const Call& c) { return c.at(0).reshape(shape_param(c.p, "shape")); })},
      {"Array.transpose", one([](const Call& c) { return c.at(0).transpose(); })},
      {"Array.T", one([](const Call& c) { return c.at(0).T(); })},
      {"Array.operator[]",
       one([](const Call& c) { return c.at(0)[index_param(c.p.tokens("index"))]; })},
      {"Array.operator[](int)", one([](const Call& c) { return c.at(0)[c.p.integer("i")]; })},
  };
  return t;
}

#undef UNARY
#undef BINARY
#undef REDUCE
#undef BINOP

// ---- loading ----
struct CaseRef {
  const FixtureCase* c;
};

void PrintTo(const CaseRef& r, std::ostream* os) { *os << r.c->id << " (" << r.c->op << ")"; }

std::string& load_error() {
  static std::string e;
  return e;
}

const std::vector<FixtureCase>& all_cases() {
  static const std::vector<FixtureCase> cases = [] {
    try {
      // KILN_NUMPY_FIXTURES names another fixture file (to try a regenerated one).
      const char* path = std::getenv("KILN_NUMPY_FIXTURES");
      return kiln_test::read_fixture_file(
          path && *path ? std::string(path) : std::string(KILN_FIXTURE_DIR) + "/numpy_ops.txt");
    } catch (const std::exception& e) {
      load_error() = e.what();
      FixtureCase c;
      c.id = "fixture_load_error";
      c.op = "__load_error__";
      return std::vector<FixtureCase>{c};
    }
  }();
  return cases;
}

std::vector<CaseRef> case_refs() {
  std::vector<CaseRef> out;
  for (const auto& c : all_cases()) out.push_back({&c});
  return out;
}

// ---- comparing ----
std::string shape_text(const std::vector<int64_t>& s) { return kiln::shape_str(s); }

bool close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (got == want) return true;  // infinities, exact matches
  if (std::isinf(want) || std::isnan(got)) return false;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

void check_output(const FixtureCase& c, size_t k, const Array& got, const FixtureArray& want) {
  std::string where = "case " + c.id + " (" + c.op + "), output " + std::to_string(k);
  ASSERT_EQ(shape_text(got.shape()), shape_text(want.shape)) << where << ": shape";
  std::string got_dtype = kiln::dtype_name(got.dtype());
  EXPECT_EQ(got_dtype, want.dtype) << where << ": dtype";
  if (want.weak >= 0) {
    EXPECT_EQ(got.weak_type(), want.weak == 1) << where << ": weak_type";
  }
  std::vector<uint8_t> bytes = got.bytes();
  ASSERT_EQ(bytes.size(), static_cast<size_t>(got.size()) * kiln::itemsize(got.dtype()))
      << where << ": bytes()";
  std::vector<double> vals = kiln_test::decode_as_doubles(bytes, got_dtype);
  bool exact = !want.is_float() && !kiln::is_float(got.dtype());
  int bad = 0;
  std::ostringstream msg;
  msg.precision(17);
  for (int64_t i = 0; i < want.size(); ++i) {
    double w = want.is_float() ? want.floats[i] : static_cast<double>(want.ints[i]);
    double g = vals[i];
    bool ok = exact ? g == w : close(g, w, c.rtol, c.atol);
    if (!ok && bad++ < 8) msg << "\n  [" << i << "] got " << g << ", want " << w;
  }
  EXPECT_EQ(bad, 0) << where << ": " << bad << " of " << want.size() << " values differ (rtol "
                    << c.rtol << ", atol " << c.atol << ")" << msg.str();
}

bool message_matches(const std::string& what, const std::string& alternatives) {
  size_t from = 0;
  while (true) {
    size_t bar = alternatives.find('|', from);
    std::string alt =
        alternatives.substr(from, bar == std::string::npos ? std::string::npos : bar - from);
    if (!alt.empty() && what.find(alt) != std::string::npos) return true;
    if (bar == std::string::npos) return false;
    from = bar + 1;
  }
}

// After a failed call, every input must still be readable, and a plain input unchanged.
void check_inputs_intact(const FixtureCase& c, const std::vector<Array>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const FixtureInput& fi = c.inputs[i];
    std::vector<uint8_t> bytes;
    try {
      bytes = inputs[i].bytes();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << c.id << ": input " << i
                    << " unreadable after the error: " << e.what();
      continue;
    }
    if (fi.weak || !fi.views.empty()) continue;
    EXPECT_EQ(bytes, fi.array.bytes())
        << "case " << c.id << ": input " << i << " changed by the failed call";
  }
}

class NumpyOps : public testing::TestWithParam<CaseRef> {};

TEST_P(NumpyOps, MatchesReference) {
  const FixtureCase& c = *GetParam().c;
  ASSERT_TRUE(load_error().empty()) << load_error();
  auto it = table().find(c.op);
  ASSERT_NE(it, table().end()) << "case " << c.id << ": op '" << c.op
                               << "' is not in the dispatch table";
  std::vector<Array> inputs;
  try {
    for (const auto& in : c.inputs) inputs.push_back(make_input(in));
  } catch (const std::exception& e) {
    FAIL() << "case " << c.id << ": building the inputs threw: " << e.what();
  }
  Call call{inputs, c.params, c.inputs};
  if (c.error) {
    try {
      Outputs out = it->second(call);
      for (const auto& o : out) o.eval();
      ADD_FAILURE() << "case " << c.id << " (" << c.op << "): expected a kiln::Error containing '"
                    << *c.error << "', but nothing was thrown";
    } catch (const kiln::Error& e) {
      EXPECT_TRUE(message_matches(e.what(), *c.error))
          << "case " << c.id << " (" << c.op << "): kiln::Error message '" << e.what()
          << "' contains none of '" << *c.error << "'";
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << c.id << " (" << c.op
                    << "): threw a non-kiln exception: " << e.what();
    }
    check_inputs_intact(c, inputs);
    return;
  }
  Outputs out;
  try {
    out = it->second(call);
    for (const auto& o : out) o.eval();
  } catch (const std::exception& e) {
    FAIL() << "case " << c.id << " (" << c.op << "): threw: " << e.what();
  }
  ASSERT_EQ(out.size(), c.expects.size()) << "case " << c.id << ": number of outputs";
  for (size_t k = 0; k < out.size(); ++k) {
    try {
      check_output(c, k, out[k], c.expects[k]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << c.id << " (" << c.op << "), output " << k
                    << ": reading it threw: " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Numpy, NumpyOps, testing::ValuesIn(case_refs()),
                         [](const testing::TestParamInfo<CaseRef>& info) {
                           return info.param.c->id;
                         });

// Every API function in the table has fixtures, and every fixture op has a table entry.
TEST(NumpyFixtures, TableAndFixturesCoverEachOther) {
  ASSERT_TRUE(load_error().empty()) << load_error();
  std::map<std::string, int> count;
  for (const auto& c : all_cases()) ++count[c.op];
  for (const auto& [op, fn] : table())
    EXPECT_GT(count[op], 0) << "no fixture exercises '" << op << "'";
  for (const auto& [op, n] : count)
    EXPECT_TRUE(table().count(op)) << n << " fixtures use unknown op '" << op << "'";
}

TEST(NumpyFixtures, HalfConversionRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double d = kiln_test::double_from_half_bits(static_cast<uint16_t>(h));
    if (std::isnan(d)) continue;
    EXPECT_EQ(kiln_test::half_bits_from_double(d), h) << h;
  }
  EXPECT_EQ(kiln_test::half_bits_from_double(65520.0), 0x7c00);          // rounds to inf
  EXPECT_EQ(kiln_test::half_bits_from_double(2049.0), 0x6800);           // tie to even: 2048
  EXPECT_EQ(kiln_test::half_bits_from_double(std::ldexp(1.0, -25)), 0);  // tie to even: 0
}

}  // namespace

}  // namespace numpy_ops_test
