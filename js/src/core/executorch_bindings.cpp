// Embind entry points of kiln::executorch for js/src/executorch.ts: ExecutorchProgram (a
// loaded `.pte` program) with its method names and run(method, arrays).
#include <emscripten/bind.h>

#include "js_values.h"
#include "kiln/executorch.h"

namespace kiln::js {
namespace {

struct ExecutorchProgram {
  executorch::Program program;
  // The device of its constants: arrays its rules create while running (masks, index
  // ranges) are made there too, whatever the default device is by then.
  std::string device;

  val method_names() const { return strings_to_js(program.method_names()); }

  // The outputs' handles, or an Error (naming the method and the argument for bad inputs).
  val run(const val& method, const val& inputs) const {
    try {
      OpName op("executorch.run");
      OnDevice on(device);
      return from_arrays(program.run(js_string(method, "the method name"), to_arrays(inputs)));
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }

  int traces(const std::string& method) const { return program.traces(method); }
};

// options: { device, namedData | provide | ptd }: where the constants go (default: the
// default device); the external constants by fully qualified name (handles; executorch.ts
// checks them), provide(name, dtype, shape) -> handle called for each one the program
// declares, or the bytes of a `.ptd` file (executorch::read_ptd, on the device).
val executorch_load(const val& bytes, const val& options) {
  try {
    OpName op("executorch.load");
    OnDevice on(get_str(options, "device", ""));
    std::map<std::string, Array> named;
    const val data = options["namedData"];
    if (const val ptd = options["ptd"]; is_set(ptd)) {
      named = executorch::read_ptd(bytes_of_js(ptd, "the named data"));
    } else if (const val provide = options["provide"]; is_set(provide)) {
      const std::vector<uint8_t> file = bytes_of_js(bytes, "the program");
      for (const auto& [name, spec] : executorch::Program::external_tensors(formats::parse_pte(file))) {
        val shape = val::array();
        for (int64_t d : spec.second) shape.call<void>("push", double(d));
        named.emplace(name, to_array(provide(name, std::string(dtype_name(spec.first)), shape)));
      }
    } else if (is_set(data)) {
      const val keys = val::global("Object").call<val>("keys", data);
      for (unsigned i = 0, n = keys["length"].as<unsigned>(); i < n; ++i) {
        const std::string key = keys[i].as<std::string>();
        named.emplace(key, to_array(data[key]));
      }
    }
    return val(ExecutorchProgram{executorch::Program::load(bytes_of_js(bytes, "the program"), named),
                                 current_device()});
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

val executorch_operators() { return strings_to_js(executorch::supported_operators()); }

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
