// kiln::numpy::detail::parse_einsum: einsum's subscripts parsed and checked against the
// operands' shapes, with no Array involved (so it is fuzzed natively: fuzz/einsum_fuzz.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::numpy::detail {

// Letters are labelled by their character code; ellipsis axes get kEinsumEllipsis + k, the
// k-th of the broadcast ellipsis axes counted from the left (right-aligned across operands).
constexpr int kEinsumEllipsis = 1000;

struct EinsumSpec {
  std::vector<std::vector<int>> labels;  // one label per axis of each operand
  std::vector<int> out;                  // the result's axes
};

// Parses `subscripts` (whitespace ignored; letters, ',', '->', '...') for operands of the
// given shapes. Throws kiln::Error("einsum: ...") for a bad character, a stray '.', two
// ellipses in a term, a term count or rank that does not match the operands, an output
// letter missing from the inputs or given twice, and sizes of one label that differ (and
// are not 1 in different operands).
EinsumSpec parse_einsum(const std::string& subscripts,
                        const std::vector<std::vector<int64_t>>& shapes);

// "..." for an ellipsis label, the letter otherwise (for messages).
std::string einsum_label_name(int label);

}  // namespace kiln::numpy::detail
