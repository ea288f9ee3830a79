// decode_attention with T > 1 query rows (a prefill chunk, causal): the reference equals T
// decode steps bit for bit; the routine (cpu: the reference, native: its AVX2 rows kernel)
// equals the unfused formula on grouped-query shapes, starts 0..n_ctx and sliding windows
// (Gemma 3's); native's kernel equals the reference bit for bit (threads, batches of query
// vectors, NaN scores); grad, vmap and jit through the routine equal the formula's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "attention_operands.h"
#include "backend/backend.h"
#include "backend/decode_attention.h"
#ifndef __EMSCRIPTEN__
#include "backend/native/decode_attention_x86.h"
#endif
#include "ir/error.h"
#include "kiln/jit.h"
#include "kiln/transforms.h"
#include "library/decode_attention.h"
#include "library/numpy.h"

namespace prefill_attention_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;

using attention_operands::fill;
using attention_operands::random;
using attention_operands::start_of;

bool has_routine() {
  const kiln::Backend& be = kiln::get_backend(kiln::default_device());
  return be.has_decode_attention() && be.has_prefill_attention();
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
}

// Host operands of one case: q [T, H, D], keys/values [C, Hkv, D], k/v [T, Hkv, D].
struct Host {
  int64_t T, H, Hkv, D, C;
  std::vector<float> q, keys, values, k, v;
};

Host host(int64_t T, int64_t H, int64_t Hkv, int64_t D, int64_t C, uint32_t seed) {
  // Scores of a few units: the softmax is neither flat nor one-hot.
  Host h{T, H, Hkv, D, C, {}, {}, {}, {}, {}};
  h.q = fill(seed, T * H * D, 2), h.keys = fill(seed, C * Hkv * D, 2), h.values = fill(seed, C * Hkv * D, 1);
  h.k = fill(seed, T * Hkv * D, 2), h.v = fill(seed, T * Hkv * D, 1);
  return h;
}

kiln::DecodeAttentionShape shape_of(const Host& h, int64_t window) {
  kiln::DecodeAttentionShape s;
  s.rows = h.T, s.heads = h.H, s.kv_heads = h.Hkv, s.head_dim = h.D, s.n_ctx = h.C, s.window = window;
  s.scale = 1.0f / std::sqrt(float(h.D));
  return s;
}

std::string what(const Host& h, int64_t start, int64_t window) {
  return "T=" + std::to_string(h.T) + " H=" + std::to_string(h.H) + " Hkv=" + std::to_string(h.Hkv) +
         " D=" + std::to_string(h.D) + " C=" + std::to_string(h.C) + " start=" + std::to_string(start) +
         " window=" + std::to_string(window);
}

}  // namespace

// The definition: a prefill of T rows is T decode steps. Row t equals a one-row call at start +
// t over a cache holding the new rows j < t at start + j, bit for bit (the same keys in the
// same order), with and without windows.
TEST(PrefillAttention, ReferenceRowsAreDecodeSteps) {
  for (const Host& h : {host(5, 6, 2, 8, 12, 3), host(7, 4, 1, 16, 9, 5)}) {
    const int64_t row = h.Hkv * h.D, qrow = h.H * h.D;
    for (int64_t window : {int64_t(0), int64_t(1), int64_t(3), int64_t(6)})
      for (int64_t start = 0; start + h.T <= h.C; ++start) {
        const kiln::DecodeAttentionShape s = shape_of(h, window);
        std::vector<float> rows(size_t(h.T * qrow));
        kiln::decode_attention_reference(s, h.q.data(), h.keys.data(), h.values.data(), h.k.data(), h.v.data(),
                                         int32_t(start), rows.data());
        kiln::DecodeAttentionShape one = s;
        one.rows = 1;
        for (int64_t t = 0; t < h.T; ++t) {
          std::vector<float> keys = h.keys, values = h.values, out(static_cast<size_t>(qrow), 0.0f);
          std::memcpy(keys.data() + start * row, h.k.data(), size_t(t * row) * 4);
          std::memcpy(values.data() + start * row, h.v.data(), size_t(t * row) * 4);
          kiln::decode_attention_reference(one, h.q.data() + t * qrow, keys.data(), values.data(), h.k.data() + t * row,
                                           h.v.data() + t * row, int32_t(start + t), out.data());
          ASSERT_EQ(std::memcmp(out.data(), rows.data() + t * qrow, size_t(qrow) * 4), 0)
              << what(h, start, window) << " t=" << t;
        }
      }
  }
}

