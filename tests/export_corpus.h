// The export corpus (issue 25): functions and arguments that tests/export_test.cpp exports
// and checks against onnxruntime's and XLA's outputs (tools/gen_export_fixtures.py).
#pragma once
#include <string>
#include <vector>

#include "kiln/export.h"
#include "kiln/kiln.h"

namespace kiln_test {

struct ExportCase {
  std::string name;
  kiln::Fn fn;
  std::vector<kiln::Tree> args;  // the example arguments, and the inputs the engines ran
  // A symbolic batch (ONNX only): the arguments carrying it, and arguments at another
  // batch size that the same ONNX file must also run on.
  std::vector<int> batch_argnums = {};
  std::vector<kiln::Tree> other_batch = {};
};

std::vector<ExportCase> export_corpus();

// The options a case is exported with (batch_dim "batch" when it has other_batch).
kiln::ExportOptions export_options(const ExportCase& c);

// One run of an exported file: every case at its example (ONNX and StableHLO), and each
// symbolic-batch case again at its other batch size (ONNX only), named <name>_batch<n>.
struct ExportRun {
  std::string id;
  const ExportCase* c;
  const std::vector<kiln::Tree>* args;
  bool stablehlo;
};
std::vector<ExportRun> export_runs(const std::vector<ExportCase>& corpus);

}  // namespace kiln_test
