// kiln::checkpoint (remat): values and derivatives against JAX's jax.checkpoint
// (tests/fixtures/remat_jax.txt, tools/gen_remat_fixtures.py) under grad, jit(grad),
// vmap(grad), jvp and nesting with both policies; and the point of it, measured: a 32-layer
// MLP's gradient holds at least 3x fewer peak live bytes with checkpoints, eagerly and under
// jit, at equal results. Runs on the suite's default device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "jax_fixture_reader.h"
#include "kiln/kiln.h"

namespace remat_test {

namespace {

using kiln::Array;
using kiln::CheckpointPolicy;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;
using Named = std::map<std::string, Array>;

using RematCase = kiln_test::JaxFixtureCase;

const std::vector<RematCase>& all_cases() {
  static const std::vector<RematCase> c = kiln_test::read_jax_fixture("remat_jax.txt");
  return c;
}

Array layer(const Array& w, const Array& b, const Array& h) {
  Array z = np::matmul(h, w);
  return np::tanh(z + b) * np::sin(z);
}

Fn layer_fn() {
  return [](const std::vector<Tree>& a) { return Tree(layer(a[0].array(), a[1].array(), a[2].array())); };
}

// The fixtures' three-layer MLP, each layer checkpointed with `policy` (none: plain).
Array mlp(const std::vector<Array>& ws, const std::vector<Array>& bs, const Array& x,
          std::optional<CheckpointPolicy> policy) {
  Array h = x;
  Fn f = policy ? kiln::checkpoint(layer_fn(), *policy) : layer_fn();
  for (size_t i = 0; i < ws.size(); i++) h = f({ws[i], bs[i], h}).array();
  return np::sum(h * h);
}

std::vector<Array> list(const Named& in, const std::string& p) {
  return {in.at(p + "0"), in.at(p + "1"), in.at(p + "2")};
}

Named grads(const Named& in, CheckpointPolicy policy) {
  Fn loss = [policy](const std::vector<Tree>& a) {
    std::vector<Array> ws, bs;
    for (int i = 0; i < 3; i++) {
      ws.push_back(a[0][i].array());
      bs.push_back(a[1][i].array());
    }
    return Tree(mlp(ws, bs, a[2].array(), policy));
  };
  Tree ws = Tree::List{in.at("w0"), in.at("w1"), in.at("w2")}, bs = Tree::List{in.at("b0"), in.at("b1"), in.at("b2")};
  Tree vg = kiln::value_and_grad(loss, {0, 1, 2})({ws, bs, in.at("x")});
  Tree jg = kiln::jit(kiln::grad(loss, {0, 2}))({ws, bs, in.at("x")});
  Named out{{"loss", vg[0].array()}, {"g_x", vg[1][2].array()}, {"jit_g_x", jg[1].array()}};
  for (int i = 0; i < 3; i++) {
    out["g_w" + std::to_string(i)] = vg[1][0][i].array();
    out["g_b" + std::to_string(i)] = vg[1][1][i].array();
    out["jit_g_w" + std::to_string(i)] = jg[0][i].array();
  }
  return out;
}

Array nested(const std::vector<Array>& ws, const std::vector<Array>& bs, const Array& x) {
  Fn inner = kiln::checkpoint(layer_fn(), kiln::checkpoint_policies::nothing_saveable);
  Fn two = [inner](const std::vector<Tree>& a) { return inner({a[2], a[3], inner({a[0], a[1], a[4]})}); };
  Array h = kiln::checkpoint(two, kiln::checkpoint_policies::dots_saveable)({ws[0], bs[0], ws[1], bs[1], x}).array();
  h = layer(ws[2], bs[2], h);
  return np::sum(h * h);
}

using Impl = std::function<Named(const Named&)>;
const std::map<std::string, Impl>& table() {
  static const std::map<std::string, Impl> t = {
      {"remat_nothing", [](const Named& in) { return grads(in, kiln::checkpoint_policies::nothing_saveable); }},
      {"remat_dots", [](const Named& in) { return grads(in, kiln::checkpoint_policies::dots_saveable); }},
      {"remat_vmap_jvp",
       [](const Named& in) {
         std::vector<Array> ws = list(in, "w"), bs = list(in, "b");
         kiln::ArrayFn f = [ws, bs](const Array& x) { return mlp(ws, bs, x, CheckpointPolicy::NothingSaveable); };
         auto [y, t] = kiln::jvp(f, in.at("x"), in.at("dx"));
         return Named{{"vmap_grad", kiln::vmap(kiln::grad(f))(in.at("xb"))}, {"jvp_y", y}, {"jvp_t", t}};
       }},
      {"remat_nested",
       [](const Named& in) {
         std::vector<Array> ws = list(in, "w"), bs = list(in, "b");
         Fn loss = [bs](const std::vector<Tree>& a) {
           return Tree(nested({a[0][0].array(), a[0][1].array(), a[0][2].array()}, bs, a[1].array()));
         };
         Tree g = kiln::grad(loss, {0, 1})({Tree::List{ws[0], ws[1], ws[2]}, in.at("x")});
         kiln::ArrayFn row = [ws, bs](const Array& x) { return nested(ws, bs, x); };
         Array h = np::reshape(kiln::hessian(row)(in.at("x0")), {4, 4});
         return Named{{"g_x", g[1].array()},   {"g_w0", g[0][0].array()}, {"g_w1", g[0][1].array()},
                      {"g_w2", g[0][2].array()}, {"hess_x", h}};
       }},
  };
  return t;
}

Named inputs_of(const RematCase& c) { return kiln_test::fixture_inputs(c); }

void expect_matches(const RematCase& c, const Named& out) { kiln_test::expect_matches_jax(c, out); }

class RematJax : public ::testing::TestWithParam<size_t> {};

TEST_P(RematJax, Matches) {
  const RematCase& c = all_cases()[GetParam()];
  ASSERT_TRUE(table().count(c.function)) << "no C++ implementation of " << c.function;
  expect_matches(c, table().at(c.function)(inputs_of(c)));
}

// Policies change what is recomputed, never the values: everything_saveable (no
// recomputation, a plain call split) against the same JAX values.
TEST(RematPolicies, EverythingSaveableMatchesJax) {
  int n = 0;
  for (const RematCase& c : all_cases())
    if (c.function == "remat_nothing") {
      expect_matches(c, grads(inputs_of(c), kiln::checkpoint_policies::everything_saveable));
      n++;
    }
  EXPECT_EQ(n, 2);
}

INSTANTIATE_TEST_SUITE_P(Remat, RematJax, ::testing::Range<size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) { return all_cases()[i.param].id; });

TEST(RematJaxFile, HasEveryCase) { EXPECT_EQ(all_cases().size(), 8u); }

}  // namespace

