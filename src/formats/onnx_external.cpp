// ONNX external data (TensorProto.data_location EXTERNAL): the records that say which file
// and range hold a tensor's elements, checked without reading any file (the reader stays
// bytes in, structs out; kiln::onnx's loader fetches the files these records name).
#include <charconv>

#include "formats/onnx.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

// A relative path made canonical, or "" with `why` set: models come from anywhere, so a
// location may not name a file outside the model's directory.
std::string normalize_location(const std::string& raw, std::string& why) {
  std::string path = raw;
  for (char& c : path)
    if (c == '\\') c = '/';  // Windows exporters write backslashes
  if (path.empty()) return why = "is empty", "";
  if (path[0] == '/') return why = "is an absolute path", "";
  std::string out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part == "..") return why = "has a '..' part (it must stay inside the model's directory)", "";
    if (!part.empty() && part != ".") out += (out.empty() ? "" : "/") + part;
    start = end + 1;
  }
  if (out.empty()) return why = "names no file", "";
  if (out.size() >= 2 && out[1] == ':') return why = "starts with a drive letter", "";
  return out;
}

uint64_t parse_count(const OnnxTensor& t, const OnnxStringPair& kv) {
  uint64_t v = 0;
  const char* end = kv.value.data() + kv.value.size();
  const auto [p, ec] = std::from_chars(kv.value.data(), end, v);
  if (kv.value.empty() || ec != std::errc() || p != end)
    fail("onnx", "tensor '", t.name, "': external_data ", kv.key, " is '", kv.value, "', expected a decimal integer >= 0");
  return v;
}

void collect(OnnxGraph& g, std::vector<std::pair<OnnxTensor*, OnnxExternalRef>>& out) {
  for (OnnxTensor& t : g.initializers)
    if (t.external) out.emplace_back(&t, onnx_external_ref(t));
  for (OnnxNode& n : g.nodes)
    for (OnnxAttribute& a : n.attributes) {
      for (OnnxTensor& t : a.tensors)
        if (t.external) out.emplace_back(&t, onnx_external_ref(t));
      for (OnnxGraph& sub : a.graphs) collect(sub, out);
    }
}

}  // namespace

std::string onnx_external_location(const std::string& location) {
  std::string why;
  const std::string out = normalize_location(location, why);
  if (out.empty()) fail("onnx", "external data location '", location, "' ", why);
  return out;
}

OnnxExternalRef onnx_external_ref(const OnnxTensor& t) {
  if (!t.external) fail("onnx", "tensor '", t.name, "': its data is not external");
  OnnxExternalRef ref;
  bool has_location = false;
  for (const OnnxStringPair& kv : t.external_data) {
    if (kv.key == "location") {
      std::string why;
      ref.location = normalize_location(kv.value, why);
      if (ref.location.empty()) fail("onnx", "tensor '", t.name, "': external data location '", kv.value, "' ", why);
      has_location = true;
    } else if (kv.key == "offset") {
      ref.offset = parse_count(t, kv);
    } else if (kv.key == "length") {
      ref.length = parse_count(t, kv);
      ref.has_length = true;
    } else if (kv.key == "checksum") {
      ref.checksum = kv.value;
    }
  }
  if (!has_location) fail("onnx", "tensor '", t.name, "': its data is external but external_data has no location");
  return ref;
}

std::vector<std::pair<OnnxTensor*, OnnxExternalRef>> onnx_external_tensors(OnnxModel& model) {
  std::vector<std::pair<OnnxTensor*, OnnxExternalRef>> out;
  collect(model.graph, out);
  return out;
}

std::span<const uint8_t> onnx_external_data(const OnnxTensor& t, const OnnxExternalRef& ref,
                                            std::span<const uint8_t> file) {
  const std::string what = "tensor '" + t.name + "' (external file '" + ref.location + "')";
  if (ref.offset > file.size())
    fail("onnx", what, ": offset ", ref.offset, " is past the end of the file (", file.size(), " bytes)");
  const uint64_t length = ref.has_length ? ref.length : file.size() - ref.offset;
  if (length > file.size() - ref.offset)
    fail("onnx", what, ": offset ", ref.offset, " + length ", length, " runs past the end of the file (", file.size(),
         " bytes)");
  const size_t size = onnx_data_type_size(t.data_type);
  if (size == 0)
    fail("onnx", what, ": data type ", onnx_data_type_name(t.data_type), " cannot be decoded from external data");
  const uint64_t n = uint64_t(t.num_elements());
  if (n > length / size || length != n * size)
    fail("onnx", what, ": length ", length, " bytes does not hold its ", n, " elements of ", size, " bytes (",
         onnx_data_type_name(t.data_type), ")");
  return file.subspan(size_t(ref.offset), size_t(length));
}

}  // namespace kiln::formats
