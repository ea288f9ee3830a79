// make demo: a short worked example of kiln's C++ API — arrays, broadcasting, reductions,
// views, and the fused kernels they become.
#include <cstdio>
#include <iostream>

#include "frontend/array_impl.h"
#include "kiln/kiln.h"

namespace np = kiln::numpy;
using kiln::Array;
using kiln::Slice;

int main() {
  std::cout << "kiln demo (device: " << kiln::default_device() << ")\n\n";

  Array x = np::arange(6, kiln::float32).reshape({2, 3});
  Array b = np::array(std::vector<float>{10, 20, 30}, {3});
  std::cout << "x =\n" << x.to_string() << "\n";
  std::cout << "b = " << b.to_string() << "\n\n";

  // Elementwise ops are lazy: (x + b) and the sum over axis 1 fuse into one kernel.
  {
    kiln::frontend::KernelRecorder rec;
    Array y = np::sum(x + b, 1);
    std::cout << "sum(x + b, axis=1) = " << y.to_string() << "\n";
    std::cout << "it ran " << rec.kernels().size() << " kernel:\n" << rec.kernels()[0].to_string() << "\n";
  }

  // Movement ops are views: no copies until a kernel reads them.
  Array t = x.T()[{Slice{std::nullopt, std::nullopt, -1}}];
  std::cout << "x.T[::-1] =\n" << t.to_string() << "\n\n";

  // Weak typing: Python-like scalars adopt the array's dtype.
  Array h = np::ones({2}, kiln::float16) * 3.0;
  std::cout << "float16 ones * 3.0 -> " << kiln::dtype_name(h.dtype()) << " " << h.to_string() << "\n";

  // Linear algebra and reductions.
  Array m = np::matmul(x, x.T());
  std::cout << "x @ x.T =\n" << m.to_string() << "\n";
  std::cout << "mean " << np::mean(x).item() << ", std " << np::std(x).item()
            << ", argmax of each column " << np::argmax(x, 0).to_string() << "\n\n";

  // Errors name the operation, what it got and what it expected.
  try {
    np::add(x, np::ones({4}));
  } catch (const kiln::Error& e) {
    std::cout << "error: " << e.what() << "\n";
  }
  return 0;
}
