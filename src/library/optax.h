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
  ScalarOrSchedule(double v) : value_(v) {}
  template <typename F>
  requires(std::is_invocable_r_v<Array, F, const Array&> && !std::is_arithmetic_v<F>)
      ScalarOrSchedule(F f)
      : schedule_(Schedule(std::move(f))) {}
  bool is_schedule() const { return bool(schedule_); }
  Array at(const Array& count) const { return schedule_ ? schedule_(count) : Array(value_); }
  double value() const { return value_; }

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
GradientTransformation identity();
GradientTransformation chain(const std::vector<GradientTransformation>& transforms);
GradientTransformation scale(double step_size);
GradientTransformation scale_by_schedule(const Schedule& step_size_fn);
// -lr (flip_sign) as a constant scale or a schedule over the step count.
GradientTransformation scale_by_learning_rate(const ScalarOrSchedule& learning_rate,
                                              bool flip_sign = true);
GradientTransformation scale_by_adam(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                                     double eps_root = 0.0);
GradientTransformation scale_by_rms(double decay = 0.9, double eps = 1e-8,
                                    double initial_scale = 0.0, bool eps_in_sqrt = true);
GradientTransformation scale_by_stddev(double decay = 0.9, double eps = 1e-8,
                                       double initial_scale = 0.0);
// Momentum: t = g + decay * t; nesterov returns g + decay * t_new.
GradientTransformation trace(double decay, bool nesterov = false);
GradientTransformation add_decayed_weights(double weight_decay = 0.0);
// Scales all updates by max_norm / global_norm when the global L2 norm exceeds max_norm.
GradientTransformation clip_by_global_norm(double max_norm);
GradientTransformation clip(double max_delta);
Array global_norm(const Tree& updates);

// ---- optimizers ----
GradientTransformation sgd(const ScalarOrSchedule& learning_rate,
                           std::optional<double> momentum = std::nullopt, bool nesterov = false);
GradientTransformation adam(const ScalarOrSchedule& learning_rate, double b1 = 0.9,
                            double b2 = 0.999, double eps = 1e-8, double eps_root = 0.0);
GradientTransformation adamw(const ScalarOrSchedule& learning_rate, double b1 = 0.9,
                             double b2 = 0.999, double eps = 1e-8, double eps_root = 0.0,
                             double weight_decay = 1e-4);
GradientTransformation rmsprop(const ScalarOrSchedule& learning_rate, double decay = 0.9,
                               double eps = 1e-8, double initial_scale = 0.0,
                               bool eps_in_sqrt = true, bool centered = false,
                               std::optional<double> momentum = std::nullopt,
                               bool nesterov = false);

// ---- schedules (optax.schedules) ----
Schedule constant_schedule(double value);
Schedule polynomial_schedule(double init_value, double end_value, double power,
                             int64_t transition_steps, int64_t transition_begin = 0);
Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps,
                         int64_t transition_begin = 0);
Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha = 0.0,
                               double exponent = 1.0);
Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate,
                           int64_t transition_begin = 0, bool staircase = false,
                           std::optional<double> end_value = std::nullopt);
// Multiplies init_value by each scale once the count passes its boundary.
Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<int64_t, double>& boundaries_and_scales = {});
Schedule join_schedules(const std::vector<Schedule>& schedules,
                        const std::vector<int64_t>& boundaries);
Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                      int64_t decay_steps, double end_value = 0.0,
                                      double exponent = 1.0);

}  // namespace kiln::optax
