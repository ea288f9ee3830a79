// Checks kiln::export_onnx / export_stablehlo on the export corpus (tests/export_corpus.cpp)
// against the outputs onnxruntime and XLA gave for the exported files
// (tests/fixtures/export/*.txt from tools/gen_export_fixtures.py): the exported ONNX model
// re-read by kiln's reader, written again byte for byte, and run by kiln's ONNX importer on
// the test's device; kiln's own outputs against both engines; the StableHLO module's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "formats/onnx.h"
#include "formats/protobuf_wire.h"
#include "formats/protobuf_writer.h"
#include "kiln/export.h"
#include "kiln/jit.h"
#include "kiln/lax.h"
#include "kiln/numpy.h"
#include "kiln/onnx.h"
#include "tests/export_corpus.h"
#include "tests/fixture_reader.h"
#include "tests/fixture_values.h"

namespace export_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::Tree;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/export/";

std::map<std::string, kiln_test::FixtureCase> read_engine(const std::string& engine) {
  std::map<std::string, kiln_test::FixtureCase> m;
  for (auto& c : kiln_test::read_fixture_file(kDir + engine + ".txt")) m[c.id] = c;
  return m;
}

const std::map<std::string, kiln_test::FixtureCase>& engine_outputs(const std::string& engine) {
  static const auto ort = read_engine("onnxruntime"), xla = read_engine("xla");
  return engine == "xla" ? xla : ort;
}

// "" when `got` has want's dtype and shape, equal ints and bools, and floats within the
// case's tolerance; otherwise what differs first.
std::string mismatch(const Array& got, const kiln_test::FixtureArray& want, double rtol, double atol) {
  if (kiln::dtype_name(got.dtype()) != want.dtype)
    return std::string("dtype ") + kiln::dtype_name(got.dtype()) + ", expected " + want.dtype;
  if (got.shape() != kiln::Shape(want.shape)) return "shape " + kiln::shape_str(got.shape());
  const std::vector<double> g = got.to_vector<double>();
  for (size_t i = 0; i < g.size(); i++) {
    const double w = want.is_float() ? want.floats[i] : double(want.ints[i]);
    const bool ok = want.is_float() ? (std::isnan(w) ? std::isnan(g[i]) : g[i] == w || std::abs(g[i] - w) <= atol + rtol * std::abs(w))
                                    : g[i] == w;
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w);
  }
  return "";
}

void expect_outputs(const std::string& what, const std::vector<Array>& got, const kiln_test::FixtureCase& want) {
  ASSERT_EQ(got.size(), want.expects.size()) << what;
  for (size_t j = 0; j < got.size(); j++)
    EXPECT_EQ(mismatch(got[j], want.expects[j], want.rtol, want.atol), "") << what << ", output " << j;
}

std::vector<Array> flat_args(const std::vector<Tree>& args) {
  return kiln::tree_flatten(Tree(Tree::List(args.begin(), args.end()))).first;
}

// The corpus, built once per process (the MNIST parameters' initialization is the slow part).
const std::vector<kiln_test::ExportCase>& corpus() {
  static const std::vector<kiln_test::ExportCase> c = kiln_test::export_corpus();
  return c;
}
const std::vector<kiln_test::ExportRun>& runs() {
  static const std::vector<kiln_test::ExportRun> r = kiln_test::export_runs(corpus());
  return r;
}

TEST(Export, CorpusHasEngineOutputsForEveryCase) {
  EXPECT_GE(corpus().size(), 25u);
  EXPECT_EQ(engine_outputs("onnxruntime").size(), runs().size()) << "rerun tools/gen_export_fixtures.py";
  EXPECT_EQ(engine_outputs("xla").size(), corpus().size()) << "rerun tools/gen_export_fixtures.py";
  for (auto& r : runs()) {
    EXPECT_TRUE(engine_outputs("onnxruntime").count(r.id)) << "onnxruntime has no " << r.id;
    if (r.stablehlo) {
      EXPECT_TRUE(engine_outputs("xla").count(r.id)) << "xla has no " << r.id;
    }
  }
}

// kiln's own results (jit on the test's device) give what both engines computed from the
// exported files.
TEST(Export, KilnMatchesOnnxruntimeAndXla) {
  for (const auto& r : runs()) {
    SCOPED_TRACE(r.id);
    const std::vector<Array> out = kiln::tree_flatten(kiln::jit(r.c->fn)(*r.args)).first;
    expect_outputs("onnxruntime", out, engine_outputs("onnxruntime").at(r.id));
    if (r.stablehlo) expect_outputs("xla", out, engine_outputs("xla").at(r.id));
  }
}

