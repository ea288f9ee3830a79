// Checks the ONNX reader (formats/onnx.h): a model the `onnx` package wrote
// (tools/gen_onnx_fixtures.py) parses as its dump says; malformed bytes fail naming the part.
#include <gtest/gtest.h>

#include <cstdio>

#include "formats/onnx.h"
#include "formats/protobuf_wire.h"
#include "ir/error.h"
#include "tests/model_file_dump.h"

namespace onnx_reader_test {

namespace {

using namespace kiln::formats;
using Bytes = std::vector<uint8_t>;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/onnx/";

std::string join_strings(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out;
}

// The dump of tools/gen_onnx_fixtures.py (its docstring has the format).
std::string dump_type(const OnnxType& t) {
  using K = OnnxType::Kind;
  switch (t.kind) {
    case K::Tensor:
    case K::SparseTensor: {
      std::string s = std::string(t.kind == K::Tensor ? "tensor(" : "sparse(") + onnx_data_type_name(t.elem_type) + ")";
      if (!t.has_shape) return s;
      std::vector<std::string> dims;
      for (const OnnxDim& d : t.shape)
        dims.push_back(d.has_value ? std::to_string(d.value) : !d.param.empty() ? d.param : "?");
      return s + "[" + join_strings(dims) + "]";
    }
    case K::Sequence: return "seq(" + dump_type(t.elems.at(0)) + ")";
    case K::Optional: return "opt(" + dump_type(t.elems.at(0)) + ")";
    case K::Map: return "map(" + onnx_data_type_name(t.key_type) + "," + dump_type(t.elems.at(0)) + ")";
    case K::Unknown: break;
  }
  return "unknown";
}

std::string hex(std::span<const uint8_t> b) {
  std::string s;
  char buf[3];
  for (uint8_t c : b) std::snprintf(buf, sizeof buf, "%02x", c), s += buf;
  return s;
}

std::string dump_tensor(std::span<const uint8_t> file, const OnnxTensor& t) {
  std::string s = kiln_test::dump_quote(t.name) + " " + onnx_data_type_name(t.data_type) + " [" +
                  kiln_test::join(t.dims, ",") + "]";
  if (!t.external) return s + " bytes " + hex(onnx_tensor_bytes(file, t));
  std::vector<std::string> kv;
  for (const OnnxStringPair& p : t.external_data) kv.push_back(p.key + "=" + p.value);
  return s + " external " + join_strings(kv);
}

std::string g9(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string dump_graph(std::span<const uint8_t> file, const OnnxGraph& g, const std::string& pad);

std::string dump_attr(std::span<const uint8_t> file, const OnnxAttribute& a, const std::string& pad) {
  using T = OnnxAttributeType;
  std::string s = pad + "attr " + a.name + " " + onnx_attribute_type_name(a.type);
  std::vector<std::string> items;
  switch (a.type) {
    case T::Float: return s + " " + g9(a.f) + "\n";
    case T::Int: return s + " " + std::to_string(a.i) + "\n";
    case T::String: return s + " " + kiln_test::dump_quote(a.s) + "\n";
    case T::Floats:
      for (float f : a.floats) items.push_back(g9(f));
      return s + " [" + join_strings(items) + "]\n";
    case T::Ints: return s + " [" + kiln_test::join(a.ints, ",") + "]\n";
    case T::Strings:
      for (const std::string& x : a.strings) items.push_back(kiln_test::dump_quote(x));
      return s + " [" + join_strings(items) + "]\n";
    case T::Tensor:
    case T::Tensors:
      s += "\n";
      for (const OnnxTensor& t : a.tensors) s += pad + "  " + dump_tensor(file, t) + "\n";
      return s;
    case T::Graph:
    case T::Graphs:
      s += "\n";
      for (const OnnxGraph& sub : a.graphs) s += dump_graph(file, sub, pad + "  ");
      return s;
    case T::TypeProto: return s + " " + dump_type(a.type_protos.at(0)) + "\n";
    default: return s + "\n";
  }
}

std::string dump_graph(std::span<const uint8_t> file, const OnnxGraph& g, const std::string& pad) {
  std::string s = pad + "graph " + kiln_test::dump_quote(g.name) + "\n";
  for (auto [kind, list] : {std::pair{"input", &g.inputs}, {"output", &g.outputs}, {"value_info", &g.value_info}})
    for (const OnnxValueInfo& v : *list) s += pad + kind + " " + v.name + " " + dump_type(v.type) + "\n";
  for (const OnnxTensor& t : g.initializers) s += pad + "init " + dump_tensor(file, t) + "\n";
  for (const OnnxNode& n : g.nodes) {
    s += pad + "node " + kiln_test::dump_quote(n.name) + " " + n.op_type + " " + kiln_test::dump_quote(n.domain) +
         " in [" + join_strings(n.inputs) + "] out [" + join_strings(n.outputs) + "]\n";
    for (const OnnxAttribute& a : n.attributes) s += dump_attr(file, a, pad);
  }
  return s;
}

std::string dump_model(std::span<const uint8_t> file, const OnnxModel& m) {
  std::string s = "model ir " + std::to_string(m.ir_version) + " producer " + kiln_test::dump_quote(m.producer_name) +
                  " " + kiln_test::dump_quote(m.producer_version) + " domain " + kiln_test::dump_quote(m.domain) +
                  " version " + std::to_string(m.model_version) + "\n";
  for (const OnnxOpsetId& o : m.opset_import)
    s += "opset " + kiln_test::dump_quote(o.domain) + " " + std::to_string(o.version) + "\n";
  for (const OnnxStringPair& p : m.metadata_props)
    s += "meta " + kiln_test::dump_quote(p.key) + " " + kiln_test::dump_quote(p.value) + "\n";
  return s + dump_graph(file, m.graph, "");
}

std::string error_of(const Bytes& b) {
  try {
    parse_onnx_model(b);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ONNX_ERROR(bytes, part)                                                     \
  do {                                                                                     \
    std::string err_ = error_of(bytes);                                                    \
    EXPECT_EQ(err_.rfind("onnx: ", 0), 0u) << "no onnx error: '" << err_ << "'";          \
    EXPECT_NE(err_.find(part), std::string::npos) << err_;                                 \
  } while (0)

// Protobuf encoding helpers for hand-made inputs.
void varint(Bytes& b, uint64_t v) {
  while (v >= 0x80) b.push_back(uint8_t(v | 0x80)), v >>= 7;
  b.push_back(uint8_t(v));
}
Bytes field(uint32_t number, const Bytes& payload) {
  Bytes b;
  varint(b, uint64_t(number) << 3 | 2);
  varint(b, payload.size());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}
Bytes int_field(uint32_t number, uint64_t v) {
  Bytes b;
  varint(b, uint64_t(number) << 3);
  varint(b, v);
  return b;
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const Bytes& p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}
Bytes str(const std::string& s) { return Bytes(s.begin(), s.end()); }

TEST(OnnxReader, ParsesAsTheOnnxPackageDumps) {
  const Bytes file = kiln_test::read_bytes(kDir + "reader_all.onnx");
  ASSERT_FALSE(file.empty());
  const OnnxModel m = parse_onnx_model(file);
  EXPECT_EQ(dump_model(file, m), kiln_test::read_text(kDir + "reader_all.txt"));
  EXPECT_EQ(m.opset_version(""), 17);
  EXPECT_EQ(m.opset_version("ai.onnx"), 17);
  EXPECT_EQ(m.opset_version("com.microsoft"), 1);
  EXPECT_EQ(m.opset_version("other"), 0);
}

TEST(OnnxReader, EveryTruncationFailsCleanly) {
  // Each prefix of a real file either parses (a cut between fields) or throws kiln::Error.
  const Bytes file = kiln_test::read_bytes(kDir + "reader_all.onnx");
  ASSERT_GT(file.size(), 100u);
  size_t errors = 0;
  for (size_t n = 0; n < file.size(); ++n) {
    const Bytes prefix(file.begin(), file.begin() + n);
    if (!error_of(prefix).empty()) ++errors;
  }
  EXPECT_GT(errors, file.size() / 2);
}

TEST(OnnxReader, PackedAndUnpackedRepeatedFieldsAgree) {
  // dims unpacked (two varint fields) and packed (one length-delimited field).
  Bytes packed;
  varint(packed, 2), varint(packed, 3);
  const Bytes base = cat({int_field(2, 1), field(4, Bytes(24, 0))});
  const OnnxTensor a = parse_onnx_tensor(cat({int_field(1, 2), int_field(1, 3), base}));
  const OnnxTensor b = parse_onnx_tensor(cat({field(1, packed), base}));
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(b.dims, a.dims);
  EXPECT_EQ(a.float_data.size(), 6u);
}

TEST(OnnxReader, MalformedInputsNameThePart) {
  EXPECT_ONNX_ERROR(Bytes{}, "no graph");
  EXPECT_ONNX_ERROR(Bytes{0x08}, "truncated varint");
  EXPECT_ONNX_ERROR(Bytes({0x3a, 0x05, 0x0a}), "runs past the end");
  EXPECT_ONNX_ERROR(Bytes({0x0b}), "wire type 3");
  EXPECT_ONNX_ERROR(Bytes({0x00}), "field number 0");
  EXPECT_ONNX_ERROR(Bytes(11, 0xff), "truncated");
  // graph.node[0] whose input is a varint instead of a string.
  EXPECT_ONNX_ERROR(field(7, field(1, int_field(1, 5))), "graph.node[0]: field 1: wire type varint");
  // A negative dim in an initializer.
  EXPECT_ONNX_ERROR(field(7, field(5, int_field(1, uint64_t(-4)))), "graph.initializer[0]: dims has -4");
  // Dims whose product overflows.
  EXPECT_ONNX_ERROR(field(7, field(5, cat({int_field(1, 1ull << 40), int_field(1, 1ull << 40)}))), "overflows");
  EXPECT_ONNX_ERROR(field(7, field(15, {})), "sparse initializers are not supported");
  EXPECT_ONNX_ERROR(cat({field(7, {}), field(7, {})}), "more than one graph");
  // Floats in a packed field whose size is not a multiple of 4.
  EXPECT_ONNX_ERROR(field(7, field(5, field(4, Bytes(5, 0)))), "not a multiple of 4");
  // An attribute declared TENSOR without a tensor.
  EXPECT_ONNX_ERROR(field(7, field(1, field(5, cat({field(1, str("a")), int_field(20, 4)})))),
                    "needs exactly one t");
  EXPECT_ONNX_ERROR(field(7, field(1, field(5, int_field(20, 99)))), "attribute type 99");
}

TEST(OnnxReader, NestingDepthIsBounded) {
  // A graph inside an attribute inside a node inside a graph ..., 40 levels deep.
  Bytes g;
  for (int i = 0; i < 40; ++i) g = field(1, field(5, cat({field(1, str("g")), field(6, g)})));
  EXPECT_ONNX_ERROR(field(7, g), "nested deeper than 32");
  Bytes t = field(1, {});  // TypeProto: sequence_type { elem_type { ... } }
  for (int i = 0; i < 40; ++i) t = field(4, field(1, t));
  EXPECT_ONNX_ERROR(field(7, field(11, field(2, t))), "nested deeper than 32");
}

TEST(OnnxReader, TensorBytesChecksItsCount) {
  // FLOAT [3] with 2 values in float_data, and with raw_data of 8 bytes.
  Bytes two;
  for (int i = 0; i < 8; ++i) two.push_back(0);
  const Bytes typed = cat({int_field(1, 3), int_field(2, 1), field(4, two)});
  const Bytes raw = cat({int_field(1, 3), int_field(2, 1), field(9, two)});
  for (const Bytes& b : {typed, raw}) {
    const OnnxTensor t = parse_onnx_tensor(b);
    try {
      onnx_tensor_bytes(b, t);
      ADD_FAILURE() << "expected an error";
    } catch (const kiln::Error& e) {
      EXPECT_NE(std::string(e.what()).find("expected 3"), std::string::npos) << e.what();
    }
  }
  const Bytes strings = cat({int_field(1, 1), int_field(2, 8), field(6, str("x"))});
  EXPECT_THROW(onnx_tensor_bytes(strings, parse_onnx_tensor(strings)), kiln::Error);
  // raw_data located outside the buffer given (a tensor from another buffer).
  OnnxTensor t = parse_onnx_tensor(raw);
  EXPECT_THROW(onnx_raw_data(std::span<const uint8_t>(raw).first(4), t), kiln::Error);
}

}  // namespace

}  // namespace onnx_reader_test
