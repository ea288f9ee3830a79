// kiln_export_corpus DIR: writes every case of the export corpus (tests/export_corpus.cpp)
// to DIR for tools/gen_export_fixtures.py: <name>.onnx, <name>.mlir, the flattened inputs
// <name>.in<i>.pb and kiln's outputs <name>.kiln<j>.pb (TensorProtos), and corpus.txt with
// one line "<name> <inputs> <outputs>" per case.
#include <cstdio>
#include <fstream>

#include "kiln/export.h"
#include "kiln/jit.h"
#include "tests/export_corpus.h"

namespace {

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kiln_export_corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::ofstream manifest(dir + "/corpus.txt");
  for (const kiln_test::ExportCase& c : kiln_test::export_corpus()) {
    const std::string stem = dir + "/" + c.name;
    write(stem + ".onnx", kiln::export_onnx(c.fn, c.args));
    const std::string hlo = kiln::export_stablehlo(c.fn, c.args);
    write(stem + ".mlir", {hlo.begin(), hlo.end()});
    const std::vector<kiln::Array> in = kiln::tree_flatten(kiln::Tree(kiln::Tree::List(c.args.begin(), c.args.end()))).first;
    const std::vector<kiln::Array> out = kiln::tree_flatten(kiln::jit(c.fn)(c.args)).first;
    for (size_t i = 0; i < in.size(); i++) write(stem + ".in" + std::to_string(i) + ".pb", kiln::export_onnx_tensor(in[i]));
    for (size_t j = 0; j < out.size(); j++) write(stem + ".kiln" + std::to_string(j) + ".pb", kiln::export_onnx_tensor(out[j]));
    manifest << c.name << " " << in.size() << " " << out.size() << "\n";
    std::printf("%s: %zu inputs, %zu outputs\n", c.name.c_str(), in.size(), out.size());
    std::fflush(stdout);
  }
  return 0;
}
