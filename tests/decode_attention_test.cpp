// DecodeAttention: the routine primitive lax::decode_attention against its unfused formula
// (ordinary primitives: scores, mask, softmax, weighted sum) on random shapes with grouped
// queries, every length 0..n_ctx and sliding windows; jit (operands passed as views at an
// offset: a layer of a whole cache) equals eager; grad and vmap through the formula; errors.
// The device kernels (native AVX2, wasm SIMD128) equal the reference bit for bit. (A device
// without the routine for T rows runs the formula: prefill_attention_test.)
#include "library/decode_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attention_operands.h"
#include "backend/backend.h"
#include "backend/decode_attention.h"
#ifndef __EMSCRIPTEN__
#include "backend/native/decode_attention_x86.h"
#else
#include "backend/wasm/decode_attention_wasm.h"
#endif
#include "frontend/array_impl.h"
#include "ir/error.h"
#include "kiln/jit.h"
#include "kiln/transforms.h"
#include "library/numpy.h"

namespace decode_attention_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;

using attention_operands::random;
using attention_operands::start_of;

struct Operands {
  int64_t H, Hkv, D, C;
  Array q, keys, values, k, v;
};

Operands make(int64_t H, int64_t Hkv, int64_t D, int64_t C, uint32_t seed) {
  // Scores of a few units: the softmax is neither flat nor one-hot.
  return {H, Hkv, D, C, random({H, D}, seed, 2.0f), random({C, Hkv, D}, seed + 1, 2.0f),
          random({C, Hkv, D}, seed + 2), random({Hkv, D}, seed + 3, 2.0f), random({Hkv, D}, seed + 4)};
}

bool has_routine() { return kiln::get_backend(kiln::default_device()).has_decode_attention(); }

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
}

}  // namespace

// Every length from 0 (only the new row) to n_ctx (the whole cache), with and without a window,
// on shapes with 1, 2 and 3 query heads per kv head.
TEST(DecodeAttention, EqualsTheUnfusedFormula) {
  // Without the routine lax::decode_attention is the formula itself: the loop then checks
  // that the call runs there.
  struct Shape {
    int64_t H, Hkv, D, C;
  };
  uint32_t seed = 7;
  for (const Shape s : {Shape{4, 4, 8, 6}, Shape{6, 2, 16, 9}, Shape{3, 1, 5, 5}, Shape{2, 1, 64, 17}}) {
    const Operands o = make(s.H, s.Hkv, s.D, s.C, seed += 10);
    const float scale = 1.0f / std::sqrt(float(s.D));
    for (int64_t window : {int64_t(0), int64_t(1), int64_t(3)}) {
      for (int64_t n = 0; n <= s.C; ++n) {
        const std::string what = "H=" + std::to_string(s.H) + " Hkv=" + std::to_string(s.Hkv) + " D=" +
                                 std::to_string(s.D) + " C=" + std::to_string(s.C) + " window=" +
                                 std::to_string(window) + " start=" + std::to_string(n);
        const auto got =
            kiln::lax::decode_attention(o.q, o.keys, o.values, o.k, o.v, start_of(n), scale, window).to_vector<float>();
        const auto want = kiln::lax::decode_attention_unfused(o.q, o.keys, o.values, o.k, o.v, start_of(n), scale, window)
                              .to_vector<float>();
        expect_close(got, want, 2e-6f, what);
      }
    }
  }
}

