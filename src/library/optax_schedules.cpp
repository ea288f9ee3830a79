// optax.schedules: functions of the step count (an int32 scalar) giving a learning rate,
// written with numpy ops so they run inside jit and grad like the rest of an update.
#include <cmath>

#include "library/numpy.h"
#include "library/optax.h"

namespace kiln::optax {

namespace np = kiln::numpy;

namespace {

// The schedules compute in float32 from the start: every optax schedule turns the int32
// count into float32 in its first operation (count / steps, pi * count, rate ** count).
Array float_count(const Array& count) {
  return is_float(count.dtype()) ? count : count.astype(float32);
}

}  // namespace

Schedule constant_schedule(double value) {
  return with_name("constant_schedule", [&]() -> Schedule { return [value](const Array&) { return Array(value); }; });
}

Schedule polynomial_schedule(double init_value, double end_value, double power,
                             int64_t transition_steps, int64_t transition_begin) {
  return with_name("polynomial_schedule", [&]() -> Schedule {
    // optax: a non-positive transition gives a constant, a negative begin counts from 0.
    if (transition_steps <= 0) return constant_schedule(init_value);
    if (transition_begin < 0) transition_begin = 0;
    return [=](const Array& count_in) {
      Array count = float_count(count_in);
      Array c =
          np::clip(count - Array(int(transition_begin)), Array(0), Array(int(transition_steps)));
      Array frac = Array(1.0) - c / Array(int(transition_steps));
      return Array(init_value - end_value) * np::power(frac, Array(power)) + Array(end_value);
    };
  });
}

Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps,
                         int64_t transition_begin) {
  return with_name("linear_schedule", [&]() -> Schedule {
    if (transition_steps <= 0) return constant_schedule(init_value);
    if (transition_begin < 0) transition_begin = 0;
    // power 1: optax raises frac to the int 1, which is frac itself.
    return [=](const Array& count_in) {
      Array count = float_count(count_in);
      Array c =
          np::clip(count - Array(int(transition_begin)), Array(0), Array(int(transition_steps)));
      Array frac = Array(1.0) - c / Array(int(transition_steps));
      return Array(init_value - end_value) * frac + Array(end_value);
    };
  });
}

Schedule cosine_decay_schedule(double init_value, int64_t decay_steps, double alpha,
                               double exponent) {
  return with_name("cosine_decay_schedule", [&]() -> Schedule {
    if (decay_steps <= 0)
      fail("cosine_decay_schedule", "got decay_steps = ", decay_steps, ", expected > 0");
    return [=](const Array& count_in) {
      Array count = float_count(count_in);
      // optax converts an int decay_steps to a Python float.
      Array c = np::minimum(count, Array(double(decay_steps)));
      Array cosine =
          Array(0.5) * (Array(1.0) + np::cos(Array(M_PI) * c / Array(double(decay_steps))));
      Array decayed =
          Array(1 - alpha) * (exponent == 1.0 ? cosine : np::power(cosine, Array(exponent))) +
          Array(alpha);
      return Array(init_value) * decayed;
    };
  });
}

Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate,
                           int64_t transition_begin, bool staircase,
                           std::optional<double> end_value) {
  return with_name("exponential_decay", [&]() -> Schedule {
    if (transition_steps <= 0 || decay_rate == 0) return constant_schedule(init_value);
    if (transition_begin < 0) transition_begin = 0;
    return [=](const Array& count_in) {
      Array count = float_count(count_in);
      Array decreased = count - Array(int(transition_begin));
      Array p = decreased / Array(int(transition_steps));
      if (staircase) p = np::floor(p);
      Array v = np::where(decreased <= Array(0), Array(init_value),
                          Array(init_value) * np::power(Array(decay_rate), p));
      if (end_value)
        v = decay_rate < 1.0 ? np::maximum(v, Array(*end_value)) : np::minimum(v, Array(*end_value));
      return v;
    };
  });
}

Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<int64_t, double>& boundaries_and_scales) {
  return with_name("piecewise_constant_schedule", [&]() -> Schedule {
    for (const auto& [b, s] : boundaries_and_scales)
      if (s < 0)
        fail("piecewise_constant_schedule", "got scale ", s, " at boundary ", b,
             ", expected non-negative scales");
    return [=](const Array& count_in) {
      Array count = float_count(count_in);
      Array v(init_value);
      for (const auto& [threshold, sc] : boundaries_and_scales) {
        Array indicator = np::maximum(Array(0.0), np::sign(Array(int(threshold)) - count));
        v = v * indicator + (Array(1.0) - indicator) * Array(sc) * v;
      }
      return v;
    };
  });
}

Schedule join_schedules(const std::vector<Schedule>& schedules,
                        const std::vector<int64_t>& boundaries) {
  return with_name("join_schedules", [&]() -> Schedule {
    if (schedules.empty() || boundaries.size() + 1 != schedules.size())
      fail("join_schedules", "got ", schedules.size(), " schedules and ", boundaries.size(),
           " boundaries, expected one boundary fewer than schedules");
    return [=](const Array& step) {
      Array out = schedules[0](step);
      for (size_t i = 0; i < boundaries.size(); ++i)
        out = np::where(step < Array(int(boundaries[i])), out,
                        schedules[i + 1](step - Array(int(boundaries[i]))));
      return out;
    };
  });
}

Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int64_t warmup_steps,
                                      int64_t decay_steps, double end_value, double exponent) {
  return with_name("warmup_cosine_decay_schedule", [&]() -> Schedule {
    double alpha = peak_value == 0 ? 0.0 : end_value / peak_value;
    return join_schedules(
        {linear_schedule(init_value, peak_value, warmup_steps),
         cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)},
        {warmup_steps});
  });
}

}  // namespace kiln::optax
