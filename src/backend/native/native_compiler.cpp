// The native kernel compiler: spawn the system C++ compiler on generated source, dlopen
// the result, and keep shared objects by hash of (source, compiler version, flags).
#include "backend/native/native_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "ir/error.h"

extern char** environ;

namespace kiln::native {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// -O3: g++ 12 at -O2 vectorizes only with its "very cheap" cost model, which leaves the
// register-tiled matmul scalar: 256^3 ran at 16 GFLOP/s (-O2) vs 41 (-O3) on one core of
// the 2-core Xeon dev machine (2026-12), for ~1.5x the compile time of that kernel.
// -fno-builtin: libm calls stay calls to glibc (exactly the interpreter's functions).
// -ffp-contract=off: no fused multiply-add, which would round differently from alu_eval.
// -fno-trapping-math: kiln reads no floating-point exception flags, and without it g++ will
// not if-convert a select whose arms it sank into branches, so a kernel holding float32
// exp or tanh (ir/float32_math.h: selects around the steps) stayed a scalar loop ("control
// flow in loop"). Values are unchanged: it licenses no reassociation, reciprocal or
// finite-only rewrite.
// -nostdlib: kernels need only libm, which the host process has already loaded.
// -pipe: the assembly goes to `as` through a pipe, not a temporary file (same code; 319
// kernels of Qr.MatchesJax took 16.2 s of compiler CPU against 18.7 s, one pair of runs on the
// loaded 2-core machine).
// No -march=native: the cache dir may be shared between machines (a home directory), and
// the key would then have to name the CPU. Instead the flags name one ISA level, chosen by
// the host's CPU (host_isa_flags); flags are part of the cache key, so a machine without it
// never loads such a kernel.
const char* kDefaultFlags =
    "-O3 -pipe -fPIC -shared -nostdlib -fno-builtin -fno-math-errno -ffp-contract=off -fno-trapping-math -fno-exceptions -w";

// x86-64-v3 (AVX2, FMA, F16C, BMI2: 8 float lanes) where the CPU has it, else baseline x86-64
// (SSE2, 4 lanes). `-march=x86-64-v3`, not `-mavx2 -mfma ...`: with the separate feature
// flags g++ 12 produced kernels no faster than SSE2 ones (6.76 vs 6.73-6.90 s of CPU for
// SmolLM2's 256-token prefill and 63 decode steps), with the level 4.87 s. g++ vectorizes
// the kernels' lanes over gidx, never reassociating a float sum, and -ffp-contract=off keeps
// FMA out, so the results are the same bits at either level; only the
// width changes. SmolLM2's decode step (packed q4_1 matvecs, 16 interleaved rows per column)
// got faster with it on the 2-core Zen 4 (bench/results/llm.md). AVX-512 (x86-64-v4) is not
// chosen: in one loaded comparison there it decoded faster than AVX2 but prefilled slower,
// and kiln must not depend on it.
std::string host_isa_flags() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
      __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))
    return " -march=x86-64-v3";
#endif
  return "";
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

// Runs argv with stdout+stderr into `log`; returns the exit status (127: not runnable).
int spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

std::string temp_suffix() {
  static std::atomic<int64_t> counter{0};
  return "." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

CompilerConfig make_config(const std::string& cxx) {
  CompilerConfig c;
  c.cxx = cxx.empty() ? env_or("KILN_CXX", "c++") : cxx;
  c.flags = env_or("KILN_NATIVE_FLAGS", kDefaultFlags + host_isa_flags());
  std::string home = env_or("HOME", "");
  std::string xdg = env_or("XDG_CACHE_HOME", home.empty() ? "" : home + "/.cache");
  c.cache_dir = env_or("KILN_CACHE_DIR", xdg.empty() ? (fs::temp_directory_path() / "kiln").string() : xdg + "/kiln");
  c.debug = env_or("KILN_NATIVE_DEBUG", "0") != "0";
  // The compiler's version is part of every cache key, so upgrading g++ recompiles.
  std::error_code ec;
  fs::create_directories(c.cache_dir, ec);
  fs::path log = fs::path(c.cache_dir) / ("version" + temp_suffix() + ".txt");
  if (ec || spawn({c.cxx, "--version"}, log.string()) != 0) {
    fs::remove(log, ec);
    c.version.clear();  // reported when the first kernel needs compiling
    return c;
  }
  std::string v = read_file(log);
  fs::remove(log, ec);
  c.version = v.substr(0, v.find('\n'));
  return c;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, KernelFn> loaded;  // by hash
  CompileStats stats;
};
Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: loaded kernels stay mapped until exit
  return *c;
}

