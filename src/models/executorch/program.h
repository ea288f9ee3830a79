// kiln::executorch::Program: an ExecuTorch `.pte` program whose methods run as kiln
// functions: each method's instruction chain traced once per input signature and jit-fused.
#pragma once
#include <cstdint>
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

  std::vector<std::string> method_names() const;  // in the file's order (usually "forward")
  // Runs `method` on `inputs` (one Array per method input, in order; ExecuTorch's Long
  // inputs are int32 Arrays). The inputs' count, dtypes and shapes are checked against the
  // program (a dynamic dim may be anything up to its planned upper bound); errors name the
  // method and the argument. The first call with a new input signature traces and compiles.
  std::vector<Array> run(const std::string& method, const std::vector<Array>& inputs) const;
  // How many times `method` has been traced (one per distinct input signature).
  int traces(const std::string& method) const;

  const formats::Pte& pte() const;  // the parsed file

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Every ExecuTorch operator with a rule, sorted ("aten::add.out", ...).
std::vector<std::string> supported_operators();

}  // namespace kiln::executorch
