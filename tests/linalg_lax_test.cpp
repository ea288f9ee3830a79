// Sanity tests of numpy linalg (matmul, dot, tensordot, einsum) and lax (conv, pooling,
// reduce_window, conversions) against direct loops in this file, plus error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "library/lax.h"
#include "library/numpy.h"

namespace linalg_lax_test {

namespace np = kiln::numpy;
namespace lax = kiln::lax;
using kiln::Array;
using kiln::Shape;

namespace {

// Deterministic data in [-1, 1) (a small LCG keeps the test self-contained).
std::vector<float> rand_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1 << 24) * 2.f - 1.f;
  }
  return v;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

void expect_near(const Array& got, const Shape& shape, const std::vector<float>& want,
                 float tol = 1e-4f) {
  ASSERT_EQ(got.shape(), shape);
  std::vector<float> g = got.to_vector<float>();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); i++) EXPECT_NEAR(g[i], want[i], tol) << "at flat index " << i;
}

// Expects fn to throw kiln::Error whose message contains every one of `parts`.
template <typename F>
void expect_error(F fn, std::initializer_list<const char*> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected kiln::Error";
  } catch (const kiln::Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
        << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

// Batched matmul with NumPy broadcasting of (rank-4) batch dims, as a triple loop.
std::vector<float> matmul_ref(const std::vector<float>& a, Shape as, const std::vector<float>& b,
                              Shape bs, Shape& out) {
  while (as.size() < bs.size()) as.insert(as.begin(), 1);
  while (bs.size() < as.size()) bs.insert(bs.begin(), 1);
  const size_t r = as.size() - 2;
  Shape batch;
  for (size_t i = 0; i < r; i++) batch.push_back(std::max(as[i], bs[i]));
  const int64_t n = as[r], k = as[r + 1], m = bs[r + 1];
  out = batch;
  out.insert(out.end(), {n, m});
  std::vector<float> o(size_t(numel(out)), 0.f);
  const int64_t nb = numel(batch);
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t rem = bi, ao = 0, bo = 0, astr = n * k, bstr = k * m;
    for (size_t d = r; d-- > 0;) {
      int64_t idx = rem % batch[d];
      rem /= batch[d];
      ao += (as[d] == 1 ? 0 : idx) * astr;
      bo += (bs[d] == 1 ? 0 : idx) * bstr;
      astr *= as[d];
      bstr *= bs[d];
    }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) {
        double s = 0;
        for (int64_t l = 0; l < k; l++)
          s += double(a[size_t(ao + i * k + l)]) * b[size_t(bo + l * m + j)];
        o[size_t((bi * n + i) * m + j)] = float(s);
      }
  }
  return o;
}

// 2-d convolution, NCHW / OIHW, computed from the definition.
struct ConvCase {
  Shape xs, ws;
  std::vector<int64_t> strides{1, 1};
  std::vector<std::pair<int64_t, int64_t>> pads{{0, 0}, {0, 0}};
  std::vector<int64_t> ldil{1, 1}, rdil{1, 1};
  int64_t groups = 1, batch_groups = 1;
};

std::vector<float> conv_ref(const ConvCase& c, const std::vector<float>& x,
                            const std::vector<float>& w, Shape& out) {
  const int64_t N = c.xs[0], C = c.xs[1], H = c.xs[2], W = c.xs[3];
  const int64_t O = c.ws[0], I = c.ws[1], KH = c.ws[2], KW = c.ws[3];
  const int64_t ext[2] = {(H - 1) * c.ldil[0] + 1 + c.pads[0].first + c.pads[0].second,
                          (W - 1) * c.ldil[1] + 1 + c.pads[1].first + c.pads[1].second};
  const int64_t span[2] = {(KH - 1) * c.rdil[0] + 1, (KW - 1) * c.rdil[1] + 1};
  const int64_t OH = (ext[0] - span[0]) / c.strides[0] + 1;
  const int64_t OW = (ext[1] - span[1]) / c.strides[1] + 1;
  const int64_t NB = N / c.batch_groups;
  out = {NB, O, OH, OW};
  std::vector<float> o(size_t(numel(out)), 0.f);
  // The input at a coordinate of the dilated, padded grid (zero in holes and padding).
  auto at = [&](int64_t n, int64_t ch, int64_t py, int64_t px) -> float {
    py -= c.pads[0].first;
    px -= c.pads[1].first;
    if (py < 0 || px < 0 || py % c.ldil[0] || px % c.ldil[1]) return 0.f;
    py /= c.ldil[0];
    px /= c.ldil[1];
    if (py >= H || px >= W) return 0.f;
    return x[size_t(((n * C + ch) * H + py) * W + px)];
  };
  const int64_t og = O / c.groups, ob = O / c.batch_groups;
  for (int64_t n = 0; n < NB; n++)
    for (int64_t oc = 0; oc < O; oc++)
      for (int64_t y = 0; y < OH; y++)
        for (int64_t xx = 0; xx < OW; xx++) {
          const int64_t g = oc / og, bg = oc / ob;
          double s = 0;
          for (int64_t ic = 0; ic < I; ic++)
            for (int64_t ky = 0; ky < KH; ky++)
              for (int64_t kx = 0; kx < KW; kx++)
                s += double(at(bg * NB + n, g * I + ic, y * c.strides[0] + ky * c.rdil[0],
                               xx * c.strides[1] + kx * c.rdil[1])) *
                     w[size_t(((oc * I + ic) * KH + ky) * KW + kx)];
          o[size_t(((n * O + oc) * OH + y) * OW + xx)] = float(s);
        }
  return o;
}