KernelFn open_so(const fs::path& so, std::string* err) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    *err = dlerror();
    return nullptr;
  }
  void* f = dlsym(h, "kiln_kernel");
  if (!f) {
    *err = "no symbol kiln_kernel";
    dlclose(h);
    return nullptr;
  }
  return reinterpret_cast<KernelFn>(f);
}

}  // namespace

namespace {
CompilerConfig& config_storage() {
  static CompilerConfig c = make_config("");
  return c;
}
}  // namespace

const CompilerConfig& compiler_config() { return config_storage(); }

void set_compiler(const std::string& cxx) {
  std::lock_guard<std::mutex> lock(cache().mu);
  config_storage() = make_config(cxx);
}

std::string hash_hex(const std::string& s) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char ch : s) {
    a = (a ^ ch) * 0x100000001b3ull;
    b = (b ^ ch) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
    b ^= b >> 29;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return buf;
}

CompileStats compile_stats() {
  std::lock_guard<std::mutex> lock(cache().mu);
  return cache().stats;
}

KernelFn load_kernel(const std::string& source) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  const CompilerConfig cfg = compiler_config();
  const std::string key = hash_hex(cfg.version + "\n" + cfg.cxx + "\n" + cfg.flags + "\n" + source);
  if (auto it = c.loaded.find(key); it != c.loaded.end()) {
    c.stats.memory_hits++;
    return it->second;
  }
  auto with_source = [&](const std::string& msg) {
    return cfg.debug ? msg + "\n--- generated source ---\n" + source : msg + " (set KILN_NATIVE_DEBUG=1 to see the source)";
  };
  const fs::path so = fs::path(cfg.cache_dir) / (key + ".so");
  std::string err;
  std::error_code ec;
  if (fs::exists(so, ec)) {
    if (KernelFn f = open_so(so, &err)) {
      c.stats.disk_hits++;
      return c.loaded[key] = f;
    }
    fs::remove(so, ec);  // a damaged entry: rebuild it
  }
  if (cfg.version.empty())
    fail("native.compile", "cannot run the C++ compiler '", cfg.cxx,
         "' (set KILN_CXX to a working g++ or clang++), expected `", cfg.cxx, " --version` to succeed");
  fs::create_directories(cfg.cache_dir, ec);
  if (ec) fail("native.compile", "cannot create the cache dir ", cfg.cache_dir, ": ", ec.message());
  // Write and compile under unique names, then rename: parallel processes sharing the
  // cache dir never see a half-written object.
  const std::string tmp = temp_suffix();
  const fs::path src = fs::path(cfg.cache_dir) / (key + tmp + ".cpp");
  const fs::path out = fs::path(cfg.cache_dir) / (key + tmp + ".so");
  const fs::path log = fs::path(cfg.cache_dir) / (key + tmp + ".log");
  {
    std::ofstream f(src, std::ios::binary);
    f << source;
    if (!f) fail("native.compile", "cannot write ", src.string());
  }
  std::vector<std::string> args = {cfg.cxx};
  for (auto& w : split_words(cfg.flags)) args.push_back(w);
  args.insert(args.end(), {"-o", out.string(), src.string(), "-lm"});
  auto t0 = std::chrono::steady_clock::now();
  int rc = spawn(args, log.string());
  c.stats.compile_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.stats.compiled++;
  std::string diag = read_file(log);
  if (cfg.debug && rc == 0) fs::rename(src, fs::path(cfg.cache_dir) / (key + ".cpp"), ec);  // for reading
  fs::remove(src, ec);
  fs::remove(log, ec);
  if (rc != 0) {
    fs::remove(out, ec);
    throw Error(with_source("native.compile: " + cfg.cxx + " exited with status " + std::to_string(rc) +
                            ", expected 0:\n" + diag));
  }
  fs::rename(out, so, ec);
  if (ec) fail("native.compile", "cannot move ", out.string(), " into the cache: ", ec.message());
  KernelFn f = open_so(so, &err);
  if (!f) throw Error(with_source("native.compile: dlopen of " + so.string() + " failed: " + err));
  return c.loaded[key] = f;
}

}  // namespace kiln::native
