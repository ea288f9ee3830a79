// Under Emscripten the whole suite runs on the `wasm` device (or on $KILN_DEVICE): a
// GoogleTest environment sets the default before any test, so every NumPy case checks it.
#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#include <gtest/gtest.h>

#include <string>

#include "backend/backend.h"

namespace {
// Emscripten's getenv does not see Node's environment, so ask process.env directly.
EM_JS(void, kiln_test_device_env, (char* buf, int n), {
  var d = (typeof process != 'undefined' && process.env['KILN_DEVICE']) || 'wasm';
  stringToUTF8(d, buf, n);
});

class DeviceEnvironment : public testing::Environment {
 public:
  void SetUp() override {
    char buf[64];
    kiln_test_device_env(buf, sizeof buf);
    kiln::set_default_device(buf);
  }
};
// Registered during static initialization, before gtest_main calls RUN_ALL_TESTS.
[[maybe_unused]] testing::Environment* const device_env =
    testing::AddGlobalTestEnvironment(new DeviceEnvironment);
}  // namespace
#endif