Array run_conv(const ConvCase& c, const Array& x, const Array& w) {
  return lax::conv_general_dilated(x, w, c.strides, c.pads, c.ldil, c.rdil, std::nullopt,
                                   c.groups, c.batch_groups);
}

}  // namespace

// ---------------------------------------------------------------------------- linalg

TEST(Linalg, MatmulMatchesTripleLoopWithBroadcastBatch) {
  const Shape as{2, 1, 3, 4}, bs{5, 4, 2};
  auto av = rand_floats(size_t(numel(as)), 1), bv = rand_floats(size_t(numel(bs)), 2);
  Shape out;
  auto want = matmul_ref(av, as, bv, bs, out);
  expect_near(np::matmul(np::array(av, as), np::array(bv, bs)), out, want);
}

TEST(Linalg, MatmulOneDimensionalOperands) {
  auto av = rand_floats(3, 3), mv = rand_floats(12, 4);
  Array a = np::array(av, {3}), m = np::array(mv, {3, 4}), mt = np::array(mv, {4, 3});
  Shape out;
  expect_near(np::matmul(a, m), {4}, matmul_ref(av, {1, 3}, mv, {3, 4}, out));
  expect_near(np::matmul(mt, a), {4}, matmul_ref(mv, {4, 3}, av, {3, 1}, out));
  Array s = np::matmul(a, a);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_NEAR(s.item(), av[0] * av[0] + av[1] * av[1] + av[2] * av[2], 1e-5);
}

TEST(Linalg, MatmulIntAndBoolDtypes) {
  Array a = np::array(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  Array b = np::array(std::vector<int32_t>{5, 6, 7, 8}, {2, 2});
  Array c = np::matmul(a, b);
  EXPECT_EQ(c.dtype(), kiln::int32);
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{19, 22, 43, 50}));
  // jnp gives bool: an OR of ANDs.
  Array p = np::array(std::vector<bool>{true, false, false, false}, {2, 2});
  Array q = np::array(std::vector<bool>{false, true, true, true}, {2, 2});
  Array r = np::matmul(p, q);
  EXPECT_EQ(r.dtype(), kiln::bool_);
  EXPECT_EQ(r.to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
}

TEST(Linalg, DotNdContractsLastWithSecondToLast) {
  const Shape as{2, 3, 4}, bs{5, 4, 6};
  auto av = rand_floats(24, 5), bv = rand_floats(120, 6);
  std::vector<float> want;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 5; k++)
        for (int m = 0; m < 6; m++) {
          double s = 0;
          for (int l = 0; l < 4; l++)
            s += double(av[size_t((i * 3 + j) * 4 + l)]) * bv[size_t((k * 4 + l) * 6 + m)];
          want.push_back(float(s));
        }
  expect_near(np::dot(np::array(av, as), np::array(bv, bs)), {2, 3, 5, 6}, want);
}

TEST(Linalg, TensordotAxisPairsMatchLoop) {
  auto av = rand_floats(24, 7), bv = rand_floats(24, 8);
  Array a = np::array(av, {2, 3, 4}), b = np::array(bv, {4, 3, 2});
  // Contract a's axis 1 with b's axis 1, and a's -1 with b's 0: result [2, 2].
  std::vector<float> want;
  for (int i = 0; i < 2; i++)
    for (int m = 0; m < 2; m++) {
      double s = 0;
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++)
          s += double(av[size_t((i * 3 + j) * 4 + k)]) * bv[size_t((k * 3 + j) * 2 + m)];
      want.push_back(float(s));
    }
  expect_near(np::tensordot(a, b, {{1, -1}, {1, 0}}), {2, 2}, want);
  Shape out;
  expect_near(np::tensordot(a, np::array(bv, {4, 6}), 1), {2, 3, 6},
              matmul_ref(av, {6, 4}, bv, {4, 6}, out));
}

