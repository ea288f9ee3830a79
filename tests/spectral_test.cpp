// Checks kiln::numpy::fft against JAX values and gradients (tests/fixtures/spectral.txt from
// tools/gen_spectral_fixtures.py), plus vmap against a loop, jit against eager, forward
// against reverse mode, round trips, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace spectral_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
using kiln::Shape;
using kiln::Tree;
using kiln_test::FixtureArray;
using kiln_test::FixtureCase;
using kiln_test::Params;
using kiln_test::to_array;
namespace np = kiln::numpy;
namespace fft = kiln::numpy::fft;
namespace la = kiln::linalg;
using Cx = fft::Complex;

void expect_close(const Array& got, const FixtureArray& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.shape(), Shape(want.shape)) << what;
  ASSERT_EQ(kiln::dtype_name(got.dtype()), want.dtype) << what;
  auto g = got.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], want.floats[i], atol + rtol * std::fabs(want.floats[i])) << what << " at " << i;
}

std::optional<std::vector<int>> axes(const Params& p) {
  if (p.is_none("axes")) return std::nullopt;
  return p.ints("axes");
}
int axis(const Params& p) { return int(p.integer("axis")); }
std::vector<Array> pair(const Cx& z) { return {z.real, z.imag}; }

using Op = std::function<std::vector<Array>(const std::vector<Array>&, const Params&)>;
const std::map<std::string, Op>& ops() {
  using V = std::vector<Array>;
  static const std::map<std::string, Op> t = {
      {"fft", [](const V& x, const Params& p) { return pair(fft::fft({x[0], x[1]}, axis(p))); }},
      {"ifft", [](const V& x, const Params& p) { return pair(fft::ifft({x[0], x[1]}, axis(p))); }},
      {"fftn", [](const V& x, const Params& p) { return pair(fft::fftn({x[0], x[1]}, axes(p))); }},
      {"ifftn", [](const V& x, const Params& p) { return pair(fft::ifftn({x[0], x[1]}, axes(p))); }},
      {"fft2", [](const V& x, const Params& p) { return pair(fft::fft2({x[0], x[1]}, *axes(p))); }},
      {"ifft2", [](const V& x, const Params& p) { return pair(fft::ifft2({x[0], x[1]}, *axes(p))); }},
      {"rfft", [](const V& x, const Params& p) { return pair(fft::rfft(x[0], axis(p))); }},
      {"ihfft", [](const V& x, const Params& p) { return pair(fft::ihfft(x[0], axis(p))); }},
      {"irfft", [](const V& x, const Params& p) { return V{fft::irfft({x[0], x[1]}, axis(p))}; }},
      {"hfft", [](const V& x, const Params& p) { return V{fft::hfft({x[0], x[1]}, axis(p))}; }},
      {"rfftn", [](const V& x, const Params& p) { return pair(fft::rfftn(x[0], axes(p))); }},
      {"rfft2", [](const V& x, const Params& p) { return pair(fft::rfft2(x[0], *axes(p))); }},
      {"irfftn", [](const V& x, const Params& p) { return V{fft::irfftn({x[0], x[1]}, axes(p))}; }},
      {"irfft2", [](const V& x, const Params& p) { return V{fft::irfft2({x[0], x[1]}, *axes(p))}; }},
      {"fftfreq", [](const V&, const Params& p) { return V{fft::fftfreq(p.integer("n"), p.real("d"))}; }},
      {"rfftfreq", [](const V&, const Params& p) { return V{fft::rfftfreq(p.integer("n"), p.real("d"))}; }},
      {"fftshift", [](const V& x, const Params& p) {
         auto a = axes(p);
         return V{a ? fft::fftshift(x[0], *a) : fft::fftshift(x[0])};
       }},
      {"ifftshift", [](const V& x, const Params& p) {
         auto a = axes(p);
         return V{a ? fft::ifftshift(x[0], *a) : fft::ifftshift(x[0])};
       }},
      {"eigh", [](const V& x, const Params& p) {
         auto [w, v] = la::eigh(x[0], p.integer("lower", 1) != 0, p.integer("symmetrize", 1) != 0);
         return V{w, v};
       }},
      {"eigvalsh", [](const V& x, const Params&) { return V{la::eigvalsh(x[0])}; }},
      {"eighsq", [](const V& x, const Params&) {
         auto [w, v] = la::eigh(x[0]);
         return V{w, v * v};
       }},
      {"svd", [](const V& x, const Params&) {
         auto [u, s, vh] = la::svd(x[0]);
         return V{u, s, vh};
       }},
      {"svdvals", [](const V& x, const Params&) { return V{la::svdvals(x[0])}; }},
      {"svdsq", [](const V& x, const Params&) {
         auto [u, s, vh] = la::svd(x[0]);
         return V{u * u, s, vh * vh};
       }},
  };
  return t;
}

