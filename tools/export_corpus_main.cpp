// kiln_export_corpus DIR: writes every case of the export corpus (tests/export_corpus.cpp)
// to DIR for tools/gen_export_fixtures.py: <id>.onnx, <id>.mlir, the flattened inputs
// <id>.in<i>.pb and kiln's outputs <id>.kiln<j>.pb (TensorProtos), and corpus.txt with one
// line "<id> <inputs> <outputs> both|onnxruntime" per run (kiln_test::export_runs: the
// symbolic-batch cases again at another batch size, ONNX only, with the same ONNX file).
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
  const std::vector<kiln_test::ExportCase> corpus = kiln_test::export_corpus();
  for (const kiln_test::ExportRun& r : kiln_test::export_runs(corpus)) {
    const std::string stem = dir + "/" + r.id;
    // Exported at the case's example arguments, whatever batch this run feeds it.
    write(stem + ".onnx", kiln::export_onnx(r.c->fn, r.c->args, kiln_test::export_options(*r.c)));
    if (r.stablehlo) {
      const std::string hlo = kiln::export_stablehlo(r.c->fn, r.c->args);
      write(stem + ".mlir", {hlo.begin(), hlo.end()});
    }
    const std::vector<kiln::Array> in = kiln::tree_flatten(kiln::Tree(kiln::Tree::List(r.args->begin(), r.args->end()))).first;
    const std::vector<kiln::Array> out = kiln::tree_flatten(kiln::jit(r.c->fn)(*r.args)).first;
    for (size_t i = 0; i < in.size(); i++) write(stem + ".in" + std::to_string(i) + ".pb", kiln::export_onnx_tensor(in[i]));
    for (size_t j = 0; j < out.size(); j++) write(stem + ".kiln" + std::to_string(j) + ".pb", kiln::export_onnx_tensor(out[j]));
    manifest << r.id << " " << in.size() << " " << out.size() << " " << (r.stablehlo ? "both" : "onnxruntime") << "\n";
    std::printf("%s: %zu inputs, %zu outputs\n", r.id.c_str(), in.size(), out.size());
    std::fflush(stdout);
  }
  return 0;
}