TEST(Linalg, EinsumMatchesLoops) {
  auto mv = rand_floats(9, 9), bv = rand_floats(12, 10), cv = rand_floats(8, 11);
  Array m = np::array(mv, {3, 3}), b = np::array(bv, {3, 4}), c = np::array(cv, {4, 2});
  Shape out;
  expect_near(np::einsum(" i j , j k -> i k ", {m, b}), {3, 4},
              matmul_ref(mv, {3, 3}, bv, {3, 4}, out));
  expect_near(np::einsum("ij,jk", {m, b}), {3, 4}, matmul_ref(mv, {3, 3}, bv, {3, 4}, out));
  expect_near(np::einsum("ii->i", {m}), {3}, {mv[0], mv[4], mv[8]});
  expect_near(np::einsum("ii->", {m}), {}, {mv[0] + mv[4] + mv[8]});
  expect_near(np::einsum("ii", {m}), {}, {mv[0] + mv[4] + mv[8]});
  // Implicit output sorts the letters: "ba" is a transpose.
  expect_near(np::einsum("ba", {b}), {4, 3}, np::transpose(b).to_vector<float>());
  // Three operands, contracted left to right.
  auto mb = matmul_ref(mv, {3, 3}, bv, {3, 4}, out);
  expect_near(np::einsum("ij,jk,kl->il", {m, b, c}), {3, 2},
              matmul_ref(mb, {3, 4}, cv, {4, 2}, out));
  // Ellipsis batch dims broadcast as matmul's do.
  auto xv = rand_floats(24, 12);
  Array x = np::array(xv, {2, 3, 4});
  expect_near(np::einsum("...ij,jk->...ik", {x, c}), {2, 3, 2},
              matmul_ref(xv, {2, 3, 4}, cv, {4, 2}, out));
  // A letter summed out of one operand only.
  expect_near(np::einsum("ij->j", {b}), {4}, np::sum(b, 0).to_vector<float>());
}

TEST(Linalg, ErrorsNameTheOpAndLeaveInputsUsable) {
  auto av = rand_floats(6, 13);
  Array a = np::array(av, {2, 3}), b = np::array(rand_floats(20, 14), {4, 5});
  expect_error([&] { np::matmul(a, b); }, {"matmul", "(2, 3)", "(4, 5)", "inner"});
  expect_error([&] { np::matmul(np::array(av, {2, 3, 1}), np::array(av, {3, 1, 2})); },
               {"matmul", "batch"});
  expect_error([&] { np::matmul(a, Array(2.f)); }, {"matmul", "rank >= 1"});
  expect_error([&] { np::dot(a, b); }, {"dot", "(2, 3)"});
  expect_error([&] { np::tensordot(a, b, 3); }, {"tensordot", "axes=3"});
  expect_error([&] { np::einsum("ij,jk->ik", {a}); }, {"einsum", "2 operands", "1 arrays"});
  expect_error([&] { np::einsum("ij->iz", {a}); }, {"einsum", "'z'"});
  expect_error([&] { np::einsum("ijk", {a}); }, {"einsum", "rank 2", "3 axes"});
  expect_error([&] { np::einsum("i$j", {a}); }, {"einsum", "invalid character '$'"});
  expect_error([&] { np::einsum("ij->ii", {a}); }, {"einsum", "twice"});
  expect_error([&] { np::einsum("ii", {a}); }, {"einsum", "diagonal"});
  expect_error([&] { np::einsum("ij,ij", {a, b}); }, {"einsum", "size"});
  expect_error([&] { np::einsum("ij", {}); }, {"einsum", "no operands"});
  EXPECT_EQ(a.to_vector<float>(), av);
}

// ---------------------------------------------------------------------------- lax