// The routine against its unfused formula: every start 0..n_ctx, windows (1: only the own
// row), 1-4 query heads per kv head, head sizes 8, 5 (native: the reference runs), 64.
TEST(PrefillAttention, EqualsTheUnfusedFormula) {
  uint32_t seed = 21;
  for (const Host& h : {host(4, 4, 4, 8, 6, seed), host(6, 6, 2, 16, 9, seed + 1), host(3, 3, 1, 5, 5, seed + 2),
                        host(9, 8, 2, 64, 11, seed + 3), host(2, 4, 1, 8, 3, seed + 4)}) {
    const Array q = np::array(h.q, {h.T, h.H, h.D}), keys = np::array(h.keys, {h.C, h.Hkv, h.D});
    const Array values = np::array(h.values, {h.C, h.Hkv, h.D}), k = np::array(h.k, {h.T, h.Hkv, h.D});
    const Array v = np::array(h.v, {h.T, h.Hkv, h.D});
    const float scale = 1.0f / std::sqrt(float(h.D));
    for (int64_t window : {int64_t(0), int64_t(1), int64_t(3), int64_t(5)})
      for (int64_t n = 0; n <= h.C; ++n) {
        const auto got =
            kiln::lax::decode_attention(q, keys, values, k, v, start_of(n), scale, window).to_vector<float>();
        const auto want =
            kiln::lax::decode_attention_unfused(q, keys, values, k, v, start_of(n), scale, window).to_vector<float>();
        expect_close(got, want, 2e-6f, what(h, n, window));
      }
  }
}

// The formula is what it says: with every key equal, row t's output is the mean of the values
// it attends (its kv head's cache rows c < start, c > start + t - window, and new rows j <= t,
// j > t - window).
TEST(PrefillAttention, FormulaBaseCase) {
  const int64_t T = 4, H = 2, Hkv = 1, D = 8, C = 6, start = 3;
  const Array key = random({1, 1, D}, 7);
  const Array keys = np::broadcast_to(key, {C, Hkv, D}), k = np::broadcast_to(key, {T, Hkv, D});
  const Array values = random({C, Hkv, D}, 8), v = random({T, Hkv, D}, 9), q = random({T, H, D}, 10);
  const auto cv = values.to_vector<float>(), nv = v.to_vector<float>();
  for (int64_t window : {int64_t(0), int64_t(2)}) {
    const auto out = kiln::lax::decode_attention_unfused(q, keys, values, k, v, start_of(start), 0.5f, window)
                         .to_vector<float>();
    for (int64_t t = 0; t < T; ++t)
      for (int64_t d = 0; d < D; ++d) {
        double sum = 0;
        int n = 0;
        for (int64_t c = 0; c < start; ++c)
          if (window == 0 || c > start + t - window) sum += cv[size_t(c * D + d)], ++n;
        for (int64_t j = 0; j <= t; ++j)
          if (window == 0 || j > t - window) sum += nv[size_t(j * D + d)], ++n;
        for (int64_t h = 0; h < H; ++h)
          EXPECT_NEAR(out[size_t((t * H + h) * D + d)], sum / n, 1e-6) << "t=" << t << " window=" << window;
      }
  }
}

#ifndef __EMSCRIPTEN__
namespace {

// Runs the units in reverse, one at a time, on the calling thread.
void reverse_split(void*, int64_t groups, void (*fn)(void*, int64_t, int64_t), void* ctx) {
  for (int64_t g = groups; g-- > 0;) fn(ctx, g, g + 1);
}

// Runs the first half of the units on a second thread.
void thread_split(void*, int64_t groups, void (*fn)(void*, int64_t, int64_t), void* ctx) {
  std::thread other([&] { fn(ctx, 0, groups / 2); });
  fn(ctx, groups / 2, groups);
  other.join();
}

}  // namespace

