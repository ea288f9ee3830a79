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

// options: { device, externalData }: where the constants go (default: the default device);
// externalData: [{ path, data: Uint8Array }], the external data files by location (the JS
// side has read Blobs, paths and URLs into bytes).
val onnx_load(const val& bytes, const val& options) {
  try {
    OpName op("onnx.load");
    OnDevice on(get_str(options, "device", ""));
    std::vector<uint8_t> buf = bytes_of_js(bytes, "the model");
    onnx::ExternalData files;
    const val list = options["externalData"];
    const int n = is_set(list) ? js_length(list, "options.externalData") : 0;
    for (int i = 0; i < n; i++) {
      const std::string path = js_string(list[i]["path"], "options.externalData[" + std::to_string(i) + "].path");
      files[path] = bytes_of_js(list[i]["data"], "an external data file");
    }
    return val(OnnxModel{onnx::Model::load(buf, files), current_device()});
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// The external data files a model's tensors name (what onnx.load must read for a path).
val onnx_external_files(const val& bytes) {
  try {
    OpName op("onnx.load");
    return strings_to_js(onnx::Model::external_files(bytes_of_js(bytes, "the model")));
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
  function("onnxExternalFiles", &onnx_external_files);
}