// A device kernel gives the reference's floats bit for bit: every start from 0 to n_ctx
// (partial tiles of 8 (AVX2) or 4 (SIMD128) rows included), windows, 1 to 4 query heads per kv
// head (and 6: wasm's passes of up to 4 heads), head sizes of SmolLM2 (64) and Gemma 3 (256),
// a NaN score (the maximum keeps skipping it), and a head size that is not a multiple of 8
// (the reference itself runs).
void expect_kernel_equals_reference(kiln::DecodeAttentionFn kernel) {
  struct Case {
    int64_t H, Hkv, D, C;
  };
  uint32_t seed = 11;
  for (const Case c : {Case{9, 3, 64, 37}, Case{4, 1, 256, 19}, Case{2, 2, 8, 3}, Case{6, 2, 5, 9}, Case{6, 1, 16, 11}}) {
    auto fill = [&](int64_t n, float scale) { return attention_operands::fill(seed, n, scale); };
    const auto q = fill(c.H * c.D, 2), keys = fill(c.C * c.Hkv * c.D, 2), values = fill(c.C * c.Hkv * c.D, 1);
    auto k = fill(c.Hkv * c.D, 2);
    const auto v = fill(c.Hkv * c.D, 1);
    for (bool nan_key : {false, true}) {
      std::vector<float> keys_nan = keys;
      if (nan_key) keys_nan[size_t(c.Hkv * c.D)] = NAN;  // row 1's first value: a NaN score
      for (int64_t window : {int64_t(0), int64_t(4)})
        for (int64_t start = 0; start <= c.C; ++start) {
          kiln::DecodeAttentionShape s;
          s.heads = c.H, s.kv_heads = c.Hkv, s.head_dim = c.D, s.n_ctx = c.C, s.window = window;
          s.scale = 1.0f / std::sqrt(float(c.D));
          std::vector<float> want(size_t(c.H * c.D)), got(want.size());
          kiln::decode_attention_reference(s, q.data(), keys_nan.data(), values.data(), k.data(), v.data(),
                                           int32_t(start), want.data());
          kernel(s, q.data(), keys_nan.data(), values.data(), k.data(), v.data(), int32_t(start), got.data());
          ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
              << "H=" << c.H << " Hkv=" << c.Hkv << " D=" << c.D << " start=" << start << " window=" << window
              << " nan=" << nan_key;
        }
    }
  }
}

#ifndef __EMSCRIPTEN__
// The native device's AVX2 kernel.
TEST(DecodeAttention, NativeKernelEqualsTheReferenceBitForBit) {
  if (!kiln::native::best_decode_attention()) GTEST_SKIP() << "no AVX2 on this CPU";
  expect_kernel_equals_reference(&kiln::native::decode_attention_avx2);
}
#else
// The wasm device's SIMD128 kernel, whole and as the pool runs it: one kv head per call.
TEST(DecodeAttention, WasmKernelEqualsTheReferenceBitForBit) {
  expect_kernel_equals_reference(&kiln::wasm::decode_attention_simd128);
  expect_kernel_equals_reference([](const kiln::DecodeAttentionShape& s, const float* q, const float* keys,
                                    const float* values, const float* k, const float* v, int32_t start, float* out) {
    if (s.head_dim % 8 != 0) return kiln::wasm::decode_attention_simd128(s, q, keys, values, k, v, start, out);
    for (int64_t kh = s.kv_heads - 1; kh >= 0; --kh)
      kiln::wasm::decode_attention_simd128_heads(s, q, keys, values, k, v, start, out, kh, kh + 1);
  });
}
#endif

// The formula is what it says: at start 0 every head's output is its kv head's new value, and
// with one cache row of a key equal to the new key the output is the mean of the two values.
TEST(DecodeAttention, FormulaBaseCases) {
  const Operands o = make(4, 2, 8, 3, 99);
  const auto only_new =
      kiln::lax::decode_attention_unfused(o.q, o.keys, o.values, o.k, o.v, start_of(0), 0.5f).to_vector<float>();
  const auto v = o.v.to_vector<float>();
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t d = 0; d < 8; ++d) EXPECT_NEAR(only_new[size_t(h * 8 + d)], v[size_t((h / 2) * 8 + d)], 1e-6f);
  const Array keys = np::broadcast_to(np::reshape(o.k, {1, 2, 8}), {3, 2, 8});
  const auto mean =
      kiln::lax::decode_attention_unfused(o.q, keys, o.values, o.k, o.v, start_of(1), 0.5f).to_vector<float>();
  const auto cv = o.values.to_vector<float>();
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t d = 0; d < 8; ++d)
      EXPECT_NEAR(mean[size_t(h * 8 + d)], 0.5f * (cv[size_t((h / 2) * 8 + d)] + v[size_t((h / 2) * 8 + d)]), 1e-6f);
}

