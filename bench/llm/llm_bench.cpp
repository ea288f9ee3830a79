// kiln_llm_bench: prefill and decode speed of a GGUF model on one kiln device, the kiln half of
// bench/llm/bench.mjs (which runs llama.cpp on the same prompt and prints the ratios). Built
// natively and with em++ (run under Node for the `wasm` device) from this one file, so both
// backends are timed by the same code: Model::generate_ids's GenerateStats.
//
//   kiln_llm_bench --model FILE.gguf --ids FILE [--device native|wasm|cpu] [--gen 128]
//                  [--reps 5] [--ctx N] [--profile N] [--debug N] [--host-argmax] [--float-matvec]
// --ids: a file of whitespace-separated prompt token ids (the driver writes llama.cpp's
// tokenization of its prompt, so both runtimes see the same tokens). Threads come from
// $KILN_NUM_THREADS (native pool and wasm worker pool alike).
// Prints one JSON object per line: {"load_ms"}, then per run {"run", "warmup", "prompt_tokens",
// "generated", "prefill_ms", "decode_ms", "stop"}; the first run is a warm-up that compiles
// every kernel (prefill bucket and decode step) and is not counted by the driver.
// --profile N: afterwards, decodes N more tokens under the kernel profiler and prints the
// kernels by total time (one {"kernel"} line each, the largest first), to see where a decode
// step's time goes. "cpu_ms" on the run and profile lines is the process's CPU time over the same
// span (all its threads): on a shared machine it changes less with other processes' load than
// wall time does, so two builds' host-side costs can be compared there.
// --host-argmax: greedy tokens chosen on the host from each step's logits row (what every step
// did before the step computed its argmax on the device), for a before/after in one binary.
// --float-matvec: the q4/q8 matrices keep the float matvec (no quantized_matmul routine), for
// a before/after of issue 19's integer-dot matvecs in one binary ($KILN_LLM_INT_DOT=0 natively).
// --debug N: kiln::set_debug(N) before loading (1: each compiled kernel and, on wasm, its loop
// kind; 3: kernel expressions). $KILN_DEBUG does the same natively, but Emscripten's getenv
// does not see Node's environment.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kiln/debug.h"
#include "kiln/llm.h"
#include "models/quantized_weights.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
// Emscripten's clock() is wall time; Node's process.cpuUsage() is the process's CPU time.
EM_JS(double, process_cpu_ms, (), {
  var u = process.cpuUsage();
  return (u.user + u.system) / 1000;
});
#else
#include <ctime>
double process_cpu_ms() { return 1000.0 * double(std::clock()) / CLOCKS_PER_SEC; }
#endif

namespace {

struct Args {
  std::string model, ids_file, device = "native";
  int gen = 128, reps = 5, profile = 0, debug = 0;
  int64_t ctx = 0;  // 0: prompt + gen, the smallest cache (decode attends over all of it)
  bool host_argmax = false;  // GenerateOptions::greedy_on_host: read the logits row per step
  bool float_matvec = false;
};

[[noreturn]] void usage(int code) {
  std::fprintf(stderr,
               "kiln_llm_bench --model FILE.gguf --ids FILE [--device native|wasm|cpu] [--gen N] "
               "[--reps N] [--ctx N] [--profile N] [--debug N] [--host-argmax] [--float-matvec]\n");
  std::exit(code);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    if (k == "--model") a.model = value();
    else if (k == "--ids") a.ids_file = value();
    else if (k == "--device") a.device = value();
    else if (k == "--gen") a.gen = std::stoi(value());
    else if (k == "--reps") a.reps = std::stoi(value());
    else if (k == "--ctx") a.ctx = std::stoll(value());
    else if (k == "--profile") a.profile = std::stoi(value());
    else if (k == "--debug") a.debug = std::stoi(value());
    else if (k == "--host-argmax") a.host_argmax = true;
    else if (k == "--float-matvec") a.float_matvec = true;
    else usage(k == "--help" ? 0 : 2);
  }
  if (a.model.empty() || a.ids_file.empty()) usage(2);
  return a;
}