// The ONNX bytes parse with kiln's reader, write back to the same bytes, declare opset 18
// and one input per flattened argument (the batch as dim_param "batch" where the case has
// one), and run in kiln's importer to onnxruntime's values, at a second batch size too.
TEST(Export, OnnxRereadAndRunByKilnsImporterGivesOnnxruntimesOutputs) {
  for (const auto& r : runs()) {
    SCOPED_TRACE(r.id);
    const std::vector<uint8_t> bytes = kiln::export_onnx(r.c->fn, r.c->args, kiln_test::export_options(*r.c));
    const kiln::formats::OnnxModel parsed = kiln::formats::parse_onnx_model(bytes);
    EXPECT_EQ(parsed.opset_version(""), 18);
    const std::vector<Array> in = flat_args(*r.args);
    ASSERT_EQ(parsed.graph.inputs.size(), in.size());
    EXPECT_EQ(parsed.graph.outputs.size(), engine_outputs("onnxruntime").at(r.id).expects.size());
    for (size_t i = 0; i < in.size(); i++) {
      const auto& dims = parsed.graph.inputs[i].type.shape;
      ASSERT_EQ(dims.size(), in[i].shape().size()) << "input " << i;
      for (size_t k = 0; k < dims.size(); k++)
        EXPECT_EQ(dims[k].has_value ? std::to_string(dims[k].value) : dims[k].param,
                  dims[k].has_value ? std::to_string(flat_args(r.c->args)[i].shape()[k]) : "batch");
    }
    // Initializers parsed from typed fields write back unchanged, so the bytes round-trip.
    EXPECT_EQ(kiln::formats::write_onnx_model(parsed), bytes);
    const kiln::onnx::Model m = kiln::onnx::Model::load(bytes);
    std::map<std::string, Array> feeds;
    for (size_t i = 0; i < in.size(); i++) feeds.emplace(m.input_names()[i], in[i]);
    const std::map<std::string, Array> out = m.run(feeds);  // under jit
    std::vector<Array> ordered;
    for (const std::string& name : m.output_names()) ordered.push_back(out.at(name));
    expect_outputs("kiln's ONNX importer", ordered, engine_outputs("onnxruntime").at(r.id));
  }
}

// The StableHLO text: one public main with an argument per flattened input and a return
// of every output.
TEST(Export, StablehloModuleHasOneMainWithEveryArgumentAndOutput) {
  for (const auto& c : corpus()) {
    SCOPED_TRACE(c.name);
    const std::string text = kiln::export_stablehlo(c.fn, c.args);
    EXPECT_EQ(text.rfind("module @kiln_export {\n  func.func public @main(", 0), 0u);
    const size_t n = flat_args(c.args).size();
    EXPECT_NE(text.find("%arg" + std::to_string(n - 1) + ": tensor<"), std::string::npos);
    EXPECT_EQ(text.find("%arg" + std::to_string(n) + ":"), std::string::npos);
    const size_t ret = text.find("    return ");
    ASSERT_NE(ret, std::string::npos);
    const std::string ret_line = text.substr(ret, text.find('\n', ret) - ret);
    const size_t outs = engine_outputs("xla").at(c.name).expects.size();
    EXPECT_EQ(size_t(std::count(ret_line.begin(), ret_line.end(), '%')), outs) << ret_line;
  }
}

// The control-flow cases stay loops and branches in both targets (not unrolled or folded
// away by the trace): ONNX Loop/If nodes (in subgraphs too), stablehlo.while/case ops.
size_t count_ops(const kiln::formats::OnnxGraph& g, const std::string& op) {
  size_t n = 0;
  for (const auto& node : g.nodes) {
    n += node.op_type == op;
    for (const auto& a : node.attributes)
      for (const auto& sub : a.graphs) n += count_ops(sub, op);
  }
  return n;
}