// Real-input ops take one array; the rest take a (real, imag) pair.
bool real_input(const std::string& op) {
  return op == "rfft" || op == "ihfft" || op == "rfftn" || op == "rfft2" || op == "eighsq" || op == "svdsq";
}

// Vectors are defined up to the sign of each column: flips the columns of `cols` (and the
// matching rows of `rows`, for svd's vh) whose dot product with the reference's is negative.
void align_signs(Array& cols, const FixtureArray& want, Array* rows) {
  Array ref = to_array(want);
  Array sign = np::where(np::sum(cols * ref, -2) < Array(0.0), Array(-1.0), Array(1.0)).astype(cols.dtype());
  cols = cols * np::expand_dims(sign, -2);
  if (rows) *rows = *rows * np::expand_dims(sign, -1);
}

void check_case(const FixtureCase& c) {
  SCOPED_TRACE(c.id + " (line " + std::to_string(c.line) + ")");
  std::vector<Array> in;
  for (const auto& i : c.inputs) in.push_back(to_array(i.array));
  if (c.op.rfind("grad_", 0) == 0) {
    std::string op = c.op.substr(5);
    size_t nin = real_input(op) ? 1 : 2;
    std::vector<Array> ws(in.begin() + long(nin), in.end());
    kiln::Fn loss = [&](const std::vector<Tree>& a) -> Tree {
      std::vector<Array> v;
      for (const Tree& t : a) v.push_back(t.array());
      std::vector<Array> out = ops().at(op)(v, c.params);
      // One weight per output the loss uses (eigvalsh's case weights only the values).
      Array s = np::sum(out[0] * ws[0]);
      for (size_t k = 1; k < ws.size() && k < out.size(); ++k) s = s + np::sum(out[k] * ws[k]);
      return s;
    };
    std::vector<int> argnums;
    for (size_t i = 0; i < nin; ++i) argnums.push_back(int(i));
    std::vector<Tree> targs(in.begin(), in.begin() + long(nin));
    Tree g = kiln::grad(loss, argnums)(targs);
    for (size_t i = 0; i < nin; ++i) expect_close(g[i].array(), c.expects[i], c.rtol, c.atol, "grad " + std::to_string(i));
    return;
  }
  std::vector<Array> out = ops().at(c.op)(in, c.params);
  ASSERT_EQ(out.size(), c.expects.size());
  if (c.op == "eigh") align_signs(out[1], c.expects[1], nullptr);
  if (c.op == "svd") align_signs(out[0], c.expects[0], &out[2]);
  for (size_t i = 0; i < out.size(); ++i) expect_close(out[i], c.expects[i], c.rtol, c.atol, "out " + std::to_string(i));
}

TEST(Spectral, MatchesJax) {
  auto cases = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/spectral.txt");
  ASSERT_GT(cases.size(), 120u);
  for (const auto& c : cases) check_case(c);
}

double max_abs_diff(const Array& a, const Array& b) {
  EXPECT_EQ(a.shape(), b.shape());
  return np::max(np::abs(a.astype(kiln::float64) - b.astype(kiln::float64))).item();
}

// A float32 round trip through a 1000-point transform (factors 4 2 5 5 5) comes back
// within a few ulps of the inputs' scale.
TEST(Spectral, InverseRoundTrip) {
  Array re = kiln::random::normal(kiln::random::key(1), {2, 1000});
  Array im = kiln::random::normal(kiln::random::key(2), {2, 1000});
  Cx back = fft::ifft(fft::fft({re, im}));
  EXPECT_LT(max_abs_diff(back.real, re), 2e-5);
  EXPECT_LT(max_abs_diff(back.imag, im), 2e-5);
  Array x = kiln::random::normal(kiln::random::key(3), {3, 4, 10});
  EXPECT_LT(max_abs_diff(fft::irfftn(fft::rfftn(x)), x), 2e-5);
  EXPECT_LT(max_abs_diff(fft::ifftshift(fft::fftshift(x)), x), 0.0 + 1e-30);
}

