// kiln's composable transformations (JAX's API): jvp, linearize, vjp, grad, value_and_grad,
// vmap, jacfwd, jacrev, hessian, stop_gradient, custom_jvp, custom_vjp and checkpoint, over pytrees.
#pragma once
#include <functional>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "frontend/pytree.h"

namespace kiln {

// A transformable function: positional arguments in, one tree out (return a Tree::List
// for several outputs). Transformations return functions of the same type, so they nest.
using Fn = std::function<Tree(const std::vector<Tree>&)>;
// The common case of one array in and one array out.
using ArrayFn = std::function<Array(const Array&)>;

// Which positional arguments to differentiate: an int gives that argument's gradient; a
// list gives a Tree::List of gradients (JAX's int vs tuple argnums). Negative counts from the end.
struct Argnums {
  Argnums(int i) : nums{i}, tuple(false) {}  // one argument: its gradient alone
  Argnums(std::initializer_list<int> l) : nums(l), tuple(true) {}  // a List of gradients
  Argnums(std::vector<int> v) : nums(std::move(v)), tuple(true) {}  // a List of gradients
  std::vector<int> nums;
  bool tuple;
};

// (f(primals), the directional derivative along tangents). Tangents match primals in
// structure, shape and dtype; those of int/bool leaves are ignored (zero).
std::pair<Tree, Tree> jvp(const Fn& f, const std::vector<Tree>& primals,
                          const std::vector<Tree>& tangents);
std::pair<Array, Array> jvp(const ArrayFn& f, const Array& x, const Array& t);

// (f(primals), the linear map tangents -> output tangent), evaluated once.
std::pair<Tree, Fn> linearize(const Fn& f, const std::vector<Tree>& primals);
std::pair<Array, ArrayFn> linearize(const ArrayFn& f, const Array& x);

// f's output, its pullback (output cotangent -> one cotangent tree per argument) and,
// with has_aux (f returns List{out, aux}), the aux tree (not differentiated).
struct VjpResult {
  Tree out;
  std::function<std::vector<Tree>(const Tree&)> pullback;
  Tree aux;
};
VjpResult vjp(const Fn& f, const std::vector<Tree>& primals, bool has_aux = false);  // see VjpResult
std::pair<Array, ArrayFn> vjp(const ArrayFn& f, const Array& x);  // (f(x), pullback)

// The gradient of a scalar-output f. With has_aux, f returns List{out, aux} and the
// result is List{grads, aux}. kiln::Error when f's output is not a scalar. Example:
//   ArrayFn df = grad([](const Array& x) { return numpy::sum(x * x); });
//   Array g = df(numpy::array(std::vector<float>{1, 2}, {2}));  // [2, 4]
Fn grad(const Fn& f, Argnums argnums = 0, bool has_aux = false);
ArrayFn grad(const ArrayFn& f);
// List{value, grads}; with has_aux, List{List{value, aux}, grads}.
Fn value_and_grad(const Fn& f, Argnums argnums = 0, bool has_aux = false);
std::function<std::pair<Array, Array>(const Array&)> value_and_grad(const ArrayFn& f);

// Maps f over an axis of its arguments. in_axes: one spec for all arguments or a
// Tree::List with one per argument; each spec is a tree prefix of the argument whose leaves
// are an axis (int, negative from the end) or None (std::nullopt: not mapped). out_axes
// likewise for the output (None: the output must not depend on the mapped axis).
Fn vmap(const Fn& f, Tree in_axes = 0, Tree out_axes = 0);
ArrayFn vmap(const ArrayFn& f, int in_axis = 0, int out_axis = 0);

// Jacobians: for each output leaf of shape O and input leaf of shape I, an array of shape
// O + I, arranged as the output tree with the input tree (or a List per argnum) at its leaves.
Fn jacfwd(const Fn& f, Argnums argnums = 0);
Fn jacrev(const Fn& f, Argnums argnums = 0);
Fn hessian(const Fn& f, Argnums argnums = 0);  // jacfwd(jacrev(f))
ArrayFn jacfwd(const ArrayFn& f);
ArrayFn jacrev(const ArrayFn& f);
ArrayFn hessian(const ArrayFn& f);

// The identity, with zero derivative.
Array stop_gradient(const Array& x);
Tree stop_gradient(const Tree& x);

// f with its jvp replaced by rule(primals, tangents) -> (outputs, output tangents).
using CustomJvpRule =
    std::function<std::pair<Tree, Tree>(const std::vector<Tree>&, const std::vector<Tree>&)>;
Fn custom_jvp(const Fn& f, const CustomJvpRule& rule);
ArrayFn custom_jvp(const ArrayFn& f,
                   const std::function<std::pair<Array, Array>(const Array&, const Array&)>& rule);
// f with its vjp replaced: fwd(args) -> (outputs, residuals); bwd(residuals, output
// cotangent) -> one cotangent per argument (None: zero). Reverse mode only, as in JAX.
using CustomFwd = std::function<std::pair<Tree, Tree>(const std::vector<Tree>&)>;
using CustomBwd = std::function<std::vector<Tree>(const Tree&, const Tree&)>;
Fn custom_vjp(const Fn& f, const CustomFwd& fwd, const CustomBwd& bwd);
ArrayFn custom_vjp(const ArrayFn& f, const std::function<std::pair<Array, Tree>(const Array&)>& fwd,
                   const std::function<Array(const Tree&, const Array&)>& bwd);

// What checkpoint saves for the backward pass (JAX's jax.checkpoint_policies): nothing
// (the default: every intermediate is recomputed from the function's inputs), the results
// of contractions (matmuls, JAX's dot_general outputs), or everything (no recomputation).
enum class CheckpointPolicy { NothingSaveable, DotsSaveable, EverythingSaveable };
namespace checkpoint_policies {
inline constexpr CheckpointPolicy nothing_saveable = CheckpointPolicy::NothingSaveable;  // recompute all
inline constexpr CheckpointPolicy dots_saveable = CheckpointPolicy::DotsSaveable;  // keep matmul results
inline constexpr CheckpointPolicy everything_saveable = CheckpointPolicy::EverythingSaveable;  // recompute none
}  // namespace checkpoint_policies

// f, rematerialized (JAX's jax.checkpoint): same values and derivatives, but reverse mode
// (grad, vjp, linearize) keeps only what `policy` saves from f's forward pass and
// recomputes the rest from f's inputs during the backward pass, trading compute for
// memory. Checkpoint each layer of a deep network to keep one activation per layer alive
// instead of all of its intermediates. Composes with jit, vmap, jvp and nesting.
Fn checkpoint(const Fn& f, CheckpointPolicy policy = CheckpointPolicy::NothingSaveable);
ArrayFn checkpoint(const ArrayFn& f, CheckpointPolicy policy = CheckpointPolicy::NothingSaveable);
// Another name for checkpoint, as in JAX.
Fn remat(const Fn& f, CheckpointPolicy policy = CheckpointPolicy::NothingSaveable);
ArrayFn remat(const ArrayFn& f, CheckpointPolicy policy = CheckpointPolicy::NothingSaveable);

}  // namespace kiln