std::vector<int32_t> read_ids(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::vector<int32_t> ids;
  for (int64_t v; f >> v;) ids.push_back(int32_t(v));
  if (ids.empty()) throw std::runtime_error(path + " holds no token ids");
  return ids;
}

// Decodes `tokens` tokens after the prompt with the profiler on (the prefill and the first
// token outside it) and prints the kernels by total time: name, dispatches, total and mean
// milliseconds, share of the traced kernel time.
void profile_decode(kiln::llm::Model& model, const std::vector<int32_t>& prompt, int tokens,
                    bool host_argmax) {
  kiln::llm::GenerateOptions opt;
  opt.max_tokens = tokens + 1;
  opt.sampling.temperature = 0;
  opt.ignore_eos = true;
  opt.greedy_on_host = host_argmax;
  kiln::llm::Generation g = model.start_ids(prompt, opt);
  g.next();
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_ms();
  kiln::start_trace();
  while (!g.done()) g.next();
  const std::vector<kiln::TraceEvent> events = kiln::stop_trace();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double cpu_ms = process_cpu_ms() - cpu0;
  struct Total { int count = 0; double ms = 0; };
  std::map<std::string, Total> by_name;
  double all = 0;
  for (const kiln::TraceEvent& e : events) {
    Total& t = by_name[e.name];
    t.count++, t.ms += e.duration_ms, all += e.duration_ms;
  }
  std::vector<std::pair<std::string, Total>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.ms > y.second.ms; });
  std::printf("{\"profile_tokens\": %d, \"kernels_ms\": %.2f, \"wall_ms\": %.2f, \"cpu_ms\": %.2f, \"dispatches\": %zu}\n",
              tokens, all, wall_ms, cpu_ms, events.size());
  for (const auto& [name, t] : rows)
    std::printf("{\"kernel\": \"%s\", \"count\": %d, \"total_ms\": %.3f, \"mean_ms\": %.4f, \"share\": %.3f}\n",
                name.c_str(), t.count, t.ms, t.ms / t.count, t.ms / all);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    const std::vector<int32_t> prompt = read_ids(a.ids_file);
    // Prompt + gen - 1 positions are written (the last token is sampled, never fed back).
    const int64_t ctx = a.ctx > 0 ? a.ctx : int64_t(prompt.size()) + a.gen;
    if (a.debug > 0) kiln::set_debug(a.debug);
    if (a.float_matvec) kiln::models::set_int_dot_matvecs(false);
    const auto t0 = std::chrono::steady_clock::now();
    kiln::llm::Model model = kiln::llm::Model::load(a.model, {a.device, ctx, 32});
    const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"load_ms\": %.1f, \"device\": \"%s\", \"n_ctx\": %lld}\n", load_ms, model.device().c_str(),
                (long long)model.n_ctx());
    std::fflush(stdout);
    kiln::llm::GenerateOptions opt;
    opt.max_tokens = a.gen;
    opt.sampling.temperature = 0;  // greedy, as the llama.cpp side
    opt.ignore_eos = true;         // exactly `gen` tokens, whatever the (maybe random) model says
    opt.greedy_on_host = a.host_argmax;
    for (int r = 0; r <= a.reps; ++r) {
      kiln::llm::GenerateStats st;
      const double cpu0 = process_cpu_ms();
      model.generate_ids(prompt, opt, nullptr, &st);
      std::printf("{\"run\": %d, \"warmup\": %s, \"prompt_tokens\": %lld, \"generated\": %lld, "
                  "\"prefill_ms\": %.2f, \"decode_ms\": %.2f, \"cpu_ms\": %.2f, \"stop\": \"%s\"}\n",
                  r, r == 0 ? "true" : "false", (long long)st.prompt_tokens, (long long)st.generated_tokens,
                  st.prefill_ms, st.decode_ms, process_cpu_ms() - cpu0, st.stop_reason.c_str());
      std::fflush(stdout);
    }
    if (a.profile > 0) profile_decode(model, prompt, a.profile, a.host_argmax);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_llm_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
