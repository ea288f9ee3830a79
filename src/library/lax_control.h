// kiln::lax control flow (JAX's lax.scan, while_loop, fori_loop, cond, switch, map) over
// pytrees. Bodies are traced once into closed jaxprs (arrays they close over, traced or
// not, are captured) and run compiled; every transformation applies (grad of while_loop
// throws, as in JAX). docs/ARCHITECTURE.md, "Control flow".
#pragma once
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "frontend/pytree.h"

namespace kiln::lax {

// f(carry, x) -> (carry, y); xs is a tree of arrays scanned along their leading axis (or
// None with `length` given). Returns (final carry, ys stacked along a new leading axis).
using ScanFn = std::function<std::pair<Tree, Tree>(const Tree& carry, const Tree& x)>;
std::pair<Tree, Tree> scan(const ScanFn& f, const Tree& init, const Tree& xs = Tree(),
                           std::optional<int64_t> length = std::nullopt, bool reverse = false, int unroll = 1);

// Runs body while cond(carry) is true; cond returns a bool scalar.
Tree while_loop(const std::function<Array(const Tree&)>& cond, const std::function<Tree(const Tree&)>& body,
                const Tree& init);

// body(i, x) for i in [lower, upper): a scan when the bounds are numbers (reverse-mode
// differentiable), a while loop when they are arrays.
using ForiFn = std::function<Tree(const Array& i, const Tree& x)>;
Tree fori_loop(int64_t lower, int64_t upper, const ForiFn& body, const Tree& init);
Tree fori_loop(const Array& lower, const Array& upper, const ForiFn& body, const Tree& init);

// true_fn(operands...) if pred else false_fn(operands...); both return the same types.
using BranchFn = std::function<Tree(const std::vector<Tree>& operands)>;
Tree cond(const Array& pred, const BranchFn& true_fn, const BranchFn& false_fn, const std::vector<Tree>& operands);
// branches[clamp(index, 0, n - 1)](operands...).
Tree switch_(const Array& index, const std::vector<BranchFn>& branches, const std::vector<Tree>& operands);

// f over the leading axis of xs (a scan without a carry).
Tree map(const std::function<Tree(const Tree&)>& f, const Tree& xs);

// Flat forms over leaf lists, for callers that flatten their own trees (the JS API):
// body(carry..., x...) -> (carry..., y...); cond(carry...) -> {bool[]}; branches(operands...).
using ArraysFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
std::vector<Array> scan_flat(const ArraysFn& body, const std::vector<Array>& init, const std::vector<Array>& xs,
                             int64_t length, bool reverse = false, int unroll = 1);
std::vector<Array> while_flat(const ArraysFn& cond, const ArraysFn& body, const std::vector<Array>& init);
std::vector<Array> switch_flat(const Array& index, const std::vector<ArraysFn>& branches,
                               const std::vector<Array>& operands);

}  // namespace kiln::lax