size_t count_text(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

TEST(Export, ControlFlowIsWrittenAsLoopsAndBranches) {
  // name -> (loops, branch ops): ONNX Loop and stablehlo.while alike; an n-way switch is
  // n-1 nested Ifs and one stablehlo.case.
  const std::map<std::string, std::pair<size_t, std::pair<size_t, size_t>>> want = {
      {"scan_rnn", {1, {0, 0}}},          {"scan_reverse", {1, {0, 0}}},      {"while_newton_sqrt", {1, {0, 0}}},
      {"fori_loop_static", {1, {0, 0}}},  {"fori_loop_dynamic", {1, {0, 0}}}, {"cond", {0, {2, 2}}},
      {"switch_3_branches", {0, {6, 3}}}, {"scan_rnn_value_and_grad", {2, {0, 0}}}, {"nested_scan_switch_fori", {2, {1, 1}}}};
  size_t seen = 0;
  for (const auto& c : corpus()) {
    auto it = want.find(c.name);
    if (it == want.end()) continue;
    SCOPED_TRACE(c.name);
    seen++;
    const auto model = kiln::formats::parse_onnx_model(kiln::export_onnx(c.fn, c.args));
    const std::string mlir = kiln::export_stablehlo(c.fn, c.args);
    EXPECT_EQ(count_ops(model.graph, "Loop"), it->second.first);
    EXPECT_EQ(count_text(mlir, "\"stablehlo.while\""), it->second.first);
    EXPECT_EQ(count_ops(model.graph, "If"), it->second.second.first);
    EXPECT_EQ(count_text(mlir, "\"stablehlo.case\""), it->second.second.second);
  }
  EXPECT_EQ(seen, want.size());
}

TEST(Export, ErrorsNameWhatCannotBeExported) {
  auto bitcast = [](const std::vector<Tree>& a) { return Tree(kiln::lax::bitcast_convert_type(a[0].array(), kiln::int32)); };
  const std::vector<Tree> x = {Tree(np::ones({3}))};
  try {
    kiln::export_onnx(bitcast, x);
    ADD_FAILURE() << "bitcast exported to ONNX";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("export_onnx: cannot export primitive bitcast_convert_type"), std::string::npos) << e.what();
  }
  // StableHLO has bitcast_convert.
  EXPECT_NE(kiln::export_stablehlo(bitcast, x).find("\"stablehlo.bitcast_convert\""), std::string::npos);
  kiln::ExportOptions old;
  old.opset = 13;
  try {
    kiln::export_onnx(bitcast, x, old);
    ADD_FAILURE() << "opset 13 accepted";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("got opset 13, expected 18 or later"), std::string::npos) << e.what();
  }
  // A symbolic batch that a constant depends on, and one asked of StableHLO.
  kiln::ExportOptions batch;
  batch.batch_dim = "batch";
  auto with_iota = [](const std::vector<Tree>& a) {
    const Array& v = a[0].array();
    return Tree(v + np::arange(v.shape()[0], kiln::float32));
  };
  try {
    kiln::export_onnx(with_iota, x, batch);
    ADD_FAILURE() << "a batch-sized constant exported";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch_dim: the function's jaxpr changes with the batch size"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kiln::export_stablehlo(with_iota, x, batch), kiln::Error);
  // Control flow exports at a fixed batch size: a symbolic batch is refused by name.
  auto looped = [](const std::vector<Tree>& a) {
    return kiln::lax::fori_loop(0, 3, [](const Array&, const Tree& c) { return Tree(c.array() * 2.0); }, a[0]);
  };
  try {
    kiln::export_onnx(looped, x, batch);
    ADD_FAILURE() << "a scan exported with a symbolic batch";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch_dim: a function with control flow (scan)"), std::string::npos) << e.what();
  }
}

// The wire writer against the reader: varints at their byte boundaries (negative int64 as
// 10 bytes), fixed32, strings and packed repeated fields.
TEST(Export, WireWriterRoundTripsThroughTheReader) {
  kiln::formats::WireWriter w;
  const std::vector<int64_t> ints = {0, 1, 127, 128, 16383, 16384, -1, INT64_MIN, INT64_MAX};
  for (int64_t v : ints) w.varint(1, uint64_t(v));
  w.float32(2, 1.5f);
  w.string(3, "kiln");
  w.packed_varints(4, std::span<const int64_t>(ints));
  const std::vector<float> fl = {0.25f, -3.0f};
  w.packed_floats(5, fl);
  const std::vector<uint8_t> bytes = w.take();
  kiln::formats::WireReader r(bytes, "test", "message");
  kiln::formats::WireField f;
  std::vector<int64_t> got, packed;
  std::vector<float> floats;
  std::string s;
  float one = 0;
  while (r.next(f)) {
    if (f.number == 1) got.push_back(r.as_int64(f));
    if (f.number == 2) one = r.as_float(f);
    if (f.number == 3) s = r.as_string(f);
    if (f.number == 4) r.append_int64s(f, packed);
    if (f.number == 5) r.append_floats(f, floats);
  }
  EXPECT_EQ(got, ints);
  EXPECT_EQ(packed, ints);
  EXPECT_EQ(one, 1.5f);
  EXPECT_EQ(s, "kiln");
  EXPECT_EQ(floats, fl);
}

}  // namespace

}  // namespace export_test
