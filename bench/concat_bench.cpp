// Concatenations on the native device (index-set splitting, docs/ARCHITECTURE.md): the cases of
// bench/wasm/concat_split.mjs (four branches of ~2^16 elements each: tanh, exp * 0.5,
// x * 2 + 1 and a constant, or four plain copies; along the outermost axis and along the last
// axis of rows of 4 x W), as the median process CPU ms per jitted call (output read back).
// Run it with KILN_INDEX_SPLIT=0 and without, alternated, for an A/B within one build:
//   g++ -std=c++20 -O2 -Isrc -Iinclude bench/concat_bench.cpp build/native/libkiln.a -lpthread -o build/native/concat_bench
//   KILN_NUM_THREADS=1 ./build/native/concat_bench
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "kiln/kiln.h"

using namespace kiln;
namespace np = kiln::numpy;

namespace {

double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

Array ramp(const Shape& s, float k) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[size_t(i)] = std::sin(float(i) * 0.37f + k);
  return np::array(v, s);
}

void measure(const char* name, const Shape& shape, int axis, bool heavy, int reps) {
  Fn f = kiln::jit([=](const std::vector<Tree>& a) {
    std::vector<Array> parts;
    if (heavy)
      parts = {np::tanh(a[0].as_array()), np::exp(a[1].as_array()) * 0.5f, a[2].as_array() * 2.0f + 1.0f,
               np::full(shape, np::asarray(Array(1.25f)))};
    else
      parts = {a[0].as_array(), a[1].as_array(), a[2].as_array(), a[3].as_array()};
    return Tree(np::concatenate(parts, axis));
  });
  std::vector<Tree> args;
  for (int k = 0; k < 4; k++) args.push_back(Tree(ramp(shape, float(k))));
  auto once = [&] { f(args).as_array().to_vector<float>(); };
  for (int i = 0; i < 5; i++) once();
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    const double c = cpu_ms();
    once();
    t.push_back(cpu_ms() - c);
  }
  std::sort(t.begin(), t.end());
  std::printf("| %s | %.3f |\n", name, t[t.size() / 2]);
}

}  // namespace

int main() {
  const int64_t n = 1 << 16;
  kiln::set_default_device("native");
  const char* split = std::getenv("KILN_INDEX_SPLIT");
  std::printf("device %s, KILN_INDEX_SPLIT=%s\n| concatenation | median CPU ms per call |\n|---|---|\n",
              kiln::default_device().c_str(), split ? split : "(unset)");
  measure("outermost axis", {n}, 0, true, 100);
  for (int64_t w : {4, 5, 8, 9, 16, 64, 256}) {
    const std::string name = "last axis, rows of 4 x " + std::to_string(w);
    measure(name.c_str(), {n / w, w}, 1, true, 100);
  }
  measure("copies, outermost axis", {n}, 0, false, 100);
  for (int64_t w : {4, 8, 64}) {
    const std::string name = "copies, last axis, rows of 4 x " + std::to_string(w);
    measure(name.c_str(), {n / w, w}, 1, false, 100);
  }
}
