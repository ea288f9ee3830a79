// kiln::lax::detail::conv_layout_perms: JAX's convolution dimension numbers (layout strings
// such as "NHWC", "HWIO") parsed into axis permutations, with no Array (fuzzed natively).
#pragma once
#include <string>
#include <vector>

namespace kiln::lax::detail {

// Permutations taking lhs/rhs/out to N,C,spatial / O,I,spatial order, with spatial dims in
// the order of the rhs layout string (as JAX's conv_general_permutations).
struct ConvPerms {
  std::vector<int> lhs, rhs, out;
};

// Three empty strings mean the default N, C, spatial... (O, I, spatial... for rhs). Throws
// kiln::Error("conv_general_dilated: ...") for a layout whose length is not nd, that lacks
// or repeats N/C (O/I), repeats a letter, or whose spatial letters differ between the three.
ConvPerms conv_layout_perms(const std::string& lhs, const std::string& rhs,
                            const std::string& out, int nd);

}  // namespace kiln::lax::detail