TEST(Lax, ConvMatchesDirectLoop) {
  ConvCase c;
  c.xs = {2, 4, 7, 6};
  c.ws = {6, 2, 3, 2};
  c.strides = {2, 1};
  c.pads = {{1, 2}, {0, 1}};
  c.ldil = {2, 1};
  c.rdil = {1, 2};
  c.groups = 2;
  auto xv = rand_floats(size_t(numel(c.xs)), 20), wv = rand_floats(size_t(numel(c.ws)), 21);
  Shape out;
  auto want = conv_ref(c, xv, wv, out);
  expect_near(run_conv(c, np::array(xv, c.xs), np::array(wv, c.ws)), out, want);
}

TEST(Lax, ConvBatchGroupsMatchDirectLoop) {
  ConvCase c;
  c.xs = {4, 3, 5, 5};
  c.ws = {4, 3, 2, 2};
  c.batch_groups = 2;
  c.pads = {{-1, 1}, {1, 0}};  // negative padding crops
  auto xv = rand_floats(size_t(numel(c.xs)), 22), wv = rand_floats(size_t(numel(c.ws)), 23);
  Shape out;
  auto want = conv_ref(c, xv, wv, out);
  expect_near(run_conv(c, np::array(xv, c.xs), np::array(wv, c.ws)), out, want);
}

TEST(Lax, ConvSamePaddingAndLayouts) {
  ConvCase c;
  c.xs = {1, 2, 7, 5};
  c.ws = {3, 2, 3, 3};
  c.strides = {2, 2};
  // JAX's SAME: out = ceil(in / stride); total pad (out-1)*s + k - in, the odd one at the end.
  c.pads = {{1, 1}, {1, 1}};
  auto xv = rand_floats(size_t(numel(c.xs)), 24), wv = rand_floats(size_t(numel(c.ws)), 25);
  Shape out;
  auto want = conv_ref(c, xv, wv, out);
  Array x = np::array(xv, c.xs), w = np::array(wv, c.ws);
  expect_near(lax::conv(x, w, {2, 2}, std::string("SAME")), {1, 3, 4, 3}, want);
  // The same convolution in TensorFlow's layouts.
  Array xh = np::transpose(x, std::vector<int>{0, 2, 3, 1});
  Array wh = np::transpose(w, std::vector<int>{2, 3, 1, 0});
  Array y = lax::conv_general_dilated(xh, wh, {2, 2}, std::string("SAME"), {}, {},
                                      lax::ConvDimensionNumbers{"NHWC", "HWIO", "NHWC"});
  Array want_nhwc = np::transpose(np::array(want, out), std::vector<int>{0, 2, 3, 1});
  expect_near(y, {1, 4, 3, 3}, want_nhwc.to_vector<float>());
}

TEST(Lax, MaxPoolAndReduceWindowPadWithIdentity) {
  // All negative, so zero padding would win a max if padding were not the identity.
  auto xv = rand_floats(2 * 5 * 5, 30);
  for (auto& v : xv) v = -std::fabs(v) - 0.5f;
  Array x = np::array(xv, {1, 2, 5, 5});
  std::vector<float> want;
  const int pad = 1, k = 3, s = 2, o = (5 + 2 * pad - k) / s + 1;
  for (int ch = 0; ch < 2; ch++)
    for (int y = 0; y < o; y++)
      for (int xx = 0; xx < o; xx++) {
        float m = -std::numeric_limits<float>::infinity();
        for (int ky = 0; ky < k; ky++)
          for (int kx = 0; kx < k; kx++) {
            int py = y * s + ky - pad, px = xx * s + kx - pad;
            if (py >= 0 && py < 5 && px >= 0 && px < 5)
              m = std::max(m, xv[size_t((ch * 5 + py) * 5 + px)]);
          }
        want.push_back(m);
      }
  lax::Padding p = std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 1}};
  expect_near(lax::max_pool(x, {3, 3}, {2, 2}, p), {1, 2, o, o}, want);
  lax::Padding p4 = std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 0}, {1, 1}, {1, 1}};
  expect_near(lax::reduce_window(x, lax::WindowOp::Max, {1, 1, 3, 3}, {1, 1, 2, 2}, p4),
              {1, 2, o, o}, want);
}

TEST(Lax, AvgPoolCountsPadding) {
  auto xv = rand_floats(6 * 5, 31);
  Array x = np::array(xv, {1, 1, 6, 5});
  // SAME with window 3, stride 2: out (3, 3), pads (0, 1) on H and (1, 1) on W.
  for (bool include : {true, false}) {
    std::vector<float> want;
    for (int y = 0; y < 3; y++)
      for (int xx = 0; xx < 3; xx++) {
        double sum = 0;
        int n = 0;
        for (int ky = 0; ky < 3; ky++)
          for (int kx = 0; kx < 3; kx++) {
            int py = y * 2 + ky, px = xx * 2 + kx - 1;
            if (py < 6 && px >= 0 && px < 5) sum += xv[size_t(py * 5 + px)], n++;
          }
        want.push_back(float(sum / (include ? 9 : n)));
      }
    expect_near(lax::avg_pool(x, {3, 3}, {2, 2}, std::string("SAME"), include), {1, 1, 3, 3}, want);
  }
}