// ---- peak memory ----------------------------------------------------------------------

namespace {

// Activations outweigh the weights (batch 4x the width), as where checkpointing pays; one
// checkpoint per segment of 4 layers, the sqrt(N) schedule: the forward pass keeps 8 segment
// inputs, and the backward pass recomputes one segment (4 layers' residuals) at a time.
// Checkpointing each layer alone gives 2.0x (eager) and 1.8x (jit) here: a layer of this MLP
// has about 2.5 activations of residuals and its checkpoint still keeps its input.
constexpr int kLayers = 32, kWidth = 64, kBatch = 256, kBlock = 4;

// One layer of the deep MLP; its intermediates are what the backward pass needs.
Array deep_layer(const Array& w, const Array& b, const Array& h) {
  Array z = np::matmul(h, w) + b;
  return np::tanh(z) * np::sin(z) + h;
}

Fn deep_loss(bool ckpt) {
  Fn layer = [](const std::vector<Tree>& a) { return Tree(deep_layer(a[0].array(), a[1].array(), a[2].array())); };
  Fn block = [layer](const std::vector<Tree>& a) {
    Tree h = a.back();
    for (int i = 0; i < kBlock; i++) h = layer({a[size_t(i)], a[size_t(kBlock + i)], h});
    return h;
  };
  Fn f = ckpt ? kiln::checkpoint(block) : block;
  return [f](const std::vector<Tree>& a) {
    Tree h = a[2];
    for (int i = 0; i < kLayers; i += kBlock) {
      std::vector<Tree> in;
      for (int k = 0; k < kBlock; k++) in.push_back(a[0][i + k]);
      for (int k = 0; k < kBlock; k++) in.push_back(a[1][i + k]);
      in.push_back(h);
      h = f(in);
    }
    return Tree(np::mean(np::square(h.array())));
  };
}

struct Measured {
  int64_t peak = 0;  // the most bytes held at once above those live before the call
  std::vector<std::vector<float>> grads;
};

Measured measure(const Fn& g, const std::vector<Tree>& args) {
  const std::string dev = kiln::default_device();
  kiln::reset_peak_memory();
  const int64_t before = kiln::memory_stats().device(dev).bytes;
  Measured m;
  {
    Tree r = g(args);
    auto [leaves, def] = kiln::tree_flatten(r);
    for (auto& l : leaves) l.eval();
    m.peak = kiln::memory_stats().device(dev).peak_bytes - before;
    for (auto& l : leaves) m.grads.push_back(l.to_vector<float>());
  }
  return m;
}

TEST(RematMemory, CheckpointLowersPeakOfDeepMlpGradient) {
  Array keys = kiln::random::split(kiln::random::key(7), kLayers + 1);
  Tree::List ws, bs;
  for (int i = 0; i < kLayers; i++) {
    ws.push_back(kiln::random::normal(keys[i], {kWidth, kWidth}) * Array(1.0 / std::sqrt(double(kWidth))));
    bs.push_back(np::full({kWidth}, 0.01));
  }
  Array x = kiln::random::normal(keys[kLayers], {kBatch, kWidth});
  std::vector<Tree> args{Tree(ws), Tree(bs), x};
  for (auto& l : kiln::tree_flatten(Tree(Tree::List{ws, bs, x})).first) l.eval();
  for (bool jit : {false, true}) {
    Fn plain = kiln::grad(deep_loss(false), {0, 1, 2}), ckpt = kiln::grad(deep_loss(true), {0, 1, 2});
    if (jit) {
      plain = kiln::jit(plain);
      ckpt = kiln::jit(ckpt);
      measure(plain, args);  // compile outside the measured calls
      measure(ckpt, args);
    }
    Measured a = measure(plain, args), b = measure(ckpt, args);
    std::printf("%s grad of a %d-layer MLP (width %d, batch %d) on %s: peak %lld bytes plain, %lld with a checkpoint per %d layers: %.2fx\n",
                jit ? "jit" : "eager", kLayers, kWidth, kBatch, kiln::default_device().c_str(), (long long)a.peak,
                (long long)b.peak, kBlock, double(a.peak) / double(b.peak));
    EXPECT_GE(double(a.peak), 3.0 * double(b.peak)) << (jit ? "jit" : "eager");
    ASSERT_EQ(a.grads.size(), b.grads.size());
    for (size_t i = 0; i < a.grads.size(); i++)
      for (size_t k = 0; k < a.grads[i].size(); k++)
        ASSERT_NEAR(a.grads[i][k], b.grads[i][k], 1e-5 * (std::abs(a.grads[i][k]) + 1e-3)) << i << "[" << k << "]";
  }
}

}  // namespace

