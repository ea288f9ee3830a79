// The long leak run (issue 17): trains the MNIST CNN of examples/mnist for N jitted steps and
// M eager steps, then generates T tokens with SmolLM2 (when data/models has it), and prints
// kiln::memory_stats every K steps, plus the process's resident set. tests/memory_test.cpp and
// Llm.DecodeKeepsMemoryFlat assert the same flatness over short runs; results in
// bench/results/leaks.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>
#include <unistd.h>

#include "backend/backend.h"
#include "kiln/kiln.h"
#include "kiln/llm.h"
#include "mnist/data.h"
#include "mnist/train.h"

namespace {

struct Options {
  std::string device = "native";
  int64_t steps = 10000, eager_steps = 1000, batch = 8, every = 1000, warmup = 10;
  int64_t llm_tokens = 1000;
  std::string model = "data/models/SmolLM2-135M-Instruct.Q4_1.gguf";
};

// Resident set size in MiB (/proc/self/statm): malloc's own caching moves it, so it is shown,
// not judged.
double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

std::string flat_part(const kiln::MemoryStats& s, const std::string& dev) {
  const kiln::DeviceMemoryStats& d = s.device(dev);
  return std::to_string(s.arrays) + "/" + std::to_string(d.buffers) + "/" + std::to_string(d.bytes) +
         "/" + std::to_string(d.backend_buffers) + "/" + std::to_string(d.pooled_buffers);
}

void print_row(const char* mode, int64_t s, const std::string& device, double value);

// Runs `steps` steps and prints a row every `every`; returns whether the counters after the
// warm-up equal those at every printed step and at the end.
bool run(const char* mode, bool jit, const Options& o, const mnist::Split& data) {
  mnist::Trainer t(mnist::Model::Cnn, 1e-3, 0, 128, jit);
  std::vector<int32_t> order(size_t(data.size()));
  std::iota(order.begin(), order.end(), 0);
  int64_t next = 0;
  std::string warm;
  bool flat = true;
  double loss = 0;
  for (int64_t s = 1; s <= (jit ? o.steps : o.eager_steps); s++) {
    if (next + o.batch > data.size()) next = 0;
    {
      auto [x, y] = mnist::batch(data, order, next, next + o.batch);
      loss = t.train_step(x, y);
    }
    next += o.batch;
    if (s == o.warmup) warm = flat_part(kiln::memory_stats(), o.device);
    const bool last = s == (jit ? o.steps : o.eager_steps);
    if (s == 1 || s == o.warmup || s % o.every == 0 || last) {
      if (s >= o.warmup && flat_part(kiln::memory_stats(), o.device) != warm) flat = false;
      print_row(mode, s, o.device, loss);
    }
  }
  return flat;
}

void print_row(const char* mode, int64_t s, const std::string& device, double value) {
  kiln::MemoryStats m = kiln::memory_stats();
  const kiln::DeviceMemoryStats& d = m.device(device);
  std::printf("| %s | %lld | %lld | %lld | %lld | %lld | %lld / %lld | %lld | %.1f | %.4f |\n", mode,
              (long long)s, (long long)m.arrays, (long long)d.buffers, (long long)d.bytes,
              (long long)d.backend_buffers, (long long)d.pooled_buffers, (long long)d.pooled_bytes,
              (long long)d.peak_bytes, rss_mib(), value);
  std::fflush(stdout);
}

// Decodes `llm_tokens` tokens (EOS ignored) one Generation step at a time; the last column
// is the rate since the previous row (tok/s; the first row includes load, prefill and compiles).
bool run_llm(const Options& o) {
  kiln::llm::LoadOptions lo;
  lo.device = o.device;
  lo.n_ctx = o.llm_tokens + 64;
  kiln::llm::Model model = kiln::llm::Model::load(o.model, lo);
  kiln::llm::GenerateOptions g;
  g.max_tokens = int(o.llm_tokens);
  g.ignore_eos = true;
  kiln::llm::Generation gen = model.start("Once upon a time", g);
  std::string warm;
  bool flat = true;
  auto t0 = std::chrono::steady_clock::now();
  int64_t since = 0;  // the token of the previous row
  for (int64_t s = 1; s <= o.llm_tokens && !gen.done(); s++) {
    gen.next();
    if (s == o.warmup) warm = flat_part(kiln::memory_stats(), o.device);
    if (s >= o.warmup && !gen.done() && flat_part(kiln::memory_stats(), o.device) != warm) flat = false;
    if (s == 1 || s == o.warmup || s % 100 == 0 || s == o.llm_tokens) {
      const auto now = std::chrono::steady_clock::now();
      const double sec = std::chrono::duration<double>(now - t0).count();
      print_row("llm decode", s, o.device, double(s - since) / sec);  // since the last row
      t0 = now, since = s;
    }
  }
  return flat;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--device") o.device = v;
    else if (a == "--steps") o.steps = std::atoll(v.c_str());
    else if (a == "--eager-steps") o.eager_steps = std::atoll(v.c_str());
    else if (a == "--batch") o.batch = std::atoll(v.c_str());
    else if (a == "--every") o.every = std::atoll(v.c_str());
    else if (a == "--llm-tokens") o.llm_tokens = std::atoll(v.c_str());
    else if (a == "--model") o.model = v;
    else {
      std::fprintf(stderr,
                   "usage: kiln_bench_leaks [--device D] [--steps N] [--eager-steps N] [--batch B] "
                   "[--every K] [--llm-tokens T] [--model FILE.gguf]\n");
      return 2;
    }
  }
  kiln::set_default_device(o.device);
  mnist::Dataset d = mnist::load("mnist", mnist::default_dir("mnist"));
  std::printf("device %s, batch %lld; counters after step %lld must equal those at every later row\n\n",
              o.device.c_str(), (long long)o.batch, (long long)o.warmup);
  std::printf("| mode | step | arrays | buffers | bytes | backend table | pooled buffers / bytes | peak bytes | RSS MiB | loss (llm: tok/s) |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  bool jit_flat = run("jit", true, o, d.train);
  bool eager_flat = run("eager", false, o, d.train);
  const bool has_model = o.llm_tokens > 0 && std::ifstream(o.model).good();
  const bool llm_flat = !has_model || run_llm(o);
  std::printf("\njit: %s; eager: %s; llm: %s\n", jit_flat ? "flat" : "GREW", eager_flat ? "flat" : "GREW",
              !has_model ? "not run (no model)" : llm_flat ? "flat" : "GREW");
  return jit_flat && eager_flat && llm_flat ? 0 : 1;
}
