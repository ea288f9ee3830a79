// native benchmark: jitted matmul 256/1024, an MLP SGD step and a conv layer on `cpu` (the
// interpreter) against `native`, plus the elementwise size sweep behind the thread threshold.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/native/native_compiler.h"
#include "kiln/kiln.h"
#include "bench_common.h"

using namespace kiln;
namespace np = kiln::numpy;
using kiln_bench::now;
using kiln_bench::mlp_sgd_step;
using kiln_bench::time_per_call;

namespace {

Array filled(const Shape& s, float v) { return (np::ones(s) * v).eval(); }
// Deterministic non-constant data, so no kernel can be folded away.
Array ramp(const Shape& s, float scale) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return (np::sin(np::arange(double(n)) * 0.37f) * scale).reshape(s).eval();
}

// The issue 7 CNN (conv 5x5x24, pool, conv 3x3x32, pool, dense 128, 10) on a batch of 32,
// softmax cross-entropy: one SGD step, as the MNIST example trains it.
Tree cnn_loss(const std::vector<Tree>& a) {
  const Tree& p = a[0];
  auto conv = [](const Array& x, const Array& w, const Array& b) {
    return nn::relu(lax::conv(x, w, {1, 1}, std::string("SAME")) + b);
  };
  Array h = lax::max_pool(conv(a[1].as_array(), p["c1"].as_array(), p["b1"].as_array()), {2, 2}, {2, 2});
  h = lax::max_pool(conv(h, p["c2"].as_array(), p["b2"].as_array()), {2, 2}, {2, 2});
  h = h.reshape({h.shape()[0], 32 * 7 * 7});
  h = nn::relu(np::matmul(h, p["w3"].as_array()) + p["b3"].as_array());
  Array logits = np::matmul(h, p["w4"].as_array()) + p["b4"].as_array();
  return Tree(-np::mean(np::sum(nn::log_softmax(logits) * a[2].as_array(), -1)));
}

Tree cnn_step(const std::vector<Tree>& a) {
  Tree g = grad(cnn_loss)(a);
  return tree_map([](const Array& p, const Array& d) { return p - 0.01f * d; }, a[0], g);
}

