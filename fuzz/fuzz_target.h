// KILN_FUZZ_TARGET(name): one fuzz entry point, built two ways: with -DKILN_LIBFUZZER as
// libFuzzer's LLVMFuzzerTestOneInput (make fuzz), and into kiln_tests for corpus replay.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace kiln::fuzz {

// A target returns 0; kiln::Error is the expected outcome of bad input and is caught
// inside it. Any other exception, or a broken property (check()), escapes: libFuzzer
// reports it as a crash, and the replay test (tests/fuzz_replay_test.cpp) as a failure.
using Target = int (*)(const uint8_t* data, size_t size);

inline std::map<std::string, Target>& targets() {
  static std::map<std::string, Target> t;
  return t;
}

struct Register {
  Register(const char* name, Target fn) { targets()[name] = fn; }
};

// A property of a successful parse; violating it is a bug, never bad input.
class PropertyError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};
inline void check(bool ok, const char* what) {
  if (!ok) throw PropertyError(what);
}

}  // namespace kiln::fuzz

#ifdef KILN_LIBFUZZER
#define KILN_FUZZ_ENTRY(name)                                                  \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {    \
    return kiln_fuzz_##name(data, size);                                       \
  }
#else
#define KILN_FUZZ_ENTRY(name) \
  static const kiln::fuzz::Register kiln_fuzz_register_##name(#name, kiln_fuzz_##name);
#endif

// Defines the target `name`: KILN_FUZZ_TARGET(idx) { ...body using data, size... }
#define KILN_FUZZ_TARGET(name)                                 \
  static int kiln_fuzz_##name(const uint8_t* data, size_t size); \
  KILN_FUZZ_ENTRY(name)                                        \
  static int kiln_fuzz_##name(const uint8_t* data, size_t size)