namespace {

// A jitted gradient whose checkpoints (and their recomputations) run as nested programs of
// the jitted one: their outputs come from and go back to the jit's pool, so steps leave the
// counters flat once warm, as every jitted training step must.
TEST(RematMemory, JitGradientStepsWithCheckpointsAreFlat) {
  Fn layer = kiln::checkpoint(layer_fn());
  Fn loss = [layer](const std::vector<Tree>& a) {
    Tree h = a[1];
    for (int i = 0; i < 4; i++) h = layer({a[0], np::sum(a[0].array(), 0) * Array(0.1), h});
    return Tree(np::sum(np::square(h.array())));
  };
  Fn step = kiln::jit(kiln::grad(loss, {0, 1}));
  Array w = kiln::random::normal(kiln::random::key(3), {16, 16}) * Array(0.3);
  auto counters = [] {
    kiln::MemoryStats s = kiln::memory_stats();
    const kiln::DeviceMemoryStats& d = s.device(kiln::default_device());
    return std::vector<int64_t>{s.arrays, d.buffers, d.bytes, d.pooled_buffers, d.pooled_bytes};
  };
  // Spares that earlier tests left in the pool would drain by one buffer per step (an output
  // of a nested program that leaves the call is taken from the pool and freed with the
  // result), so the counters would fall, not stay flat: start from an empty pool.
  kiln::reset_peak_memory();
  std::vector<int64_t> warm;
  for (int i = 0; i < 8; i++) {
    Array x = np::full({4, 16}, double(i) * 0.1 + 0.05);
    Tree g = step({w, x});
    for (auto& l : kiln::tree_flatten(g).first) l.eval();
    g = Tree();
    x = Array();
    if (i == 2) warm = counters();
    if (i > 2) {
      ASSERT_EQ(counters(), warm) << "after step " << i;
    }
  }
}

}  // namespace

}  // namespace remat_test