struct Row {
  std::string name;
  double flops;  // per call, 0 when not meaningful
  int reps_cpu, reps_native;
  std::function<std::function<void()>()> make;  // builds inputs on the default device
};

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool sweep_only = mode == "--sweep", native_only = mode == "--native";
  const char* threads = std::getenv("KILN_NUM_THREADS");
  std::printf("threads: %s\n\n", threads ? threads : "hardware_concurrency");
  if (!sweep_only) {
    std::vector<Row> rows;
    for (int64_t n : {int64_t(256), int64_t(1024)}) {
      rows.push_back({"matmul " + std::to_string(n) + "x" + std::to_string(n) + " f32", 2.0 * n * n * n,
                      n == 256 ? 3 : 1, n == 256 ? 20 : 5, [n] {
                        Array a = ramp({n, n}, 1.0f), b = ramp({n, n}, 0.5f);
                        auto f = jit(ArrayFn([b](const Array& x) { return np::matmul(x, b); }));
                        return std::function<void()>([a, f] { f(a).eval(); });
                      }});
    }
    const int64_t batch = 64, din = 784, dh = 128, dout = 10;
    rows.push_back({"MLP 64x784-128-10 SGD step", 3.0 * 2 * batch * (din * dh + dh * dout), 3, 20, [=] {
                      Tree params(Tree::Dict{{"w1", Tree(ramp({din, dh}, 0.05f))}, {"b1", Tree(filled({dh}, 0.0f))},
                                             {"w2", Tree(ramp({dh, dout}, 0.05f))}, {"b2", Tree(filled({dout}, 0.0f))}});
                      Array xb = ramp({batch, din}, 1.0f), yb = ramp({batch, dout}, 0.1f);
                      auto step = jit(mlp_sgd_step);
                      auto p = std::make_shared<Tree>(params);
                      return std::function<void()>([=] {
                        *p = step({*p, xb, yb});
                        for (auto& l : tree_leaves(*p)) l.eval();
                      });
                    }});
    // The MNIST CNN's first layer: 32 images 1x28x28, 24 filters 5x5, SAME, + bias, relu.
    const int64_t nb = 32, co = 24, hw = 28, kw = 5;
    rows.push_back({"conv 32x1x28x28 * 24x1x5x5 SAME + bias + relu", 2.0 * nb * co * hw * hw * kw * kw, 2, 20, [=] {
                      Array x = ramp({nb, 1, hw, hw}, 1.0f), w = ramp({co, 1, kw, kw}, 0.2f),
                            b = ramp({1, co, 1, 1}, 0.1f);
                      auto f = jit(ArrayFn([w, b](const Array& xx) {
                        return np::maximum(lax::conv(xx, w, {1, 1}, std::string("SAME")) + b, 0.0f);
                      }));
                      return std::function<void()>([x, f] { f(x).eval(); });
                    }});
    rows.push_back({"CNN 32x1x28x28 SGD step (issue 7 model)",
                    3.0 * 2 * 32 * (24 * 25 * 784 + 32 * 24 * 9 * 196 + 1568 * 128 + 1280), 1, 10, [] {
                      Tree params(Tree::Dict{{"c1", Tree(ramp({24, 1, 5, 5}, 0.2f))}, {"b1", Tree(filled({1, 24, 1, 1}, 0.0f))},
                                             {"c2", Tree(ramp({32, 24, 3, 3}, 0.05f))}, {"b2", Tree(filled({1, 32, 1, 1}, 0.0f))},
                                             {"w3", Tree(ramp({1568, 128}, 0.02f))}, {"b3", Tree(filled({128}, 0.0f))},
                                             {"w4", Tree(ramp({128, 10}, 0.05f))}, {"b4", Tree(filled({10}, 0.0f))}});
                      Array xb = ramp({32, 1, 28, 28}, 1.0f), yb = filled({32, 10}, 0.1f);
                      auto step = jit(cnn_step);
                      auto p = std::make_shared<Tree>(params);
                      return std::function<void()>([=] {
                        *p = step({*p, xb, yb});
                        for (auto& l : tree_leaves(*p)) l.eval();
                      });
                    }});
    std::printf("| benchmark | cpu | native | native first call | native GFLOP/s | native / cpu |\n");
    std::printf("| --- | --- | --- | --- | --- | --- |\n");
    for (auto& r : rows) {
      double first_cpu, first_native, tc = 0;
      if (!native_only) {
        set_default_device("cpu");
        auto fc = r.make();
        tc = time_per_call(fc, r.reps_cpu, &first_cpu);
      }
      set_default_device("native");
      auto fn = r.make();
      double tn = time_per_call(fn, r.reps_native, &first_native);
      std::printf("| %s | %.2f ms | %.3f ms | %.0f ms | %.2f | %.0fx |\n", r.name.c_str(), tc * 1e3, tn * 1e3,
                  first_native * 1e3, r.flops / tn * 1e-9, tc / tn);
      std::fflush(stdout);
    }
    if (native_only) return 0;
  }
  // Elementwise a * b + c on native by size: where splitting over threads starts to pay.
  set_default_device("native");
  std::printf("\n| elementwise n | native per call |\n| --- | --- |\n");
  for (int64_t n = 1 << 10; n <= (int64_t(1) << 22); n *= 4) {
    Array a = ramp({n}, 1.0f), b = ramp({n}, 2.0f), c = ramp({n}, 3.0f);
    auto f = jit(Fn([](const std::vector<Tree>& x) {
      return Tree(x[0].as_array() * x[1].as_array() + x[2].as_array());
    }));
    double first;
    double t = time_per_call([&] { f({a, b, c}).as_array().eval(); }, n > (1 << 20) ? 20 : 200, &first);
    std::printf("| %lld | %.1f us |\n", (long long)n, t * 1e6);
  }
  auto st = native::compile_stats();
  std::printf("\nnative kernels: %lld compiled (%.1f s), %lld from the disk cache\n", (long long)st.compiled,
              st.compile_seconds, (long long)st.disk_hits);
  return 0;
}
