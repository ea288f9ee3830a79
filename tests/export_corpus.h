// The export corpus (issue 25): functions and arguments that tests/export_test.cpp exports
// and checks against onnxruntime's and XLA's outputs (tools/gen_export_fixtures.py).
#pragma once
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln_test {

struct ExportCase {
  std::string name;
  kiln::Fn fn;
  std::vector<kiln::Tree> args;  // the example arguments, and the inputs the engines ran
};

std::vector<ExportCase> export_corpus();

}  // namespace kiln_test
