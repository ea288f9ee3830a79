// Training and evaluation loops shared by kiln_mnist and the one-epoch test: a jitted
// Adam step (value_and_grad inside jit), batches shuffled each epoch with kiln::random.
#pragma once
#include <cstdint>
#include <functional>

#include "data.h"
#include "model.h"

namespace mnist {

class Trainer {
 public:
  // Initializes the parameters from PRNGKey(seed) and an optax Adam state; the learning
  // rate is a number or an optax schedule of the step count. `jit` false runs the step
  // eagerly, op by op (the leak tests and bench/leaks.cpp run both ways).
  Trainer(Model model, const kiln::optax::ScalarOrSchedule& learning_rate, int64_t seed,
          int64_t hidden = 128, bool jit = true);

  // One Adam step on a batch (images [b, 1, 28, 28], labels [b]); returns its loss.
  double train_step(const kiln::Array& x, const kiln::Array& y);

  // One pass over `split` in the order of random::permutation(fold_in(key, epoch)); the
  // last incomplete batch is dropped (a new shape would retrace the step). `progress` is
  // called after each step with (step, steps, the running mean loss so far).
  // Returns the epoch's mean training loss.
  using Progress = std::function<void(int64_t step, int64_t steps, double mean_loss)>;
  double train_epoch(const Split& split, int64_t batch_size, int epoch,
                     const Progress& progress = {});

  // Fraction of `split` classified correctly (argmax of the logits), in batches.
  double accuracy(const Split& split, int64_t batch_size = 1000);

  const kiln::Tree& params() const { return params_; }

 private:
  kiln::Array shuffle_key_;
  kiln::Tree params_, opt_state_;
  kiln::optax::GradientTransformation opt_;
  kiln::Fn step_, predict_;
  bool jit_;
};

}  // namespace mnist
