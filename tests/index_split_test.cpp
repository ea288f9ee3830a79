// Index-set splitting (ir/index_split.h): concatenations, pads and packed kernels computed as
// one loop per range of the output index, bit-identical to the unfused eager result on every
// device, and the split observed in the kernels each CPU backend generates.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "frontend/jit_program.h"
#include "ir/index_split.h"
#include "ir/legalize.h"
#include "kiln/kiln.h"
#ifdef __EMSCRIPTEN__
#include "backend/wasm/wasm_codegen.h"
#else
#include "backend/native/native_codegen.h"
#endif

namespace index_split_test {

namespace {

using kiln::Array;
using kiln::Tree;
namespace np = kiln::numpy;

Array rnd(const kiln::Shape& s, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d{-2.f, 2.f};
  size_t n = 1;
  for (auto d0 : s) n *= size_t(d0);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return np::array(v, s);
}

// The kernels of one warm call of jit(f).
std::vector<kiln::Kernel> kernels_of(const kiln::Fn& jf, const std::vector<Tree>& args, Tree* out) {
  jf(args);
  kiln::frontend::KernelRecorder rec;
  *out = jf(args);
  return rec.kernels();
}

// Runs body on the cpu interpreter (the oracle, which never splits) and on the default device.
void on_devices(const std::function<void()>& body) {
  const std::string dflt = kiln::default_device();
  for (const std::string& d : {std::string("cpu"), dflt}) {
    kiln::set_default_device(d);
    SCOPED_TRACE("device " + d);
    body();
  }
  kiln::set_default_device(dflt);
}

void expect_same_bits(const Array& got, const Array& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  ASSERT_EQ(g.size(), w.size());
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); i++)
    if (std::memcmp(&g[i], &w[i], 4) != 0 && bad++ < 5) ADD_FAILURE() << "index " << i << ": " << g[i] << " != " << w[i];
}

// Branches: tanh, a product with exp, a constant and a plain copy, of uneven lengths along
// `axis` (3, 5, 2, 7, or 9, 13, 8, 11 along the innermost axis, where a piece of a row has at
// least kMinInnerPiece elements: boundaries off every 4- and 8-wide vector).
std::vector<Array> branches(const std::vector<Tree>& a, bool realize) {
  std::vector<Array> out{np::tanh(a[0].as_array()), np::exp(a[1].as_array()) * 0.5f,
                         np::full(a[2].as_array().shape(), np::asarray(Array(1.25f))), a[3].as_array() + 0.0f};
  if (realize)
    for (Array& b : out) b.eval();  // each branch its own kernel: the unfused result
  return out;
}

std::vector<Tree> branch_args(int axis, int64_t batch) {
  std::vector<Tree> args;
  const std::vector<int64_t> lens = axis == 2 ? std::vector<int64_t>{9, 13, 8, 11} : std::vector<int64_t>{3, 5, 2, 7};
  for (size_t i = 0; i < 4; i++) {
    kiln::Shape s{batch, 6, 9};
    s[size_t(axis)] = lens[i] * (axis == 0 ? batch : 1);
    args.push_back(Tree(rnd(s, unsigned(10 + i))));
  }
  return args;
}

}  // namespace

// Along each axis position, with a batch of 1 (the concatenated axis outermost: one range per
// branch) and of 2 (axis 1 and 2 inner: ranges of each row): equal to the unfused eager
// result, bit for bit, on the cpu and the default device.
TEST(IndexSplit, ConcatenationsEqualTheUnfusedResultOnEveryDevice) {
  on_devices([] {
    for (int64_t batch : {1, 2})
      for (int axis = 0; axis < 3; axis++) {
        SCOPED_TRACE("axis " + std::to_string(axis) + " batch " + std::to_string(batch));
        const std::vector<Tree> args = branch_args(axis, batch);
        auto f = [axis](const std::vector<Tree>& a) { return Tree(np::concatenate(branches(a, false), axis)); };
        const Array want = np::concatenate(branches(args, true), axis);
        expect_same_bits(kiln::jit(f)(args).as_array(), want);
        expect_same_bits(f(args).as_array(), want);  // eager, fused the same way
      }
  });
}