// Under jit the cache operands are a layer's part of a whole cache argument and q, k, v parts
// of one kernel's output: the routine reads them at their offsets (no copy), and the start is
// an argument, so one program serves every position. Eager runs on realized copies: same bits.
TEST(DecodeAttention, JitEqualsEager) {
  if (!has_routine()) GTEST_SKIP() << kiln::default_device() << " has no decode_attention routine";
  const int64_t L = 3, C = 7, Hkv = 2, D = 8, H = 4;
  const Array cache = random({L, 2, C, Hkv, D}, 5);
  const Array qkv = random({(H + 2 * Hkv) * D}, 6);
  auto f = [&](const std::vector<kiln::Tree>& a) {
    const Array& c = a[0].array();
    const Array x = np::sin(a[1].array()) * 2.0f;  // one kernel, read in three parts
    const Array q = np::reshape(np::index(x, {kiln::Slice{0, H * D, {}}}), {H, D});
    const Array k = np::reshape(np::index(x, {kiln::Slice{H * D, (H + Hkv) * D, {}}}), {Hkv, D});
    const Array v = np::reshape(np::index(x, {kiln::Slice{(H + Hkv) * D, {}, {}}}), {Hkv, D});
    const Array layer = np::index(c, {int64_t(1)});
    const Array out = kiln::lax::decode_attention(q, np::index(layer, {int64_t(0)}), np::index(layer, {int64_t(1)}), k,
                                                  v, a[2].array(), 0.35f, 4);
    return kiln::Tree(out + 1.0f);
  };
  auto jf = kiln::jit(f);
  for (int64_t n : {0, 3, 7}) {
    const std::vector<kiln::Tree> args{kiln::Tree(cache), kiln::Tree(qkv), kiln::Tree(start_of(n))};
    const auto eager = f(args).array().to_vector<float>();
    kiln::frontend::KernelRecorder rec;
    const auto jitted = jf(args).array().to_vector<float>();
    // sin and + 1 only: q, k, v and the layer's keys/values reach the routine at their
    // offsets, with no copy kernel (a copy each was 5 more).
    EXPECT_EQ(rec.kernels().size(), 2u) << "start " << n;
    ASSERT_EQ(jitted.size(), eager.size());
    for (size_t i = 0; i < eager.size(); ++i) ASSERT_EQ(jitted[i], eager[i]) << "start " << n << " [" << i << "]";
  }
}

// The jvp goes through the formula: grad in q, keys, values, k and v equals the formula's grad.
TEST(DecodeAttention, GradEqualsTheFormulasGrad) {
  const Operands o = make(4, 2, 8, 5, 41);
  const Array c = np::cos(np::arange(4 * 8, kiln::DType::Float32)).reshape({4, 8});
  for (bool fused : {true, false}) {
    if (fused && !has_routine()) continue;
    auto call = [&](const std::vector<Array>& x) {
      return fused ? kiln::lax::decode_attention(x[0], x[1], x[2], x[3], x[4], start_of(3), 0.4f, 2)
                   : kiln::lax::decode_attention_unfused(x[0], x[1], x[2], x[3], x[4], start_of(3), 0.4f, 2);
    };
    for (int arg = 0; arg < 5; ++arg) {
      std::vector<Array> x{o.q, o.keys, o.values, o.k, o.v};
      auto loss = [&](const Array& a) {
        std::vector<Array> y = x;
        y[size_t(arg)] = a;
        return np::sum(call(y) * c);
      };
      auto formula = [&](const Array& a) {
        std::vector<Array> y = x;
        y[size_t(arg)] = a;
        return np::sum(kiln::lax::decode_attention_unfused(y[0], y[1], y[2], y[3], y[4], start_of(3), 0.4f, 2) * c);
      };
      const auto g = kiln::grad(kiln::ArrayFn(loss))(x[size_t(arg)]).to_vector<float>();
      const auto want = kiln::grad(kiln::ArrayFn(formula))(x[size_t(arg)]).to_vector<float>();
      expect_close(g, want, 1e-6f, "operand " + std::to_string(arg));
      // Not zero everywhere (the test can fail): cache rows 0 and 3.. are masked out, rows 1-2 not.
      double norm = 0;
      for (float v : g) norm += std::fabs(v);
      EXPECT_GT(norm, 1e-3) << "operand " << arg;
    }
  }
}

