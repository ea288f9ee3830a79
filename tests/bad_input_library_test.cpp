// Bad-input rows for kiln::lax, linalg, numpy::fft, nn and random.
#include <cmath>
#include <limits>

#include "bad_input.h"

namespace bad_input {

namespace np = kiln::numpy;
namespace lax = kiln::lax;
namespace linalg = kiln::linalg;
namespace fft = kiln::numpy::fft;
namespace nn = kiln::nn;
namespace rnd = kiln::random;
using kiln::Array;
using kiln::Shape;

namespace {

Array img() { return np::ones({1, 2, 5, 5}); }   // N, C, H, W
Array kern() { return np::ones({3, 2, 3, 3}); }  // O, I, H, W
Array key() { return rnd::key(0); }

// One token's attention over a 3-row cache: 4 query heads of 2 over 2 kv heads.
struct Attn {
  Array q = np::ones({4, 2}), keys = np::ones({3, 2, 2}), values = np::ones({3, 2, 2});
  Array k = np::ones({2, 2}), v = np::ones({2, 2}), start = Array(int32_t(1));
};
using AttnFn = Array (*)(const Array&, const Array&, const Array&, const Array&, const Array&, const Array&, float,
                         int64_t);

void decode_attention_rows(std::vector<Row>& r) {
  // The routine and its unfused formula share the shape rule, so both reject the same calls.
  for (auto [name, f] : {std::pair<std::string, AttnFn>{"decode_attention", &lax::decode_attention},
                         {"decode_attention_unfused", &lax::decode_attention_unfused}}) {
    const std::string fn = "lax::" + name;
    r.push_back(err(fn, [f = f] { Attn a; f(np::ones({4}), a.keys, a.values, a.k, a.v, a.start, 1, 0); },
                    {"decode_attention", "q is", "heads, head_dim"}));
    r.push_back(err(fn, [f = f] { Attn a; f(np::ones({3, 2}), a.keys, a.values, a.k, a.v, a.start, 1, 0); },
                    {"decode_attention", "3 heads", "multiple of the cache's 2"}));
    r.push_back(err(fn, [f = f] { Attn a; f(a.q, np::ones({3, 2, 3}), a.values, a.k, a.v, a.start, 1, 0); },
                    {"decode_attention", "head_dim 2"}));
    r.push_back(err(fn, [f = f] { Attn a; f(a.q, a.keys, np::ones({4, 2, 2}), a.k, a.v, a.start, 1, 0); },
                    {"decode_attention", "values is"}));
    r.push_back(err(fn, [f = f] { Attn a; f(a.q, a.keys, a.values, a.k, a.v, Array(1.0f), 1, 0); },
                    {"decode_attention", "start is", "int32"}));
    r.push_back(err(fn, [f = f] { Attn a; f(a.q, a.keys, a.values, a.k, a.v, a.start, 1, -1); },
                    {"decode_attention", "sliding_window = -1"}));
    r.push_back(err(fn, [f = f] { Attn a; f(a.q, a.keys, a.values, a.k, a.v, a.start, NAN, 0); },
                    {"decode_attention", "scale"}));
    r.push_back(ok_row(fn, [f = f, name = name] {
      // Equal keys: the softmax is uniform and every head returns the (all-ones) values.
      Attn a;
      for (float x : f(a.q, a.keys, a.values, a.k, a.v, a.start, 0.5f, 0).to_vector<float>())
        expect_true(std::fabs(x - 1.0f) < 1e-6f, name + " of equal rows");
    }));
  }
}

void lax_rows(std::vector<Row>& r) {
  r.push_back(err("lax::conv_general_dilated", [] { lax::conv_general_dilated(img(), np::ones({3, 4, 3, 3}), {1, 1}, std::string("VALID")); }, {"conv_general_dilated"}));
  r.push_back(err("lax::conv_general_dilated", [] { lax::conv_general_dilated(img(), kern(), {1, 1}, std::string("BOGUS")); }, {"conv_general_dilated", "BOGUS"}));
  r.push_back(err("lax::conv_general_dilated", [] { lax::conv_general_dilated(img(), kern(), {0, 1}, std::string("VALID")); }, {"conv_general_dilated"}));
  r.push_back(err("lax::conv_general_dilated", [] { lax::conv_general_dilated(img(), kern(), {1, 1}, std::string("VALID"), {}, {}, lax::ConvDimensionNumbers{"NCHW", "OIHW", "NCXW"}); }, {"conv_general_dilated"}));
  r.push_back(err("lax::conv", [] { lax::conv(f23(), kern(), {1, 1}, std::string("SAME")); }, {"conv"}));
  r.push_back(err("lax::conv_transpose", [] { lax::conv_transpose(img(), np::ones({3, 4, 3, 3}), {1, 1}, std::string("SAME")); }, {"conv_transpose"}));
  r.push_back(err("lax::reduce_window", [] { lax::reduce_window(f23(), lax::WindowOp::Sum, {2}, {1}); }, {"reduce_window"}));
  r.push_back(err("lax::reduce_window", [] { lax::reduce_window(f23(), lax::WindowOp::Max, {2, 2}, {0, 1}); }, {"reduce_window"}));
  r.push_back(err("lax::max_pool", [] { lax::max_pool(img(), {2, 2, 2}, {1, 1}); }, {"max_pool"}));
  r.push_back(err("lax::avg_pool", [] { lax::avg_pool(img(), {2, 2}, {0, 1}); }, {"avg_pool"}));
  r.push_back(err("lax::convert_element_type", [] { lax::convert_element_type(Array(), kiln::int32); }, {"convert_element_type"}));
  r.push_back(ok_row("lax::convert_element_type", [] {
    // NaN and Inf to int32: the saturating, NaN-to-0 conversion JAX's CPU backend does.
    auto v = lax::convert_element_type(np::array(std::vector<float>{NAN, INFINITY, -INFINITY}, {3}), kiln::int32).to_vector<int32_t>();
    expect_true(v.size() == 3, "converted three values");
  }));
  r.push_back(err("lax::bitcast_convert_type", [] { lax::bitcast_convert_type(f23(), kiln::float64); }, {"bitcast_convert_type", "float64"}));
  r.push_back(err("lax::top_k", [] { lax::top_k(f23(), 4); }, {"top_k", "4"}));
  r.push_back(err("lax::top_k", [] { lax::top_k(f23(), -1); }, {"top_k", "-1"}));
  r.push_back(err("lax::top_k", [] { lax::top_k(f23(), 1, 2); }, {"top_k", "axis 2"}));
  r.push_back(ok_row("lax::erf_inv", [] {
    auto v = lax::erf_inv(np::array(std::vector<float>{1, -1, 2, NAN}, {4})).to_vector<float>();
    expect_true(v[0] == INFINITY && v[1] == -INFINITY && std::isnan(v[2]) && std::isnan(v[3]), "erf_inv(+-1, 2, nan)");
  }));
  r.push_back(err("lax::erf_inv", [] { lax::erf_inv(Array()); }, {"erf_inv"}));
  r.push_back(err("lax::fma_f32", [] { lax::fma_f32(f23(), np::ones({4}), 1.0); }, {"fma_f32"}));
  r.push_back(err("lax::nextafter", [] { lax::nextafter(f23(), np::ones({4})); }, {"nextafter"}));
  r.push_back(ok_row("lax::nextafter", [] { expect_true(std::isnan(lax::nextafter(Array(NAN), Array(1.0)).item()), "nextafter(nan)"); }));
  decode_attention_rows(r);
}

void linalg_rows(std::vector<Row>& r) {
  // Not square, rank 1, and a mismatched right-hand side.
  using One = std::function<void(const Array&)>;
  std::vector<std::pair<std::string, One>> square = {
      {"cholesky", [](const Array& a) { linalg::cholesky(a); }},
      {"inv", [](const Array& a) { linalg::inv(a); }}, {"det", [](const Array& a) { linalg::det(a); }},
      {"slogdet", [](const Array& a) { linalg::slogdet(a); }}, {"eigh", [](const Array& a) { linalg::eigh(a); }},
      {"eigvalsh", [](const Array& a) { linalg::eigvalsh(a); }}};
  for (auto& [name, f] : square) {
    r.push_back(err("linalg::" + name, [f = f] { f(f23()); }, {name, "(2, 3)"}));
    r.push_back(err("linalg::" + name, [f = f] { f(np::ones({3})); }, {name}));
  }
  r.push_back(err("linalg::lu", [] { linalg::lu(np::ones({3})); }, {"lu", "(3,)"}));  // lu takes m x n
  r.push_back(err("linalg::lu", [] { linalg::lu(np::ones({3, 3}, kiln::bool_)); }, {"lu", "bool"}));
  r.push_back(err("linalg::svd", [] { linalg::svd(np::ones({3})); }, {"svd"}));
  r.push_back(err("linalg::svd", [] { linalg::svd(f23(), true); }, {"svd", "full_matrices"}));
  r.push_back(err("linalg::svdvals", [] { linalg::svdvals(Array(2.0)); }, {"svdvals"}));
  r.push_back(err("linalg::solve", [] { linalg::solve(np::eye(3), np::ones({4})); }, {"solve"}));
  r.push_back(err("linalg::solve", [] { linalg::solve(f23(), np::ones({2})); }, {"solve"}));
  r.push_back(err("linalg::triangular_solve", [] { linalg::triangular_solve(np::eye(3), np::ones({2, 2}), true); }, {"triangular_solve"}));
  r.push_back(ok_row("linalg::det", [] { expect_true(std::isnan(linalg::det(np::full({2, 2}, NAN)).item()), "det of NaNs"); }));
  r.push_back(ok_row("linalg::inv", [] { expect_true(linalg::inv(np::zeros({0, 0})).shape() == Shape{0, 0}, "inv of 0x0"); }));
}

void fft_rows(std::vector<Row>& r) {
  auto c = [] { return fft::Complex{f23(), np::zeros({2, 3})}; };
  auto mismatched = [] { return fft::Complex{f23(), np::zeros({3})}; };
  using C2C = fft::Complex (*)(const fft::Complex&, int);
  for (auto [name, f] : std::vector<std::pair<std::string, C2C>>{{"fft", fft::fft}, {"ifft", fft::ifft}}) {
    r.push_back(err("numpy::fft::" + name, [f = f, c] { f(c(), 2); }, {name, "axis 2"}));
    r.push_back(err("numpy::fft::" + name, [f = f, mismatched] { f(mismatched(), -1); }, {name}));
  }
  r.push_back(err("numpy::fft::fftn", [c] { fft::fftn(c(), std::vector<int>{0, 5}); }, {"fftn"}));
  r.push_back(err("numpy::fft::ifftn", [mismatched] { fft::ifftn(mismatched()); }, {"ifftn"}));
  r.push_back(err("numpy::fft::fft2", [] { fft::fft2(fft::Complex{np::ones({3}), np::ones({3})}); }, {"fft2"}));
  r.push_back(err("numpy::fft::ifft2", [c] { fft::ifft2(c(), {0, 0}); }, {"ifft2"}));
  r.push_back(err("numpy::fft::rfft", [] { fft::rfft(f23(), 2); }, {"rfft", "axis 2"}));
  r.push_back(err("numpy::fft::rfft", [] { fft::rfft(np::zeros({0})); }, {"rfft"}));
  r.push_back(err("numpy::fft::rfftn", [] { fft::rfftn(f23(), std::vector<int>{3}); }, {"rfftn"}));
  r.push_back(err("numpy::fft::rfft2", [] { fft::rfft2(np::ones({3})); }, {"rfft2"}));
  r.push_back(err("numpy::fft::irfft", [mismatched] { fft::irfft(mismatched()); }, {"irfft"}));
  r.push_back(err("numpy::fft::irfftn", [c] { fft::irfftn(c(), std::vector<int>{4}); }, {"irfftn"}));
  r.push_back(err("numpy::fft::irfft2", [] { fft::irfft2(fft::Complex{np::ones({3}), np::ones({3})}); }, {"irfft2"}));
  r.push_back(err("numpy::fft::hfft", [c] { fft::hfft(c(), -3); }, {"hfft"}));
  r.push_back(err("numpy::fft::ihfft", [] { fft::ihfft(f23(), 2); }, {"ihfft"}));
  r.push_back(ok_row("numpy::fft::fft", [] {
    auto out = fft::fft(fft::Complex{np::array(std::vector<float>{INFINITY, 0}, {2}), np::zeros({2})});
    expect_true(out.real.to_vector<float>()[0] == INFINITY, "fft of an Inf");
  }));
  r.push_back(err("numpy::fft::fftfreq", [] { fft::fftfreq(0); }, {"fftfreq", "0"}));
  r.push_back(err("numpy::fft::fftfreq", [] { fft::fftfreq(4, 1.0, kiln::int32); }, {"fftfreq", "int32"}));
  r.push_back(err("numpy::fft::rfftfreq", [] { fft::rfftfreq(-3); }, {"rfftfreq", "-3"}));
  r.push_back(err("numpy::fft::fftshift", [] { fft::fftshift(f23(), 2); }, {"fftshift", "axis 2"}));
  r.push_back(err("numpy::fft::ifftshift", [] { fft::ifftshift(f23(), -3); }, {"ifftshift", "axis -3"}));
}

void nn_rows(std::vector<Row>& r) {
  using Act = std::function<Array(const Array&)>;
  std::vector<std::pair<std::string, Act>> acts = {
      {"relu", nn::relu}, {"relu6", nn::relu6}, {"sigmoid", nn::sigmoid}, {"log_sigmoid", nn::log_sigmoid},
      {"silu", nn::silu}, {"swish", nn::swish}, {"softplus", nn::softplus},
      {"elu", [](const Array& x) { return nn::elu(x); }}, {"leaky_relu", [](const Array& x) { return nn::leaky_relu(x); }},
      {"gelu", [](const Array& x) { return nn::gelu(x); }}};
  for (auto& [name, f] : acts) {
    // NaN stays NaN and +Inf maps to +Inf (or 6 for relu6, 1 for sigmoid, 0 for log_sigmoid).
    r.push_back(ok_row("nn::" + name, [name = name, f = f] {
      auto v = f(np::array(std::vector<float>{NAN, INFINITY}, {2})).to_vector<float>();
      double hi = name == "relu6" ? 6 : name == "sigmoid" ? 1 : name == "log_sigmoid" ? 0 : INFINITY;
      expect_true(std::isnan(v[0]) && v[1] == hi, name + " of NaN and Inf");
    }));
    r.push_back(err("nn::" + name, [f = f] { f(Array()); }, {name}));
  }
  r.push_back(err("nn::softmax", [] { nn::softmax(f23(), 2); }, {"softmax", "axis 2"}));
  r.push_back(err("nn::log_softmax", [] { nn::log_softmax(f23(), -3); }, {"log_softmax", "axis -3"}));
  r.push_back(err("nn::logsumexp", [] { nn::logsumexp(f23(), 4); }, {"logsumexp", "axis 4"}));
  r.push_back(ok_row("nn::logsumexp", [] { expect_true(nn::logsumexp(np::full({3}, -INFINITY)).item() == -INFINITY, "logsumexp of -inf"); }));
  r.push_back(err("nn::standardize", [] { nn::standardize(f23(), -1, np::ones({4})); }, {"standardize"}));
  r.push_back(err("nn::one_hot", [] { nn::one_hot(np::zeros({3}, kiln::int32), -1); }, {"one_hot", "-1"}));
  r.push_back(err("nn::one_hot", [] { nn::one_hot(np::zeros({3}, kiln::int32), 4, kiln::float32, 3); }, {"one_hot", "axis 3"}));
  r.push_back(err("nn::dot_product_attention", [] { nn::dot_product_attention(np::ones({1, 2, 4, 8}), np::ones({1, 3, 3, 8}), np::ones({1, 3, 3, 8})); }, {"dot_product_attention"}));
  r.push_back(err("nn::dot_product_attention", [] { nn::dot_product_attention(np::ones({2, 8}), np::ones({2, 8}), np::ones({2, 8})); }, {"dot_product_attention"}));
  r.push_back(err("nn::dot_product_attention", [] { nn::dot_product_attention(np::ones({2, 4, 8}), np::ones({3, 4, 8}), np::ones({3, 4, 7})); }, {"dot_product_attention"}));
  // Initializers: a bad shape or dtype reaches the initializer's call.
  using Make = std::function<nn::Initializer()>;
  std::vector<std::pair<std::string, Make>> inits = {
      {"zeros", [] { return nn::zeros(); }}, {"ones", [] { return nn::ones(); }}, {"constant", [] { return nn::constant(2); }},
      {"uniform", [] { return nn::uniform(); }}, {"normal", [] { return nn::normal(); }},
      {"truncated_normal", [] { return nn::truncated_normal(); }},
      {"variance_scaling", [] { return nn::variance_scaling(1, "fan_in", "normal"); }},
      {"glorot_uniform", [] { return nn::glorot_uniform(); }}, {"glorot_normal", [] { return nn::glorot_normal(); }},
      {"xavier_uniform", [] { return nn::xavier_uniform(); }}, {"xavier_normal", [] { return nn::xavier_normal(); }},
      {"lecun_uniform", [] { return nn::lecun_uniform(); }}, {"lecun_normal", [] { return nn::lecun_normal(); }},
      {"he_uniform", [] { return nn::he_uniform(); }}, {"he_normal", [] { return nn::he_normal(); }},
      {"kaiming_uniform", [] { return nn::kaiming_uniform(); }}, {"kaiming_normal", [] { return nn::kaiming_normal(); }}};
  for (auto& [name, make] : inits)
    r.push_back(err("nn::" + name, [make = make] { make()(key(), {3, -4}, kiln::float32); }, {"(3, -4)"}));
  r.push_back(err("nn::variance_scaling", [] { nn::variance_scaling(1, "fan_sideways", "normal"); }, {"variance_scaling", "fan_sideways"}));
  r.push_back(err("nn::variance_scaling", [] { nn::variance_scaling(1, "fan_in", "cauchy"); }, {"variance_scaling", "cauchy"}));
  r.push_back(err("nn::glorot_uniform", [] { nn::glorot_uniform()(key(), {3}, kiln::float32); }, {"variance_scaling"}));
  r.push_back(err("nn::he_normal", [] { nn::he_normal(5, 6)(key(), {3, 4}, kiln::float32); }, {"variance_scaling", "axis"}));
}

void random_rows(std::vector<Row>& r) {
  auto k = [] { return key(); };
  auto bk = [] { return np::ones({3}, kiln::uint32); };
  r.push_back(ok_row("random::PRNGKey", [] { expect_true(rnd::PRNGKey(-1).to_vector<uint32_t>()[1] == 0xffffffffu, "PRNGKey(-1)"); }));
  r.push_back(ok_row("random::key", [] { expect_true(rnd::key(int64_t(1) << 33).shape() == Shape{2}, "key of a large seed"); }));
  r.push_back(err("random::split", [bk] { rnd::split(bk()); }, {"split", "key"}));
  r.push_back(err("random::split", [k] { rnd::split(k(), int64_t(-1)); }, {"split", "-1"}));
  r.push_back(err("random::split", [k] { rnd::split(k(), Shape{2, -1}); }, {"split"}));
  r.push_back(err("random::fold_in", [k] { rnd::fold_in(k(), np::ones({2})); }, {"fold_in"}));
  r.push_back(err("random::threefry2x32", [] { rnd::threefry2x32(np::ones({2}), np::ones({2}), np::ones({2}), np::ones({2})); }, {"threefry2x32", "uint32"}));
  r.push_back(err("random::bits", [bk] { rnd::bits(bk(), {2}); }, {"bits", "key"}));
  r.push_back(err("random::bits", [k] { rnd::bits(k(), {-2}); }, {"bits", "-2"}));
  r.push_back(err("random::uniform", [k] { rnd::uniform(k(), {2}, kiln::int32); }, {"uniform", "int32"}));
  r.push_back(err("random::uniform", [k] { rnd::uniform(k(), {2}, kiln::float32, np::zeros({3})); }, {"uniform"}));
  r.push_back(err("random::normal", [k] { rnd::normal(k(), {2}, kiln::bool_); }, {"normal", "bool"}));
  r.push_back(err("random::truncated_normal", [k] { rnd::truncated_normal(k(), np::zeros({2}), np::ones({3})); }, {"truncated_normal"}));
  r.push_back(err("random::bernoulli", [k] { rnd::bernoulli(k(), np::full({3}, 0.5), Shape{2}); }, {"bernoulli"}));
  r.push_back(err("random::categorical", [k] { rnd::categorical(k(), f23(), 2); }, {"categorical", "axis 2"}));
  r.push_back(err("random::randint", [k] { rnd::randint(k(), {2}, 0, 10, kiln::float32); }, {"randint", "float32"}));
  r.push_back(err("random::permutation", [k] { rnd::permutation(k(), int64_t(-3)); }, {"permutation", "-3"}));
  r.push_back(err("random::permutation", [k] { rnd::permutation(k(), f23(), 2); }, {"permutation", "axis 2"}));
  using Sampler = Array (*)(const Array&, const Shape&, kiln::DType);
  for (auto [name, f] : std::vector<std::pair<std::string, Sampler>>{
           {"exponential", rnd::exponential}, {"gumbel", rnd::gumbel}, {"laplace", rnd::laplace},
           {"logistic", rnd::logistic}, {"cauchy", rnd::cauchy}, {"maxwell", rnd::maxwell}}) {
    r.push_back(err("random::" + name, [f = f, k] { f(k(), {2}, kiln::int32); }, {name, "int32"}));
    r.push_back(err("random::" + name, [f = f, bk] { f(bk(), {2}, kiln::float32); }, {"key"}));
  }
  r.push_back(err("random::lognormal", [k] { rnd::lognormal(k(), np::ones({3}), {2}); }, {"lognormal"}));
  r.push_back(err("random::rayleigh", [k] { rnd::rayleigh(k(), 1.0, {2}, kiln::int32); }, {"rayleigh", "int32"}));
  r.push_back(err("random::double_sided_maxwell", [k] { rnd::double_sided_maxwell(k(), np::zeros({3}), np::ones({2}), {2}); }, {"double_sided_maxwell"}));
  r.push_back(err("random::pareto", [k] { rnd::pareto(k(), np::ones({3}), {2}); }, {"pareto"}));
  r.push_back(err("random::weibull_min", [k] { rnd::weibull_min(k(), 1.0, 1.0, {2}, kiln::bool_); }, {"weibull_min", "bool"}));
  r.push_back(err("random::triangular", [k] { rnd::triangular(k(), 0.0, np::ones({3}), 2.0, {2}); }, {"triangular"}));
  r.push_back(err("random::geometric", [k] { rnd::geometric(k(), 0.5, {2}, kiln::float32); }, {"geometric", "float32"}));
  r.push_back(err("random::rademacher", [k] { rnd::rademacher(k(), {-1}); }, {"rademacher"}));
  r.push_back(err("random::multivariate_normal", [k] { rnd::multivariate_normal(k(), np::zeros({3}), np::eye(2)); }, {"multivariate_normal"}));
}

// Control flow (lax_control.h), indexed updates and qr: body signatures, index forms and
// shapes are checked before anything runs.
void control_rows(std::vector<Row>& r) {
  using kiln::Tree;
  auto same = [](const Tree& c, const Tree& x) { return std::make_pair(c, x); };
  auto to_int = [](const Tree& c, const Tree&) { return std::make_pair(Tree(c.array().astype(kiln::int32)), Tree()); };
  r.push_back(err("lax::scan", [=] { lax::scan(same, Tree(Array(0.0)), Tree(np::ones({2})), int64_t(3)); }, {"scan"}));
  r.push_back(err("lax::scan", [=] { lax::scan(to_int, Tree(Array(0.0)), Tree(np::ones({2}))); }, {"scan"}));
  r.push_back(err("lax::scan_flat", [] {
    lax::scan_flat([](const std::vector<Array>& a) { return a; }, {Array(0.0)}, {np::ones({2}), np::ones({3})}, 2);
  }, {"scan"}));
  r.push_back(err("lax::while_loop", [] {
    lax::while_loop([](const Tree& c) { return c.array(); }, [](const Tree& c) { return c; }, Tree(Array(0.0)));
  }, {"while"}));
  r.push_back(err("lax::while_flat", [] {
    lax::while_flat([](const std::vector<Array>& c) { return c; }, [](const std::vector<Array>& c) { return c; }, {Array(0.0)});
  }, {"while"}));
  r.push_back(err("lax::fori_loop", [] {
    lax::fori_loop(0, 3, [](const Array&, const Tree& c) { return Tree(c.array().astype(kiln::int32)); }, Tree(Array(0.0)));
  }, {"scan"}));
  auto one = [](const std::vector<Tree>& o) { return o[0]; };
  auto other = [](const std::vector<Tree>& o) { return Tree(o[0].array().astype(kiln::int32)); };
  r.push_back(err("lax::cond", [=] { lax::cond(Array(true), one, other, {Tree(Array(1.0))}); }, {"cond"}));
  r.push_back(err("lax::switch_", [] { lax::switch_(Array(0), {}, {Tree(Array(1.0))}); }, {"switch"}));
  r.push_back(err("lax::switch_flat", [] { lax::switch_flat(Array(0), {}, {Array(1.0)}); }, {"switch"}));
  r.push_back(err("lax::map", [] { lax::map([](const Tree& x) { return x; }, Tree(Array(1.0))); }, {"map"}));
  r.push_back(err("numpy::at", [] { np::at(f23(), {0, 0, 0}).get(); }, {"at"}));
  r.push_back(err("numpy::at", [] { np::at(f23(), {0}).set(Array(1.0), "bogus"); }, {"bogus"}));
  r.push_back(err("linalg::qr", [] { linalg::qr(np::ones({3})); }, {"qr"}));
  r.push_back(err("linalg::qr", [] { linalg::qr(f23(), "bogus"); }, {"qr", "bogus"}));
}

}  // namespace

std::vector<Row> library_rows() {
  std::vector<Row> r;
  lax_rows(r);
  linalg_rows(r);
  fft_rows(r);
  nn_rows(r);
  random_rows(r);
  control_rows(r);
  return r;
}

}  // namespace bad_input