TEST(Lax, ReduceWindowDilations) {
  // Sum over windows of 2 with window dilation 2 and base dilation 2 on a 1-d array.
  Array x = np::array(std::vector<float>{1, 2, 3, 4}, {4});
  // Base-dilated: 1 0 2 0 3 0 4; windows {i, i+2}: 1+2, 0+0, 2+3, 0+0, 3+4.
  expect_near(lax::reduce_window(x, lax::WindowOp::Sum, {2}, {1}, std::string("VALID"), {2}, {2}),
              {5}, {3, 0, 5, 0, 7});
  // With a product, the holes are ones.
  expect_near(lax::reduce_window(x, lax::WindowOp::Prod, {2}, {1}, std::string("VALID"), {2}, {2}),
              {5}, {2, 1, 6, 1, 12});
}

TEST(Lax, ConvertAndBitcast) {
  Array x = np::array(std::vector<float>{-1.7f, 2.9f, 0.f}, {3});
  Array i = lax::convert_element_type(x, kiln::int32);
  EXPECT_EQ(i.dtype(), kiln::int32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{-1, 2, 0}));
  EXPECT_EQ(lax::convert_element_type(x, kiln::bool_).to_vector<bool>(),
            (std::vector<bool>{true, true, false}));
  Array u = lax::bitcast_convert_type(np::array(std::vector<float>{1.f}, {1}), kiln::uint32);
  EXPECT_EQ(u.to_vector<uint32_t>(), (std::vector<uint32_t>{0x3f800000u}));
  EXPECT_FALSE(lax::convert_element_type(Array(2.0), kiln::float32).weak_type());
}

TEST(Lax, ErrorsNameTheOpAndLeaveInputsUsable) {
  auto xv = rand_floats(2 * 4 * 5 * 5, 40);
  Array x = np::array(xv, {2, 4, 5, 5});
  Array w = np::array(rand_floats(3 * 3 * 3 * 3, 41), {3, 3, 3, 3});
  expect_error([&] { lax::conv(x, w, {1, 1}, std::string("VALID")); },
               {"conv_general_dilated", "C == I * feature_group_count", "(2, 4, 5, 5)"});
  Array w4 = np::array(rand_floats(3 * 4 * 9, 42), {3, 4, 3, 3});
  expect_error([&] { lax::conv(x, w4, {1, 1}, std::string("SAMEISH")); },
               {"conv_general_dilated", "'SAMEISH'", "VALID"});
  Array w2 = np::array(rand_floats(12, 43), {3, 4});
  expect_error([&] { lax::conv(x, w2, {1, 1}, std::string("VALID")); },
               {"conv_general_dilated", "same rank"});
  expect_error([&] { lax::conv(x, w4, {1}, std::string("VALID")); }, {"window_strides"});
  expect_error(
      [&] {
        lax::conv_general_dilated(x, w4, {1, 1}, std::string("VALID"), {}, {},
                                  lax::ConvDimensionNumbers{"NCHW", "OIHW", "NCHX"});
      },
      {"conv_general_dilated", "spatial"});
  expect_error([&] { lax::conv_general_dilated(x, w4, {1, 1}, std::string("SAME"), {2, 2}); },
               {"conv_general_dilated", "lhs_dilation"});
  expect_error([&] { lax::reduce_window(x, lax::WindowOp::Max, {2, 2}, {1, 1}); },
               {"reduce_window", "window_dimensions", "(2, 4, 5, 5)"});
  expect_error([&] { lax::max_pool(x, {2, 2, 2}, {1, 1, 1}); }, {"max_pool", "rank 5"});
  expect_error([&] { lax::bitcast_convert_type(x, kiln::float16); }, {"bitcast_convert_type"});
  EXPECT_EQ(x.to_vector<float>(), xv);
  // Still usable in a valid convolution afterwards.
  EXPECT_EQ(lax::conv(x, w4, {1, 1}, std::string("VALID")).shape(), (Shape{2, 3, 3, 3}));
}

}  // namespace linalg_lax_test