// vmap over the queries and the start (a batch of decode steps): each equals its own call.
TEST(DecodeAttention, VmapEqualsALoop) {
  const Operands o = make(2, 1, 8, 6, 17);
  const Array qs = random({3, 2, 8}, 3);
  const Array starts = np::array(std::vector<int32_t>{0, 4, 6}, {3});
  auto f = [&](const std::vector<kiln::Tree>& a) {
    return kiln::Tree(kiln::lax::decode_attention_unfused(a[0].array(), o.keys, o.values, o.k, o.v, a[1].array(), 0.3f));
  };
  const auto batched = kiln::vmap(f)({kiln::Tree(qs), kiln::Tree(starts)}).array().to_vector<float>();
  if (has_routine()) {
    auto g = [&](const std::vector<kiln::Tree>& a) {
      return kiln::Tree(kiln::lax::decode_attention(a[0].array(), o.keys, o.values, o.k, o.v, a[1].array(), 0.3f));
    };
    expect_close(kiln::vmap(g)({kiln::Tree(qs), kiln::Tree(starts)}).array().to_vector<float>(), batched, 2e-6f, "vmap fused");
  }
  for (int64_t j = 0; j < 3; ++j) {
    const Array q = np::index(qs, {j});
    const auto one = kiln::lax::decode_attention_unfused(q, o.keys, o.values, o.k, o.v, np::index(starts, {j}), 0.3f)
                         .to_vector<float>();
    for (size_t i = 0; i < one.size(); ++i) EXPECT_NEAR(batched[size_t(j) * one.size() + i], one[i], 1e-6f) << j;
  }
}

TEST(DecodeAttention, ShapeErrorsNameTheOperand) {
  const Operands o = make(4, 2, 8, 3, 1);
  auto call = [&](const Array& q, const Array& keys, const Array& k, const Array& start, int64_t window = 0) {
    kiln::lax::decode_attention(q, keys, o.values, k, o.v, start, 0.5f, window);
  };
  EXPECT_NE(message([&] { call(random({3, 8}, 1), o.keys, o.k, start_of(1)); }).find("a multiple of the cache's 2 kv heads"),
            std::string::npos);
  EXPECT_NE(message([&] { call(random({1, 4, 8, 1}, 1), o.keys, o.k, start_of(1)); })
                .find("q is float32[1,4,8,1], expected float32[heads, head_dim] or float32[rows, heads, head_dim]"),
            std::string::npos);
  // Several rows: k and v have the rows axis too.
  EXPECT_NE(message([&] { call(random({3, 4, 8}, 1), o.keys, o.k, start_of(1)); })
                .find("k is float32[2,8], expected float32[3,2,8]"),
            std::string::npos);
  EXPECT_NE(message([&] { call(o.q, random({3, 2, 4}, 1), o.k, start_of(1)); }).find("expected head_dim 8"),
            std::string::npos);
  EXPECT_NE(message([&] { call(o.q, o.keys, random({1, 8}, 1), start_of(1)); })
                .find("k is float32[1,8], expected float32[2,8]"),
            std::string::npos);
  EXPECT_NE(message([&] { call(o.q, o.keys, o.k, np::ones({1})); }).find("start is float32[1], expected int32[]"),
            std::string::npos);
  EXPECT_NE(message([&] { call(o.q, o.keys, o.k, start_of(1), -1); }).find("expected >= 0"), std::string::npos);
}

}  // namespace decode_attention_test
