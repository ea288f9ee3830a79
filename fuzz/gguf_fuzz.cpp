// Fuzz target `gguf`: formats::parse_gguf on arbitrary bytes. A success must place every
// tensor inside the input, aligned, sized by ggml's table, and write back idempotently.
#include "formats/gguf.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

KILN_FUZZ_TARGET(gguf) {
  using namespace kiln::formats;
  using kiln::fuzz::check;
  const std::span<const uint8_t> file(data, size);
  Gguf g;
  try {
    g = parse_gguf(file);
  } catch (const kiln::Error&) {
    return 0;
  }
  check(g.alignment != 0 && (g.alignment & (g.alignment - 1)) == 0, "gguf: alignment");
  check(g.key_index.size() == g.metadata.size(), "gguf: key index");
  check(g.tensor_index.size() == g.tensors.size(), "gguf: tensor index");
  std::vector<GgufTensorToWrite> tensors;
  for (const GgufTensorInfo& t : g.tensors) {
    check(t.file_offset >= g.data_offset && t.file_offset <= size && t.size <= size - t.file_offset,
          "gguf: tensor outside the input");
    check(t.offset % g.alignment == 0, "gguf: misaligned tensor");
    check(!t.dims.empty() && t.dims.size() <= 4, "gguf: dims");
    check(t.size == ggml_tensor_bytes(t.type, t.dims, "fuzz", t.name), "gguf: size");
    tensors.push_back({t.name, t.dims, t.type, gguf_tensor_data(file, t)});
  }
  // What was read writes without error, reads back the same, and writes the same again.
  std::vector<uint8_t> once, twice;
  try {
    once = write_gguf(g.metadata, tensors, g.version);
    Gguf again = parse_gguf(once);
    check(again.metadata.size() == g.metadata.size(), "gguf: metadata round trip");
    check(again.tensors.size() == g.tensors.size(), "gguf: tensor round trip");
    std::vector<GgufTensorToWrite> tensors2;
    for (const GgufTensorInfo& t : again.tensors)
      tensors2.push_back({t.name, t.dims, t.type, gguf_tensor_data(once, t)});
    twice = write_gguf(again.metadata, tensors2, again.version);
  } catch (const kiln::Error& e) {
    throw kiln::fuzz::PropertyError(std::string("gguf: round trip failed: ") + e.what());
  }
  check(once == twice, "gguf: write(parse(write(parse(x)))) != write(parse(x))");
  return 0;
}
