// Checks kiln::numpy::fft against JAX values and gradients (tests/fixtures/spectral.txt from
// tools/gen_spectral_fixtures.py), plus vmap against a loop, jit against eager, forward
// against reverse mode, round trips, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

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
  };
  return t;
}

// Real-input ops take one array; the rest take a (real, imag) pair.
bool real_input(const std::string& op) { return op == "rfft" || op == "ihfft" || op == "rfftn" || op == "rfft2"; }

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
      Array s = np::sum(out[0] * ws[0]);
      if (out.size() == 2) s = s + np::sum(out[1] * ws[1]);
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
  for (size_t i = 0; i < out.size(); ++i) expect_close(out[i], c.expects[i], c.rtol, c.atol, "out " + std::to_string(i));
}

TEST(Spectral, MatchesJax) {
  auto cases = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/spectral.txt");
  ASSERT_GT(cases.size(), 70u);
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
      sr += x[size_t(j)] * std::cos(2 * M_PI * j * k / 12);
      si -= x[size_t(j)] * std::sin(2 * M_PI * j * k / 12);
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