// Native's rows kernels (AVX2, and AVX-512 where the CPU has it) give the reference's floats
// bit for bit: SmolLM2's (9 heads on 3 kv heads, 64) and Gemma 3's (4 on 1, 256) head
// shapes, 16 and 32 query heads per kv head (more than one batch of query vectors per row
// for each kernel), rows 1 to 13 (partial blocks and key tiles), every start, windows, a NaN
// score, units in any order and on two threads.
TEST(PrefillAttention, NativeKernelEqualsTheReferenceBitForBit) {
  if (!kiln::native::best_decode_attention()) GTEST_SKIP() << "no AVX2 on this CPU";
  uint32_t seed = 31;
  std::vector<kiln::native::PrefillAttentionFn> kernels{&kiln::native::prefill_attention_avx2};
  if (__builtin_cpu_supports("avx512f")) kernels.push_back(&kiln::native::prefill_attention_avx512);
  for (const Host& h0 : {host(13, 9, 3, 64, 20, seed), host(6, 4, 1, 256, 9, seed + 1), host(5, 16, 1, 16, 7, seed + 2),
                         host(3, 32, 1, 16, 4, seed + 5), host(1, 6, 2, 16, 10, seed + 3),
                         host(11, 2, 2, 16, 0, seed + 4),
                         host(7, 2, 1, 8, 5, seed + 6)}) {
    for (bool nan_key : {false, true}) {
      Host h = h0;
      if (nan_key && h.C > 1) h.keys[size_t(h.Hkv * h.D)] = NAN;  // cache row 1: a NaN score
      if (nan_key && h.C <= 1) h.k[size_t(h.k.size() - 1)] = NAN;  // the last new row's key
      for (int64_t window : {int64_t(0), int64_t(1), int64_t(4), int64_t(9)})
        for (int64_t start = 0; start <= h.C; ++start) {
          const kiln::DecodeAttentionShape s = shape_of(h, window);
          std::vector<float> want(h.q.size()), got(want.size());
          kiln::decode_attention_reference(s, h.q.data(), h.keys.data(), h.values.data(), h.k.data(), h.v.data(),
                                           int32_t(start), want.data());
          for (size_t kernel = 0; kernel < kernels.size(); ++kernel)
            for (kiln::GroupSplitter split : {kiln::GroupSplitter(nullptr), &reverse_split, &thread_split}) {
              std::fill(got.begin(), got.end(), -1.0f);
              kernels[kernel](s, h.q.data(), h.keys.data(), h.values.data(), h.k.data(), h.v.data(), int32_t(start),
                              got.data(), split, nullptr);
              ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
                  << what(h, start, window) << " nan=" << nan_key << " kernel=" << (kernel ? "avx512" : "avx2")
                  << " split=" << (split == nullptr ? 0 : split == &reverse_split ? 1 : 2);
            }
        }
    }
  }
}
#endif

// The jvp goes through the formula: grad with T rows equals the formula's grad in every operand.
TEST(PrefillAttention, GradEqualsTheFormulasGrad) {
  if (!has_routine()) GTEST_SKIP() << kiln::default_device() << " runs the formula itself";
  const int64_t T = 3, H = 4, Hkv = 2, D = 8, C = 6;
  const std::vector<Array> x0{random({T, H, D}, 1, 2), random({C, Hkv, D}, 2, 2), random({C, Hkv, D}, 3),
                              random({T, Hkv, D}, 4, 2), random({T, Hkv, D}, 5)};
  const Array w = np::cos(np::arange(T * H * D, kiln::DType::Float32)).reshape({T, H, D});
  for (int arg = 0; arg < 5; ++arg) {
    auto loss = [&](bool fused) {
      return [&, fused](const Array& a) {
        std::vector<Array> y = x0;
        y[size_t(arg)] = a;
        const Array out =
            fused ? kiln::lax::decode_attention(y[0], y[1], y[2], y[3], y[4], start_of(4), 0.4f, 3)
                  : kiln::lax::decode_attention_unfused(y[0], y[1], y[2], y[3], y[4], start_of(4), 0.4f, 3);
        return np::sum(out * w);
      };
    };
    const auto g = kiln::grad(kiln::ArrayFn(loss(true)))(x0[size_t(arg)]).to_vector<float>();
    const auto want = kiln::grad(kiln::ArrayFn(loss(false)))(x0[size_t(arg)]).to_vector<float>();
    expect_close(g, want, 1e-6f, "operand " + std::to_string(arg));
    double norm = 0;  // not zero everywhere: the test can fail
    for (float v : g) norm += std::fabs(v);
    EXPECT_GT(norm, 1e-3) << "operand " << arg;
  }
}

