// kiln::lax control flow in two small programs:
// 1. a character-level RNN whose forward pass over the sequence is one lax::scan, trained
//    with grad of that scan (jitted: the whole step, loop included, is one compiled program)
//    and Adam, then sampled greedily with another scan;
// 2. a fixed-point solver, x = cos(x) elementwise, with lax::while_loop until the update is
//    below a tolerance, and its derivative by forward mode through the loop.
// Usage: kiln_control_flow [steps] (default 300)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "frontend/array_impl.h"
#include "kiln/kiln.h"

namespace np = kiln::numpy;
namespace lax = kiln::lax;
using kiln::Array;
using kiln::Tree;

namespace {

const std::string kText = "hello kiln, hello loops. scan me, while you can. ";

// Cross-entropy of predicting each next character: h = tanh(x Wxh + h Whh + bh), logits = h Why + by.
Array rnn_loss(const Tree& p, const Array& xs, const Array& ys) {
  Array wxh = p["wxh"].array(), whh = p["whh"].array(), bh = p["bh"].array(), why = p["why"].array(),
        by = p["by"].array();
  auto step = [&](const Tree& h, const Tree& xy) {
    Array h2 = np::tanh(np::matmul(xy[0].array(), wxh) + np::matmul(h.array(), whh) + bh);
    Array logp = kiln::nn::log_softmax(np::matmul(h2, why) + by);
    return std::pair<Tree, Tree>{h2, -np::sum(logp * xy[1].array())};
  };
  auto [h, nll] = lax::scan(step, np::zeros({whh.shape(0)}), Tree(Tree::List{xs, ys}));
  return np::mean(nll.array());
}

void train_rnn(int steps) {
  std::string vocab;
  for (char c : kText)
    if (vocab.find(c) == std::string::npos) vocab += c;
  const int64_t v = int64_t(vocab.size()), hidden = 32, t = int64_t(kText.size()) - 1;
  std::vector<int32_t> ids;
  for (char c : kText) ids.push_back(int32_t(vocab.find(c)));
  Array all = np::array(ids, {int64_t(ids.size())});
  Array xs = kiln::nn::one_hot(all[{kiln::Slice{0, t, std::nullopt}}], v);
  Array ys = kiln::nn::one_hot(all[{kiln::Slice{1, t + 1, std::nullopt}}], v);
  Array key = kiln::random::key(0);
  auto init = [&](int64_t a, int64_t b, int i) {
    return kiln::random::normal(kiln::random::fold_in(key, i), {a, b}) * Array(1.0 / std::sqrt(double(a)));
  };
  Tree::Dict pd;
  pd["wxh"] = init(v, hidden, 1);
  pd["whh"] = init(hidden, hidden, 2);
  pd["bh"] = np::zeros({hidden});
  pd["why"] = init(hidden, v, 3);
  pd["by"] = np::zeros({v});
  Tree params = pd;
  auto opt = kiln::optax::adam(0.02);
  Tree state = opt.init(params);
  kiln::Fn loss = [](const std::vector<Tree>& a) { return Tree(rnn_loss(a[0], a[1].array(), a[2].array())); };
  kiln::Fn step = kiln::jit([&](const std::vector<Tree>& a) {
    Tree lg = kiln::value_and_grad(loss)({a[0], a[2], a[3]});
    auto [updates, s2] = opt.update(lg[1], a[1], a[0]);
    return Tree(Tree::List{kiln::optax::apply_updates(a[0], updates), s2, lg[0]});
  });
  for (int i = 0; i <= steps; i++) {
    Tree r = step({params, state, xs, ys});
    params = r[0];
    state = r[1];
    if (i % 50 == 0) std::printf("step %4d  loss %.4f\n", i, r[2].as_array().item());
  }
  // Greedy sampling with a scan over no xs: the carry holds the hidden state and the last
  // character, the outputs are the characters.
  const Tree& p = params;
  auto [fin, chars] = lax::scan(
      [&](const Tree& c, const Tree&) {
        Array x = kiln::nn::one_hot(c[1].array(), v);
        Array h = np::tanh(np::matmul(x, p["wxh"].array()) + np::matmul(c[0].array(), p["whh"].array()) + p["bh"].array());
        Array next = np::argmax(np::matmul(h, p["why"].array()) + p["by"].array()).astype(kiln::int32);
        return std::pair<Tree, Tree>{Tree(Tree::List{h, next}), next};
      },
      Tree(Tree::List{np::zeros({hidden}), np::array(std::vector<int32_t>{ids[0]}, {})}), Tree(), 48);
  std::string sample(1, kText[0]);
  for (int32_t c : chars.array().to_vector<int32_t>()) sample += vocab[size_t(c)];
  std::printf("sample: \"%s\"\n", sample.c_str());
}

void fixed_point() {
  // x = a * cos(x), solved per element by iterating the map (a contraction for |a| < 1);
  // the loop runs until every element's update is below 1e-6, at most 1000 times.
  auto iterate = [](const Array& a) {
    return lax::while_loop(
        [](const Tree& c) {
          return np::logical_and(np::max(np::abs(c[0].array() - c[1].array())) > Array(1e-6), c[2].array() < Array(1000.0));
        },
        [a](const Tree& c) {
          return Tree(Tree::List{c[1].array(), a * np::cos(c[1].array()), c[2].array() + Array(1.0)});
        },
        Tree(Tree::List{np::full_like(a, 10.0), np::zeros_like(a), np::zeros({})}));
  };
  auto solve = [iterate](const Array& a) { return iterate(a)[1].array(); };
  Array a = np::array(std::vector<float>{0.3f, 0.6f, 0.9f}, {3});
  Tree r = iterate(a);
  Array x = r[1].array();
  std::printf("%g iterations\n", r[2].as_array().item());
  std::printf("x = a cos(x) for a = [0.3, 0.6, 0.9]: %s\n", x.to_string().c_str());
  std::printf("residual: %s\n", (x - a * np::cos(x)).to_string().c_str());
  // dx/da by forward mode through the while loop; implicitly dx/da = cos x / (1 + a sin x).
  auto [xx, dx] = kiln::jvp(kiln::ArrayFn(solve), a, np::ones_like(a));
  std::printf("dx/da (jvp through while_loop): %s\n", dx.to_string().c_str());
  std::printf("dx/da (implicit function):      %s\n",
              (np::cos(xx) / (Array(1.0) + a * np::sin(xx))).to_string().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  std::printf("kiln control flow examples (device %s)\n\n1. character-level RNN trained with lax::scan\n",
              kiln::default_device().c_str());
  train_rnn(steps);
  std::printf("\n2. fixed point with lax::while_loop\n");
  fixed_point();
  return 0;
}
