// kiln::optax: optax's API over kiln::Tree pytrees: gradient transformations (init/update),
// the common optimizers, gradient clipping, learning-rate schedules and apply_updates.
#pragma once
#include <concepts>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "frontend/pytree.h"

namespace kiln::optax {

// A schedule maps the step count (an int32 scalar, starting at 0) to a value.
using Schedule = std::function<Array(const Array& count)>;

// A learning rate (or any hyperparameter optax accepts as "ScalarOrSchedule"): a number or a
// schedule, evaluated at the transformation's step count.
class ScalarOrSchedule {
 public:
  ScalarOrSchedule(double v) : value_(v) {}  // a constant
  // A schedule: any callable from the count Array to an Array.
  template <typename F>
  requires(std::is_invocable_r_v<Array, F, const Array&> && !std::is_arithmetic_v<F>)
      ScalarOrSchedule(F f)
      : schedule_(Schedule(std::move(f))) {}
  bool is_schedule() const { return bool(schedule_); }  // false for a constant
  // The value at step `count`.
  Array at(const Array& count) const { return schedule_ ? schedule_(count) : Array(value_); }
  double value() const { return value_; }  // the constant (0 for a schedule)

 private:
  double value_ = 0;
  Schedule schedule_;
};

// optax.GradientTransformation: init(params) -> state; update(updates, state, params) ->
// (new updates, new state). States are Trees (dicts named like optax's NamedTuple fields,
// lists for chains, empty lists for stateless steps); params may be None where unused.
struct GradientTransformation {
  std::function<Tree(const Tree& params)> init;
  std::function<std::pair<Tree, Tree>(const Tree& updates, const Tree& state, const Tree& params)>
      update;
};

// params + updates, leaf by leaf, cast back to each param's dtype.
Tree apply_updates(const Tree& params, const Tree& updates);

// ---- building blocks ----
GradientTransformation identity();  // updates unchanged, no state
// The transformations applied in order; the state is the list of their states.
GradientTransformation chain(const std::vector<GradientTransformation>& transforms);
GradientTransformation scale(double step_size);  // updates * step_size
// updates * step_size_fn(count), the count advancing each update.
GradientTransformation scale_by_schedule(const Schedule& step_size_fn);
// -lr (flip_sign) as a constant scale or a schedule over the step count.
GradientTransformation scale_by_learning_rate(const ScalarOrSchedule& learning_rate,
                                              bool flip_sign = true);
// Adam's rescaling: bias-corrected first moment over sqrt(second moment + eps_root) + eps.
GradientTransformation scale_by_adam(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                                     double eps_root = 0.0);
// RMSProp's rescaling: updates / sqrt(EMA of squared updates) (eps inside or outside the sqrt).
GradientTransformation scale_by_rms(double decay = 0.9, double eps = 1e-8,
                                    double initial_scale = 0.0, bool eps_in_sqrt = true);
// Centered RMSProp's: updates / sqrt(EMA of squares - square of EMA + eps).
GradientTransformation scale_by_stddev(double decay = 0.9, double eps = 1e-8,
                                       double initial_scale = 0.0);
// Momentum: t = g + decay * t; nesterov returns g + decay * t_new.
GradientTransformation trace(double decay, bool nesterov = false);

// updates + weight_decay * params (decoupled weight decay, AdamW's).
GradientTransformation add_decayed_weights(double weight_decay = 0.0);
// Scales all updates by max_norm / global_norm when the global L2 norm exceeds max_norm.
GradientTransformation clip_by_global_norm(double max_norm);

GradientTransformation clip(double max_delta);  // each update clipped to [-max_delta, max_delta]
Array global_norm(const Tree& updates);  // the L2 norm of all leaves together

// ---- optimizers ----
// Stochastic gradient descent, with (Nesterov) momentum when `momentum` is given.
GradientTransformation sgd(const ScalarOrSchedule& learning_rate,
                           std::optional<double> momentum = std::nullopt, bool nesterov = false);
// Adam, as optax.adam builds it: scale_by_adam, then -learning_rate. Example:
//   optax::GradientTransformation opt = optax::adam(1e-3);
//   Tree state = opt.init(params);
//   auto [updates, next] = opt.update(grads, state, params);
//   params = optax::apply_updates(params, updates);
GradientTransformation adam(const ScalarOrSchedule& learning_rate, double b1 = 0.9,
                            double b2 = 0.999, double eps = 1e-8, double eps_root = 0.0);
// AdamW: Adam with decoupled weight decay (add_decayed_weights before the learning rate).
GradientTransformation adamw(const ScalarOrSchedule& learning_rate, double b1 = 0.9,
                             double b2 = 0.999, double eps = 1e-8, double eps_root = 0.0,
                             double weight_decay = 1e-4);
// RMSProp (centered: scale_by_stddev), with optional (Nesterov) momentum.
GradientTransformation rmsprop(const ScalarOrSchedule& learning_rate, double decay = 0.9,
                               double eps = 1e-8, double initial_scale = 0.0,
                               bool eps_in_sqrt = true, bool centered = false,
                               std::optional<double> momentum = std::nullopt,
                               bool nesterov = false);

// ---- schedules (optax.schedules) ----
Schedule constant_schedule(double value);  // `value` at every step
// init -> end along (1 - t / transition_steps)^power after transition_begin, then end_value.
Schedule polynomial_schedule(double init_value, double end_value, double power,
                             int64_t transition_steps, int64_t transition_begin = 0);
// polynomial_schedule with power 1.
Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps,
                         int64_t transition_begin = 0);
// init * ((1 - alpha) * (0.5 * (1 + cos(pi * min(t, steps) / steps)))^exponent + alpha), steps =
// decay_steps.
Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha = 0.0,
                               double exponent = 1.0);
// init * decay_rate^((t - transition_begin) / transition_steps) (whole steps with staircase),
// bounded by end_value when given.
Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate,
                           int64_t transition_begin = 0, bool staircase = false,
                           std::optional<double> end_value = std::nullopt);
// Multiplies init_value by each scale once the count passes its boundary.
Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<int64_t, double>& boundaries_and_scales = {});
// schedules[i] from boundaries[i - 1] on, each counting from its own boundary.
Schedule join_schedules(const std::vector<Schedule>& schedules,
                        const std::vector<int64_t>& boundaries);
// A linear warmup from init to peak over warmup_steps, then a cosine decay to end_value
// (decay_steps counts the warmup too).
Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                      int64_t decay_steps, double end_value = 0.0,
                                      double exponent = 1.0);

}  // namespace kiln::optax
