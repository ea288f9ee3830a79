// The training step is one jit-compiled function (params, state, x, y) -> (params, state,
// loss), so each step after the first dispatches the fused kernels without retracing.
#include "train.h"

#include <numeric>

namespace mnist {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::Tree;

Trainer::Trainer(Model model, const kiln::optax::ScalarOrSchedule& learning_rate, int64_t seed,
                 int64_t hidden, bool jit)
    : opt_(kiln::optax::adam(learning_rate)), jit_(jit) {
  Array keys = kiln::random::split(kiln::random::PRNGKey(seed), 2);
  params_ = init(model, keys[0], hidden);
  shuffle_key_ = keys[1];
  opt_state_ = opt_.init(params_);
  Model m = model;
  kiln::optax::GradientTransformation opt = opt_;
  kiln::Fn loss_fn = [m](const std::vector<Tree>& a) {
    return Tree(loss(m, a[0], a[1].array(), a[2].array()));
  };
  kiln::Fn step = [opt, loss_fn](const std::vector<Tree>& a) {
    Tree vg = kiln::value_and_grad(loss_fn)({a[0], a[2], a[3]});
    auto [updates, state] = opt.update(vg[1], a[1], a[0]);
    return Tree(Tree::List{kiln::optax::apply_updates(a[0], updates), state, vg[0]});
  };
  step_ = jit ? kiln::jit(step) : step;
  predict_ = kiln::jit([m](const std::vector<Tree>& a) {
    return Tree(np::argmax(apply(m, a[0], a[1].array()), -1));
  });
}

double Trainer::train_epoch(const Split& split, int64_t batch_size, int epoch,
                            const Progress& progress) {
  Array perm = kiln::random::permutation(kiln::random::fold_in(shuffle_key_, epoch), split.size());
  std::vector<int32_t> order = perm.to_vector<int32_t>();
  const int64_t steps = split.size() / batch_size;
  double total = 0;
  for (int64_t s = 0; s < steps; ++s) {
    auto [x, y] = batch(split, order, s * batch_size, (s + 1) * batch_size);
    total += train_step(x, y);
    if (progress) progress(s + 1, steps, total / double(s + 1));
  }
  return steps ? total / double(steps) : 0.0;
}

double Trainer::train_step(const Array& x, const Array& y) {
  Tree out = step_({params_, opt_state_, x, y});
  params_ = out[0];
  opt_state_ = out[1];
  if (!jit_) {
    // Eager updates are lazy expressions over the previous step's buffers; left so, each
    // parameter's chain keeps old buffers until the fusion limit realizes it (the CNN
    // swung between 48 and 164 live buffers, tests/memory_test.cpp), so realize them here.
    for (const Array& a : kiln::tree_leaves(params_)) a.eval();
    for (const Array& a : kiln::tree_leaves(opt_state_)) a.eval();
  }
  return out[2].array().item();
}

double Trainer::accuracy(const Split& split, int64_t batch_size) {
  std::vector<int32_t> order(size_t(split.size()));
  std::iota(order.begin(), order.end(), 0);
  int64_t correct = 0;
  for (int64_t b = 0; b < split.size(); b += batch_size) {
    int64_t e = std::min(split.size(), b + batch_size);
    auto [x, y] = batch(split, order, b, e);
    std::vector<int32_t> pred = predict_({params_, x}).array().to_vector<int32_t>();
    for (int64_t i = 0; i < e - b; ++i) correct += pred[size_t(i)] == split.labels[size_t(b + i)];
  }
  return split.size() ? double(correct) / double(split.size()) : 0.0;
}

}  // namespace mnist
