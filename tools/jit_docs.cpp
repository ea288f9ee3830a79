// Prints make_jaxpr output and the fused kernels of three functions, for the jit section
// of docs/ARCHITECTURE.md (`make jit-docs`), so the docs are generated, not typed.
#include <cmath>
#include <cstdio>

#include "frontend/array_impl.h"
#include "kiln/kiln.h"

using namespace kiln;
namespace np = kiln::numpy;

static void show(const char* title, const Fn& f, const std::vector<Tree>& args) {
  std::printf("### %s\n\n```\n%s\n```\n\n", title, make_jaxpr(f, args).str().c_str());
  Fn jf = jit(f);
  jf(args);
  frontend::KernelRecorder rec;
  jf(args);
  std::printf("fuses into %zu kernel%s:\n\n```\n", rec.kernels().size(), rec.kernels().size() == 1 ? "" : "s");
  for (auto& k : rec.kernels()) std::printf("%s", k.to_string().c_str());
  std::printf("```\n\n");
}

int main() {
  show("gelu(x @ w + b)",
       [](const std::vector<Tree>& a) {
         Array y = np::matmul(a[0].as_array(), a[1].as_array()) + a[2].as_array();
         const float c = std::sqrt(2.0f / float(M_PI));
         return Tree(0.5f * y * (1.0f + np::tanh(c * (y + 0.044715f * y * y * y))));
       },
       {np::ones({2, 3}), np::ones({3, 4}), np::ones({4})});
  show("layer norm (E[x^2] - E[x]^2, as flax)",
       [](const std::vector<Tree>& a) {
         Array x = a[0].as_array();
         Array m = np::mean(x, {-1}, true), m2 = np::mean(x * x, {-1}, true);
         return Tree((x - m) * np::rsqrt(m2 - m * m + 1e-5f));
       },
       {np::ones({2, 8})});
  show("Adam update of one parameter (t fixed at 1)",
       [](const std::vector<Tree>& a) {
         Array p = a[0].as_array(), g = a[1].as_array(), m = a[2].as_array(), v = a[3].as_array();
         Array m1 = 0.9f * m + 0.1f * g, v1 = 0.999f * v + 0.001f * g * g;
         Array upd = (m1 / 0.1f) / (np::sqrt(v1 / 0.001f) + 1e-8f);
         return Tree(Tree::List{p - 1e-3f * upd, m1, v1});
       },
       {np::ones({4}), np::ones({4}), np::ones({4}), np::ones({4})});
  return 0;
}
