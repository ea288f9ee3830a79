// optax's gradient transformations and optimizers over kiln::Tree, following optax 0.2.8's
// formulas operation by operation so results match it step for step.
#include "library/optax.h"

#include <cmath>
#include <limits>

#include "library/array_args.h"
#include "library/numpy.h"

namespace kiln::optax {

namespace np = kiln::numpy;

namespace {

using Map1 = std::function<Array(const Array&)>;
using Map2 = std::function<Array(const Array&, const Array&)>;

Tree map1(const Tree& a, const Map1& f) { return tree_map(f, a); }
Tree map2(const Tree& a, const Tree& b, const Map2& f) { return tree_map(f, a, b); }
Tree map3(const Tree& a, const Tree& b, const Tree& c,
          const std::function<Array(const Array&, const Array&, const Array&)>& f) {
  auto [la, def] = tree_flatten(a);
  auto [lb, defb] = tree_flatten(b);
  auto [lc, defc] = tree_flatten(c);
  if (!(def == defb) || !(def == defc))
    fail("optax", "got trees of different structures ", def.str(), ", ", defb.str(), ", ",
         defc.str());
  std::vector<Array> out;
  for (size_t i = 0; i < la.size(); ++i) out.push_back(f(la[i], lb[i], lc[i]));
  return tree_unflatten(def, out);
}

Array zeros_count() { return np::zeros({}, int32); }
// optax's numerics.safe_increment: stops at the largest int32 instead of wrapping.
Array safe_increment(const Array& count) {
  return np::where(count < Array(std::numeric_limits<int32_t>::max()), count + Array(1), count);
}
// A number in a leaf's dtype (jnp.array(v, dtype=g.dtype)).
Array as(const Array& like, const Array& v) {
  return v.dtype() == like.dtype() ? v : v.astype(like.dtype());
}

Tree update_moment(const Tree& g, const Tree& m, double decay, int order) {
  return map2(g, m, [=](const Array& g, const Array& t) {
    Array p = order == 1 ? g : g * g;
    return Array(1 - decay) * p + Array(decay) * t;
  });
}

// moment / (1 - decay^count), the correction for moments started at zero. The weak decay
// meets the int32 count and is rounded to float32 there, as in JAX (1 - 0.999^t cancels, so
// the rounding shows).
Tree bias_correction(const Tree& m, double decay, const Array& count) {
  return map1(m, [&](const Array& t) { return t / (Array(1.0) - np::power(Array(decay), count)); });
}

Tree full_like(const Tree& params, double v) {
  return map1(params, [v](const Array& p) { return np::full_like(p, v); });
}

Tree empty() { return Tree::List{}; }

// The transformation with its init and update naming `op` in their errors ("adam: tree_map:
// the trees have different structures ..."): they run long after the factory returned.
GradientTransformation named(const char* op, GradientTransformation gt) {
  auto init = gt.init;
  auto update = gt.update;
  return {[op, init](const Tree& p) { return with_name(op, [&] { return init(p); }); },
          [op, update](const Tree& u, const Tree& s, const Tree& p) {
            return with_name(op, [&] { return update(u, s, p); });
          }};
}

}  // namespace

Tree apply_updates(const Tree& params, const Tree& updates) {
  return with_name("apply_updates", [&]() -> Tree {
    return map2(params, updates,
                [](const Array& p, const Array& u) { return (p + u).astype(p.dtype()); });
  });
}

GradientTransformation identity() {
  return named("identity", [&]() -> GradientTransformation {
    return {[](const Tree&) { return empty(); },
            [](const Tree& u, const Tree& s, const Tree&) {
              return std::pair{u, s};
            }};
  }());
}

GradientTransformation chain(const std::vector<GradientTransformation>& ts) {
  return named("chain", [&]() -> GradientTransformation {
    return {[ts](const Tree& params) {
              Tree::List states;
              for (const auto& t : ts) states.push_back(t.init(params));
              return Tree(states);
            },
            [ts](const Tree& updates, const Tree& state, const Tree& params) {
              if (!state.is_list() || state.size() != ts.size())
                fail("chain", "got a state ", state.kind(), ", expected a list of ", ts.size(),
                     " states from its init");
              Tree u = updates;
              Tree::List states;
              for (size_t i = 0; i < ts.size(); ++i) {
                auto [nu, ns] = ts[i].update(u, state[i], params);
                u = nu;
                states.push_back(ns);
              }
              return std::pair{u, Tree(states)};
            }};
  }());
}

GradientTransformation scale(double step_size) {
  return named("scale", [&]() -> GradientTransformation {
    return {[](const Tree&) { return empty(); },
            [step_size](const Tree& u, const Tree& s, const Tree&) {
              return std::pair{map1(u, [&](const Array& g) { return Array(step_size) * g; }), s};
            }};
  }());
}

GradientTransformation scale_by_schedule(const Schedule& fn) {
  return named("scale_by_schedule", [&]() -> GradientTransformation {
    return {[](const Tree&) {
              return Tree(Tree::Dict{{"count", zeros_count()}});
            },
            [fn](const Tree& u, const Tree& s, const Tree&) {
              Array count = s["count"].array();
              Array step = fn(count);
              Tree out = map1(u, [&](const Array& g) { return as(g, step) * g; });
              return std::pair{out, Tree(Tree::Dict{{"count", safe_increment(count)}})};
            }};
  }());
}

GradientTransformation scale_by_learning_rate(const ScalarOrSchedule& lr, bool flip_sign) {
  return named("scale_by_learning_rate", [&]() -> GradientTransformation {
    double m = flip_sign ? -1.0 : 1.0;
    if (lr.is_schedule())
      return scale_by_schedule([lr, m](const Array& count) { return Array(m) * lr.at(count); });
    return scale(m * lr.value());
  }());
}

GradientTransformation scale_by_adam(double b1, double b2, double eps, double eps_root) {
  return named("scale_by_adam", [&]() -> GradientTransformation {
    return {
        [](const Tree& params) {
          return Tree(Tree::Dict{
              {"count", zeros_count()}, {"mu", full_like(params, 0)}, {"nu", full_like(params, 0)}});
        },
        [=](const Tree& u, const Tree& s, const Tree&) {
          Tree mu = update_moment(u, s["mu"], b1, 1);
          Tree nu = update_moment(u, s["nu"], b2, 2);
          Array count = safe_increment(s["count"].array());
          Tree mu_hat = bias_correction(mu, b1, count), nu_hat = bias_correction(nu, b2, count);
          Tree out = map2(mu_hat, nu_hat, [=](const Array& m, const Array& v) {
            return m / (np::sqrt(v + Array(eps_root)) + Array(eps));
          });
          return std::pair{out, Tree(Tree::Dict{{"count", count}, {"mu", mu}, {"nu", nu}})};
        }};
  }());
}

GradientTransformation scale_by_rms(double decay, double eps, double initial_scale,
                                    bool eps_in_sqrt) {
  return named("scale_by_rms", [&]() -> GradientTransformation {
    return {[initial_scale](const Tree& params) {
              return Tree(Tree::Dict{{"nu", full_like(params, initial_scale)}});
            },
            [=](const Tree& u, const Tree& s, const Tree&) {
              Tree nu = update_moment(u, s["nu"], decay, 2);
              Tree out = map2(nu, u, [=](const Array& n, const Array& g) {
                Array scaling =
                    eps_in_sqrt ? np::rsqrt(n + Array(eps)) : Array(1.0) / (np::sqrt(n) + Array(eps));
                return scaling * g;
              });
              return std::pair{out, Tree(Tree::Dict{{"nu", nu}})};
            }};
  }());
}

GradientTransformation scale_by_stddev(double decay, double eps, double initial_scale) {
  return named("scale_by_stddev", [&]() -> GradientTransformation {
    return {[initial_scale](const Tree& params) {
              return Tree(
                  Tree::Dict{{"mu", full_like(params, 0)}, {"nu", full_like(params, initial_scale)}});
            },
            [=](const Tree& u, const Tree& s, const Tree&) {
              Tree mu = update_moment(u, s["mu"], decay, 1);
              Tree nu = update_moment(u, s["nu"], decay, 2);
              Tree out = map3(mu, nu, u, [=](const Array& m, const Array& n, const Array& g) {
                return np::rsqrt(n - np::square(m) + Array(eps)) * g;
              });
              return std::pair{out, Tree(Tree::Dict{{"mu", mu}, {"nu", nu}})};
            }};
  }());
}

GradientTransformation trace(double decay, bool nesterov) {
  return named("trace", [&]() -> GradientTransformation {
    return {[](const Tree& params) {
              return Tree(Tree::Dict{{"trace", full_like(params, 0)}});
            },
            [=](const Tree& u, const Tree& s, const Tree&) {
              auto f = [decay](const Array& g, const Array& t) { return g + Array(decay) * t; };
              Tree new_trace = map2(u, s["trace"], f);
              Tree out = nesterov ? map2(u, new_trace, f) : new_trace;
              return std::pair{out, Tree(Tree::Dict{{"trace", new_trace}})};
            }};
  }());
}

GradientTransformation add_decayed_weights(double weight_decay) {
  return named("add_decayed_weights", [&]() -> GradientTransformation {
    return {[](const Tree&) { return empty(); },
            [weight_decay](const Tree& u, const Tree& s, const Tree& params) {
              if (params.is_none())
                fail("add_decayed_weights", "got params None, expected the parameters");
              return std::pair{
                  map2(u, params,
                       [&](const Array& g, const Array& p) { return g + Array(weight_decay) * p; }),
                  s};
            }};
  }());
}

Array global_norm(const Tree& updates) {
  return with_name("global_norm", [&]() -> Array {
    Array total = np::zeros({});
    bool first = true;
    for (const Array& x : tree_leaves(updates)) {
      Array s = np::sum(x * x);
      total = first ? s : total + s;
      first = false;
    }
    return np::sqrt(total);
  });
}

GradientTransformation clip_by_global_norm(double max_norm) {
  return named("clip_by_global_norm", [&]() -> GradientTransformation {
    return {[](const Tree&) { return empty(); },
            [max_norm](const Tree& u, const Tree& s, const Tree&) {
              Array g_norm = global_norm(u);
              Array trigger = g_norm < Array(max_norm);
              Tree out = map1(u, [&](const Array& t) {
                return np::where(trigger, t, (t / as(t, g_norm)) * Array(max_norm));
              });
              return std::pair{out, s};
            }};
  }());
}

GradientTransformation clip(double max_delta) {
  return named("clip", [&]() -> GradientTransformation {
    return {[](const Tree&) { return empty(); },
            [max_delta](const Tree& u, const Tree& s, const Tree&) {
              return std::pair{map1(u,
                                    [&](const Array& g) {
                                      return np::clip(g, Array(-max_delta), Array(max_delta));
                                    }),
                               s};
            }};
  }());
}

GradientTransformation sgd(const ScalarOrSchedule& lr, std::optional<double> momentum,
                           bool nesterov) {
  return named("sgd", [&]() -> GradientTransformation { return chain({momentum ? trace(*momentum, nesterov) : identity(), scale_by_learning_rate(lr)}); }());
}

GradientTransformation adam(const ScalarOrSchedule& lr, double b1, double b2, double eps,
                            double eps_root) {
  return named("adam", [&]() -> GradientTransformation { return chain({scale_by_adam(b1, b2, eps, eps_root), scale_by_learning_rate(lr)}); }());
}

GradientTransformation adamw(const ScalarOrSchedule& lr, double b1, double b2, double eps,
                             double eps_root, double weight_decay) {
  return named("adamw", [&]() -> GradientTransformation {
    return chain({scale_by_adam(b1, b2, eps, eps_root), add_decayed_weights(weight_decay),
                  scale_by_learning_rate(lr)});
  }());
}

GradientTransformation rmsprop(const ScalarOrSchedule& lr, double decay, double eps,
                               double initial_scale, bool eps_in_sqrt, bool centered,
                               std::optional<double> momentum, bool nesterov) {
  return named("rmsprop", [&]() -> GradientTransformation {
    GradientTransformation pre = centered ? scale_by_stddev(decay, eps, initial_scale)
                                          : scale_by_rms(decay, eps, initial_scale, eps_in_sqrt);
    return chain(
        {pre, scale_by_learning_rate(lr), momentum ? trace(*momentum, nesterov) : identity()});
  }());
}

}  // namespace kiln::optax
