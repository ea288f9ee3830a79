// Compiling generated C++ to shared objects with the system compiler, loading them with
// dlopen, and caching them by hash in-process and on disk.
#pragma once
#include <cstdint>
#include <string>

namespace kiln::native {

using KernelFn = void (*)(void* const* bufs, const int64_t* counts, int64_t begin, int64_t end);

struct CompilerConfig {
  std::string cxx;        // $KILN_CXX, else "c++"
  std::string flags;      // the flags kernels are compiled with
  std::string version;    // first line of `cxx --version`, part of the cache key
  std::string cache_dir;  // $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln
  bool debug = false;     // $KILN_NATIVE_DEBUG=1: errors include the source; <hash>.cpp kept
};
const CompilerConfig& compiler_config();
// Switches the compiler ("" restores $KILN_CXX or c++); kernels already loaded stay.
void set_compiler(const std::string& cxx);

// The kernel function of `source`: from the in-process cache, else the disk cache, else
// compiled now. Throws kiln::Error when the compiler is missing or rejects the source.
KernelFn load_kernel(const std::string& source);

struct CompileStats {
  int64_t compiled = 0;     // compiler runs
  int64_t disk_hits = 0;    // shared objects found in the cache dir
  int64_t memory_hits = 0;  // found in this process
  double compile_seconds = 0;
};
CompileStats compile_stats();

// 128-bit FNV-1a style hash as 32 hex digits (two independent 64-bit lanes).
std::string hash_hex(const std::string& s);

}  // namespace kiln::native
