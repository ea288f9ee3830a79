// Unrolling a reduction by the period of its index arithmetic: packed weights read word
// ridx // 8 shifted by (ridx % 8) * 4, and scale ridx // 32; with ridx = r * 32 + u for a
// constant u, every such division folds away, and the copies share their word and scale
// loads. The copies are folded in order u = 0, 1, ..., so the sum is the same sequence of
// roundings as the loop it replaces (code generators stay bit-exact to the cpu interpreter).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/alu_exp.h"

namespace kiln {

// The smallest period (a divisor of `size`, at most `max_period`) after which the Idiv/Mod
// nodes over ridx in `body` repeat: the lcm of their constant divisors; 1 when there are
// none, or when that lcm exceeds max_period or does not divide size.
int64_t reduction_period(const AluExp& body, int64_t size, int64_t max_period);

// The `period` copies of `body` at ridx = r * period + u (u = 0 .. period - 1), where r is
// the Ridx variable over [0, size / period), simplified and with equal subexpressions shared
// between the copies (one node for the word every u of the same r loads).
std::vector<AluExp> unroll_reduction(const AluExp& body, int64_t size, int64_t period);

// Rebuilds `roots` so that structurally equal nodes are one node (the same pointer).
std::vector<AluExp> share_equal_nodes(const std::vector<AluExp>& roots);

}  // namespace kiln
