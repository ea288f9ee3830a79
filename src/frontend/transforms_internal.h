// Shared plumbing of the public transformations: pytree arguments flattened to the flat
// Array functions that the traces transform, and argument/result checks with clear errors.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "frontend/trace.h"
#include "frontend/transforms.h"

namespace kiln::frontend::detail {

struct FlatArgs {
  std::vector<Array> leaves;
  std::vector<TreeDef> defs;  // one per argument
};
FlatArgs flatten_args(const std::vector<Tree>& args);
std::vector<Tree> unflatten_args(const std::vector<TreeDef>& defs,
                                 const std::vector<Array>& leaves);

// f as a function of the leaves of the arguments at `argnums` (the others fixed at
// `args`); the output's structure is stored in *out_def on each call.
struct Restricted {
  std::vector<Array> leaves;    // the leaves of the chosen arguments, in order
  std::vector<TreeDef> defs;    // the chosen arguments' structures
  std::vector<size_t> offsets;  // where each chosen argument's leaves start
  ArraysFn fn;
  std::shared_ptr<TreeDef> out_def;
};
Restricted restrict_args(const char* op, const Fn& f, const std::vector<Tree>& args,
                         const std::vector<int>& argnums);
// All arguments.
Restricted restrict_all(const char* op, const Fn& f, const std::vector<Tree>& args);

std::vector<int> normalize_argnums(const char* op, const Argnums& a, size_t nargs);
// The trees of the chosen arguments from flat leaves, as grad returns them.
Tree pack_args(const Restricted& r, const std::vector<Array>& leaves, bool tuple);

Array zeros_of(const Array& like);

}  // namespace kiln::frontend::detail
