// Cost of indexed updates written with primitives (numpy::at, a one-hot [K, M] comparison
// reduced over K): x.at[idx].add(u) and .set(u) for n-element x and k indices, jitted, with
// a gather (x[idx], one read per index) of the same sizes for scale. Usage:
//   kiln_scatter_bench [device] [n] [k]      (defaults: the default device, 100000, 1000)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend/backend.h"
#include "bench_common.h"
#include "kiln/kiln.h"

int main(int argc, char** argv) {
  namespace np = kiln::numpy;
  if (argc > 1) kiln::set_default_device(argv[1]);
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 100000, k = argc > 3 ? std::atoll(argv[3]) : 1000;
  kiln::Array x = np::linspace(0, 1, n);
  kiln::Array idx = (np::arange(int(k)) * 7919) % kiln::Array(int(n));
  kiln::Array u = np::ones({k});
  auto run = [&](const char* name, kiln::Fn f) {
    kiln::Fn jf = kiln::jit(f);
    double first = 0;
    double t = kiln_bench::time_per_call([&] { jf({x, idx, u}).array().eval().item(); }, 10, &first);
    // item() of one element syncs; the whole result is computed.
    std::printf("%-8s %s n=%lld k=%lld: %.3f ms per call (first %.0f ms)\n", name, kiln::default_device().c_str(),
                (long long)n, (long long)k, t * 1e3, first * 1e3);
  };
  run("gather", [](const std::vector<kiln::Tree>& a) -> kiln::Tree {
    return np::sum(np::take(a[0].array(), a[1].array()));
  });
  run("add", [](const std::vector<kiln::Tree>& a) -> kiln::Tree {
    return np::sum(np::at(a[0].array(), {a[1].array()}).add(a[2].array()));
  });
  run("set", [](const std::vector<kiln::Tree>& a) -> kiln::Tree {
    return np::sum(np::at(a[0].array(), {a[1].array()}).set(a[2].array()));
  });
  run("grad", [](const std::vector<kiln::Tree>& a) -> kiln::Tree {
    auto loss = [&](const std::vector<kiln::Tree>& b) -> kiln::Tree {
      return np::sum(np::sin(np::at(b[0].array(), {a[1].array()}).add(b[1].array())));
    };
    kiln::Tree g = kiln::grad(loss, std::vector<int>{0, 1})({a[0], a[2]});
    return np::sum(g.list()[0].array()) + np::sum(g.list()[1].array());
  });
  return 0;
}