// vmap over a batch of prefill chunks (queries, new rows and starts batched): each equals its
// own call.
TEST(PrefillAttention, VmapEqualsALoop) {
  const int64_t B = 3, T = 4, H = 2, Hkv = 1, D = 8, C = 6;
  const Array keys = random({C, Hkv, D}, 11, 2), values = random({C, Hkv, D}, 12);
  const Array qs = random({B, T, H, D}, 13, 2), ks = random({B, T, Hkv, D}, 14, 2), vs = random({B, T, Hkv, D}, 15);
  const Array starts = np::array(std::vector<int32_t>{0, 2, 6}, {B});
  auto f = [&](const std::vector<kiln::Tree>& a) {
    return kiln::Tree(kiln::lax::decode_attention(a[0].array(), keys, values, a[1].array(), a[2].array(), a[3].array(),
                                                  0.3f, 2));
  };
  const auto batched =
      kiln::vmap(f)({kiln::Tree(qs), kiln::Tree(ks), kiln::Tree(vs), kiln::Tree(starts)}).array().to_vector<float>();
  const size_t n = size_t(T * H * D);
  ASSERT_EQ(batched.size(), size_t(B) * n);
  for (int64_t j = 0; j < B; ++j) {
    const auto one = kiln::lax::decode_attention(np::index(qs, {j}), keys, values, np::index(ks, {j}),
                                                 np::index(vs, {j}), np::index(starts, {j}), 0.3f, 2)
                         .to_vector<float>();
    expect_close(std::vector<float>(batched.begin() + long(j * n), batched.begin() + long((j + 1) * n)), one, 2e-6f,
                 "batch " + std::to_string(j));
  }
}

// Under jit (the start an argument, q, k, v parts of one kernel's output, the cache a layer
// of a whole cache argument) the rows routine gives eager's floats.
TEST(PrefillAttention, JitEqualsEager) {
  if (!has_routine()) GTEST_SKIP() << kiln::default_device() << " runs the formula itself";
  const int64_t L = 2, C = 9, Hkv = 2, D = 8, H = 4, T = 5;
  const Array cache = random({L, 2, C, Hkv, D}, 5);
  const Array qkv = random({T, (H + 2 * Hkv) * D}, 6);
  auto f = [&](const std::vector<kiln::Tree>& a) {
    const Array x = np::sin(a[1].array()) * 2.0f;  // one kernel, read in three parts
    const Array q = np::reshape(np::index(x, {kiln::Slice{}, kiln::Slice{0, H * D, {}}}), {T, H, D});
    const Array k = np::reshape(np::index(x, {kiln::Slice{}, kiln::Slice{H * D, (H + Hkv) * D, {}}}), {T, Hkv, D});
    const Array v = np::reshape(np::index(x, {kiln::Slice{}, kiln::Slice{(H + Hkv) * D, {}, {}}}), {T, Hkv, D});
    const Array layer = np::index(a[0].array(), {int64_t(1)});
    return kiln::Tree(kiln::lax::decode_attention(q, np::index(layer, {int64_t(0)}), np::index(layer, {int64_t(1)}), k,
                                                  v, a[2].array(), 0.35f, 3) +
                      1.0f);
  };
  auto jf = kiln::jit(f);
  for (int64_t n : {0, 2, 4}) {
    const std::vector<kiln::Tree> args{kiln::Tree(cache), kiln::Tree(qkv), kiln::Tree(start_of(n))};
    const auto eager = f(args).array().to_vector<float>();
    const auto jitted = jf(args).array().to_vector<float>();
    ASSERT_EQ(jitted.size(), eager.size());
    for (size_t i = 0; i < eager.size(); ++i) ASSERT_EQ(jitted[i], eager[i]) << "start " << n << " [" << i << "]";
  }
}

}  // namespace prefill_attention_test
