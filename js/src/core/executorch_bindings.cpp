// Embind entry points of kiln::executorch for js/src/executorch.ts: ExecutorchProgram (a
// loaded `.pte` program) with its method names and run(method, arrays).
#include <emscripten/bind.h>

#include "js_values.h"
#include "kiln/executorch.h"

namespace kiln::js {
namespace {

struct ExecutorchProgram {
  executorch::Program program;

  val method_names() const {
    val out = val::array();
    for (const std::string& name : program.method_names()) out.call<void>("push", val(name));
    return out;
  }

  // The outputs' handles, or an Error (naming the method and the argument for bad inputs).
  val run(const val& method, const val& inputs) const {
    try {
      OpName op("executorch.run");
      return from_arrays(program.run(js_string(method, "the method name"), to_arrays(inputs)));
    } catch (const std::exception& e) {
      return js_error(e.what());
    }
  }

  int traces(const std::string& method) const { return program.traces(method); }
};

val executorch_load(const val& bytes) {
  try {
    OpName op("executorch.load");
    return val(ExecutorchProgram{executorch::Program::load(bytes_of_js(bytes, "the program"))});
  } catch (const std::exception& e) {
    return js_error(e.what());
  }
}

val executorch_operators() {
  val out = val::array();
  for (const std::string& name : executorch::supported_operators()) out.call<void>("push", val(name));
  return out;
}

}  // namespace
}  // namespace kiln::js

EMSCRIPTEN_BINDINGS(kiln_executorch) {
  using namespace emscripten;
  using namespace kiln::js;
  class_<ExecutorchProgram>("ExecutorchProgram")
      .function("methodNames", &ExecutorchProgram::method_names)
      .function("run", &ExecutorchProgram::run)
      .function("traces", &ExecutorchProgram::traces);
  function("executorchLoad", &executorch_load);
  function("executorchOperators", &executorch_operators);
}