TEST(Spectral, Float64AndFloat16) {
  Array re = kiln::random::normal(kiln::random::key(4), {12}).astype(kiln::float64);
  Array im = np::zeros({12}, kiln::float64);
  Cx z = fft::fft({re, im});
  EXPECT_EQ(z.real.dtype(), kiln::float64);
  // Against the O(n^2) definition in float64.
  auto x = re.to_vector<double>();
  auto zr = z.real.to_vector<double>(), zi = z.imag.to_vector<double>();
  for (int k = 0; k < 12; k++) {
    double sr = 0, si = 0;
    for (int j = 0; j < 12; j++) {
      sr += x[size_t(j)] * std::cos(2 * std::numbers::pi * j * k / 12);
      si -= x[size_t(j)] * std::sin(2 * std::numbers::pi * j * k / 12);
    }
    EXPECT_NEAR(zr[size_t(k)], sr, 1e-12);
    EXPECT_NEAR(zi[size_t(k)], si, 1e-12);
  }
  Cx h = fft::fft({re.astype(kiln::float16), im.astype(kiln::float16)});
  EXPECT_EQ(h.real.dtype(), kiln::float16);
}

TEST(Spectral, VmapMatchesLoop) {
  Array x = kiln::random::normal(kiln::random::key(5), {3, 4, 6});
  kiln::ArrayFn f = [](const Array& a) {
    Cx z = fft::fft2({a, a * Array(0.5)});
    return z.real + fft::irfft(fft::rfft(a, 0), 0) * Array(2.0) - z.imag;
  };
  Array batched = kiln::vmap(f)(x);
  for (int64_t i = 0; i < 3; ++i) EXPECT_LT(max_abs_diff(batched[i], f(x[i])), 1e-5);
}

TEST(Spectral, JitMatchesEager) {
  Array x = kiln::random::normal(kiln::random::key(6), {4, 15});
  kiln::ArrayFn f = [](const Array& a) {
    Cx z = fft::fft({a, np::zeros_like(a)});
    return z.real * z.real + z.imag * z.imag;
  };
  EXPECT_LT(max_abs_diff(kiln::jit(f)(x), f(x)), 1e-4);
}

TEST(Spectral, ForwardModeMatchesReverse) {
  Array x = kiln::random::normal(kiln::random::key(7), {10});
  Array t = kiln::random::normal(kiln::random::key(8), {10});
  kiln::ArrayFn f = [](const Array& a) {
    Cx z = fft::rfft(a);
    return np::sum(z.real * z.real * z.imag);  // nonlinear, so the point matters
  };
  double fwd = kiln::jvp(f, x, t).second.item();
  double rev = np::sum(kiln::grad(f)(x) * t).item();
  EXPECT_NEAR(fwd, rev, 1e-4 * (1 + std::fabs(rev)));
}

void expect_error(const std::function<void()>& f, const std::string& op) {
  try {
    f();
    ADD_FAILURE() << "no error from " << op;
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
  }
}

TEST(Spectral, Errors) {
  Array a = np::zeros({4}), b = np::zeros({5});
  expect_error([&] { fft::fft({a, b}); }, "fft");
  expect_error([&] { fft::fft({a, a.astype(kiln::float64)}); }, "fft");
  expect_error([&] { fft::fft({a.astype(kiln::int32), a.astype(kiln::int32)}); }, "fft");
  expect_error([&] { fft::fft({a, a}, 1); }, "fft");
  expect_error([&] { fft::fft({np::zeros({0}), np::zeros({0})}); }, "fft");
  expect_error([&] { fft::rfft(a.astype(kiln::int32)); }, "rfft");
  expect_error([&] { fft::irfft({np::zeros({1}), np::zeros({1})}); }, "irfft");
  expect_error([&] { fft::fftn({a, a}, std::vector<int>{0, 0}); }, "fftn");
  expect_error([&] { fft::fftfreq(0); }, "fftfreq");
  expect_error([&] { fft::rfftfreq(4, 0.0); }, "rfftfreq");
  expect_error([&] { fft::fftshift(a, 2); }, "fftshift");
}

}  // namespace

