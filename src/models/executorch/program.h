// kiln::executorch::Program: an ExecuTorch `.pte` program whose methods run as kiln
// functions: each method's instruction chain traced once per input signature and jit-fused.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/pte.h"
#include "frontend/array.h"

namespace kiln::executorch {

// An ExecuTorch `.pte` program loaded for kiln: each method runs as one jit-compiled function
// traced from its instructions. Example:
//   std::vector<uint8_t> bytes = ...;  // the .pte file
//   auto program = executorch::Program::load(std::move(bytes));
//   std::vector<Array> out = program.run("forward", {numpy::ones({1, 3})});
class Program {
 public:
  // Parses `bytes` (kept by the program: constants are read from them) and checks that
  // every method can run: no delegate calls, every operator in the table (the error lists
  // the missing ones and what is supported), constants of dtypes kiln has.
  static Program load(std::vector<uint8_t> bytes);
  // As above, for programs exported with external constants (ExecuTorch's
  // `external_constants`: the .pte holds the structure, the weights are named data, usually a
  // `.ptd` file): `named_data` maps each external tensor's fully qualified name to its value,
  // whose dtype and shape must be the program's. A missing name is an error naming it.
  static Program load(std::vector<uint8_t> bytes, const std::map<std::string, Array>& named_data);
  // The external tensors the methods read, by fully qualified name (what `named_data` must
  // hold), with the dtype and shape each must have.
  static std::vector<std::pair<std::string, std::pair<DType, Shape>>> external_tensors(
      const formats::Pte& pte);

  std::vector<std::string> method_names() const;  // in the file's order (usually "forward")
  // Runs `method` on `inputs` (one Array per method input, in order; ExecuTorch's Long
  // inputs are int32 Arrays). The inputs' count, dtypes and shapes are checked against the
  // program (a dynamic dim may be anything up to its planned upper bound); errors name the
  // method and the argument. A method with dynamic inputs is traced once per bucket (each
  // dynamic dim rounded up to a power of two, clipped to its bound): inputs are padded to the
  // bucket, the valid sizes are arguments of the compiled program, and the outputs are cut
  // to their valid sizes, so a new size in a bucket traces and compiles nothing. A method
  // with an operator that has no rule for dynamic sizes is traced per exact input shape.
  std::vector<Array> run(const std::string& method, const std::vector<Array>& inputs) const;
  // As run, traced at the inputs' exact shapes (one trace per input signature, no buckets):
  // the reference that a bucketed run equals bit for bit.
  std::vector<Array> run_exact(const std::string& method, const std::vector<Array>& inputs) const;
  // How many times `method` has been traced (bucketed, exact-shape and fallback traces).
  int traces(const std::string& method) const;

  const formats::Pte& pte() const;  // the parsed file

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Every ExecuTorch operator with a rule, sorted ("aten::add.out", ...).
std::vector<std::string> supported_operators();

}  // namespace kiln::executorch