// A pad shares the path (a concatenation is pads selected by their masks): padding before and
// after the outermost axis, and a long one that the native and wasm thread pools split across
// the boundaries (2^17 elements of tanh).
TEST(IndexSplit, PadsAndLongKernelsEqualTheUnfusedResult) {
  on_devices([] {
    for (int64_t n : {int64_t(5), int64_t(1) << 15}) {
      const std::vector<Tree> args{Tree(rnd({n, 4}, 3)), Tree(rnd({n - 1, 4}, 4))};
      auto f = [](const std::vector<Tree>& a) {
        Array p = np::pad(np::tanh(a[0].as_array()), {{3, 2}, {0, 0}});
        return Tree(np::concatenate({p, np::exp(a[1].as_array()), p}, 0));
      };
      Array t = np::tanh(args[0].as_array());
      t.eval();
      Array e = np::exp(args[1].as_array());
      e.eval();
      Array p = np::pad(t, {{3, 2}, {0, 0}});
      p.eval();
      expect_same_bits(kiln::jit(f)(args).as_array(), np::concatenate({p, e, p}, 0));
    }
  });
}

// The rule fires: concatenations along each axis, two outputs packed into one kernel and a
// pad are generated as one loop per range, by the shared analysis and by the default
// device's code generator (native's plan, wasm's module); a kernel without such selects, or
// whose ranges of a row are shorter than kMinInnerPiece, is not.
TEST(IndexSplit, TheCodeGeneratorsSplitByIndexRanges) {
  struct Case {
    std::string what;
    std::function<Tree(const std::vector<Tree>&)> f;
    std::vector<Tree> args;
    size_t pieces;  // of the call's one kernel; 0: not split
    int64_t period;
  };
  const std::vector<Case> cases{
      {"concatenate", [](const std::vector<Tree>& a) { return Tree(np::concatenate(branches(a, false), 0)); },
       branch_args(0, 1), 4, 17 * 6 * 9},
      {"concatenate, inner axis", [](const std::vector<Tree>& a) { return Tree(np::concatenate(branches(a, false), 1)); },
       branch_args(1, 2), 4, 17 * 9},
      {"concatenate, innermost axis",
       [](const std::vector<Tree>& a) { return Tree(np::concatenate(branches(a, false), 2)); }, branch_args(2, 2), 4, 41},
      {"concatenate, pieces of rows too short",
       [](const std::vector<Tree>& a) { return Tree(np::concatenate({np::tanh(a[0].as_array()), np::exp(a[1].as_array())}, 1)); },
       {Tree(rnd({5, 3}, 8)), Tree(rnd({5, 2}, 9))}, 0, 0},
      {"packed outputs",
       [](const std::vector<Tree>& a) {
         return Tree(std::vector<Tree>{Tree(np::tanh(a[0].as_array())), Tree(np::exp(a[0].as_array()))});
       },
       {Tree(rnd({7, 3}, 5))}, 2, 42},
      {"pad",  // an output that is a bare pad stays a view; one computed after it is a kernel
       [](const std::vector<Tree>& a) { return Tree(np::pad(np::tanh(a[0].as_array()), {{1, 2}, {0, 0}}) + 1.0f); },
       {Tree(rnd({7, 3}, 6))}, 3, 30},
      {"plain", [](const std::vector<Tree>& a) { return Tree(np::tanh(a[0].as_array()) * 2.0f); },
       {Tree(rnd({7, 3}, 7))}, 0, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Tree out;
    const std::vector<kiln::Kernel> ks = kernels_of(kiln::jit(c.f), c.args, &out);
    ASSERT_EQ(ks.size(), 1u);
    const kiln::Kernel k = kiln::legalize(ks[0]);
    const auto split = kiln::split_index_ranges(k);
    EXPECT_EQ(split ? split->pieces.size() : 0, c.pieces);
    if (split) {
      const auto* pieces = &split->pieces;
      EXPECT_EQ(split->period, c.period);
      EXPECT_EQ(pieces->front().lo, 0);
      EXPECT_EQ(pieces->back().hi, split->period);
      for (size_t i = 1; i < pieces->size(); i++) EXPECT_EQ((*pieces)[i].lo, (*pieces)[i - 1].hi);
      for (const kiln::IndexPiece& p : *pieces)  // no select on the output index is left
        EXPECT_LT(p.exp.node_count(), k.exp.node_count());
    }
#ifdef __EMSCRIPTEN__
    if (kiln::default_device() == "wasm") {
      EXPECT_EQ(size_t(kiln::wasm::compile_kernel(ks[0]).index_pieces), c.pieces);
    }
#else
    if (kiln::default_device() == "native") {
      EXPECT_EQ(kiln::native::plan_kernel(ks[0]).pieces.size(), c.pieces);
    }
#endif
  }
}

}  // namespace index_split_test
