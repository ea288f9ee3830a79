// Embind entry points of kiln::onnx for js/src/onnx.ts: OnnxModel (a loaded ONNX graph) with
// its input/output names, run(names, arrays) under jit, and call(arrays) as a pure function
// that JS transformations (grad, vmap, jit) trace like any library call.
#include <emscripten/bind.h>

#include "js_values.h"
#include "kiln/onnx.h"

namespace kiln::js {
namespace {

struct OnnxModel {
  onnx::Model model;
  // The device of its constants: arrays its rules create while running (masks, index
  // ranges) are made there too, whatever the default device is by then.
  std::string device;

  val input_names() const { return strings_to_js(model.input_names()); }
  val output_names() const { return strings_to_js(model.output_names()); }

  // feeds: parallel JS arrays of names and handles; the result is the outputs' handles in
  // output_names() order, or an Error.
  val run(const val& names, const val& arrays) const {
    try {
      OpName op("onnx.run");
      OnDevice on(device);
      std::vector<Array> values = to_arrays(arrays);
      std::map<std::string, Array> feeds;
      for (size_t i = 0; i < values.size(); i++)
        feeds.emplace(js_string(names[i], "a feed name"), values[i]);
      std::map<std::string, Array> out = model.run(feeds);
      std::vector<Array> ordered;
      for (const std::string& name : model.output_names()) ordered.push_back(out.at(name));
      return from_arrays(ordered);
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }

  val call(const val& arrays) const {
    try {
      OpName op("onnx.call");
      OnDevice on(device);
      return from_arrays(model.call(to_arrays(arrays)));
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
};

// options: { device }: where the constants go (default: the default device).
val onnx_load(const val& bytes, const val& options) {
  try {
    OpName op("onnx.load");
    OnDevice on(get_str(options, "device", ""));
    std::vector<uint8_t> buf = bytes_of_js(bytes, "the model");
    return val(OnnxModel{onnx::Model::load(buf), current_device()});
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

}  // namespace
}  // namespace kiln::js

EMSCRIPTEN_BINDINGS(kiln_onnx) {
  using namespace emscripten;
  using namespace kiln::js;
  class_<OnnxModel>("OnnxModel")
      .function("inputNames", &OnnxModel::input_names)
      .function("outputNames", &OnnxModel::output_names)
      .function("run", &OnnxModel::run)
      .function("call", &OnnxModel::call);
  function("onnxLoad", &onnx_load);
}