namespace decomposition {

using kiln::Array;
namespace np = kiln::numpy;
namespace la = kiln::linalg;

Array sym(int64_t n, int seed) {
  Array a = kiln::random::normal(kiln::random::key(seed), {n, n});
  return (a + a.T()) / Array(2.0);
}
double max_abs(const Array& a) { return np::max(np::abs(a)).item(); }

// Larger than the fixtures, odd, and clustered: V diag(w) V^T = a and V^T V = I, within
// n eps ||a|| (a backward-stable decomposition's bound).
TEST(Decompositions, EighReconstructs) {
  for (int64_t n : {17, 24}) {
    Array a = sym(n, int(n));
    auto [w, v] = la::eigh(a);
    Array rec = np::matmul(v * np::expand_dims(w, -2), v.T());
    double bound = double(n) * 1.2e-7 * 4 * max_abs(w);
    EXPECT_LT(max_abs(rec - a), bound) << n;
    EXPECT_LT(max_abs(np::matmul(v.T(), v) - np::eye(n)), double(n) * 1.2e-7 * 4) << n;
    auto wv = w.to_vector<float>();
    for (size_t i = 1; i < wv.size(); ++i) EXPECT_LE(wv[i - 1], wv[i]);
  }
}

TEST(Decompositions, SvdReconstructs) {
  for (auto shape : {kiln::Shape{20, 9}, kiln::Shape{9, 20}, kiln::Shape{15, 15}}) {
    Array a = kiln::random::normal(kiln::random::key(int(shape[0] + shape[1])), shape);
    auto [u, s, vh] = la::svd(a);
    Array rec = np::matmul(u * np::expand_dims(s, -2), vh);
    double bound = 20 * 1.2e-7 * 4 * max_abs(s);
    EXPECT_LT(max_abs(rec - a), bound);
    int64_t k = s.shape(0);
    EXPECT_LT(max_abs(np::matmul(u.T(), u) - np::eye(k)), 20 * 1.2e-7 * 4);
    EXPECT_LT(max_abs(np::matmul(vh, vh.T()) - np::eye(k)), 20 * 1.2e-7 * 4);
    EXPECT_LT(max_abs(la::svdvals(a) - s), 1e-6 * max_abs(s));
  }
}

TEST(Decompositions, VmapJitAndForwardMode) {
  Array a = kiln::random::normal(kiln::random::key(40), {3, 5, 5});
  Array s = (a + np::swapaxes(a, -1, -2)) / Array(2.0);
  kiln::ArrayFn f = [](const Array& m) {
    auto [w, v] = la::eigh(m);
    auto [u, sv, vh] = la::svd(m);
    return np::sum(w * w) + np::sum(v * v * m) + np::sum(sv) + np::sum(u * u * vh * vh);
  };
  Array batched = kiln::vmap(f)(s);
  Array jitted = kiln::jit(kiln::vmap(f))(s);
  for (int64_t i = 0; i < 3; ++i) {
    double want = f(s[i]).item();
    EXPECT_NEAR(batched[i].item(), want, 1e-4 * (1 + std::fabs(want)));
    EXPECT_NEAR(jitted[i].item(), want, 1e-4 * (1 + std::fabs(want)));
  }
  Array t = kiln::random::normal(kiln::random::key(41), {5, 5});
  t = t + t.T();
  double fwd = kiln::jvp(f, s[0], t).second.item();
  double rev = np::sum(kiln::grad(f)(s[0]) * t).item();
  EXPECT_NEAR(fwd, rev, 1e-3 * (1 + std::fabs(rev)));
  // Against central differences in float64 (the rules are exact derivatives).
  Array s64 = s[1].astype(kiln::float64), t64 = t.astype(kiln::float64);
  double h = 1e-6;
  double fd = (f(s64 + t64 * Array(h)).item() - f(s64 - t64 * Array(h)).item()) / (2 * h);
  EXPECT_NEAR(kiln::jvp(f, s64, t64).second.item(), fd, 1e-6 * (1 + std::fabs(fd)));
}

TEST(Decompositions, Errors) {
  auto named = [](const std::function<void()>& f, const std::string& op) {
    try {
      f();
      ADD_FAILURE() << "no error from " << op;
    } catch (const kiln::Error& e) {
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    }
  };
  named([] { la::eigh(np::zeros({2, 3})); }, "eigh");
  named([] { la::eigh(np::zeros({3})); }, "eigh");
  named([] { la::eigvalsh(np::zeros({4, 2})); }, "eigvalsh");
  named([] { la::svd(np::zeros({3})); }, "svd");
  named([] { la::svd(np::zeros({3, 2}), true); }, "svd");
  named([] { la::svdvals(np::zeros({0, 2})); }, "svdvals");
  // Integers promote to float32, as jnp does.
  EXPECT_EQ(la::eigvalsh(np::eye(3, std::nullopt, 0, kiln::int32)).dtype(), kiln::float32);
}

}  // namespace decomposition

}  // namespace spectral_test
