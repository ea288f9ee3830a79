// In native builds $KILN_DEVICE (e.g. `native`) becomes the default device before any
// test runs, so the whole suite checks that backend against the same references.
#ifndef __EMSCRIPTEN__
#include <gtest/gtest.h>

#include <cstdlib>

#include "backend/backend.h"

namespace {
class DeviceEnvironment : public testing::Environment {
 public:
  void SetUp() override {
    if (const char* d = std::getenv("KILN_DEVICE"); d && *d) kiln::set_default_device(d);
  }
};
// Registered during static initialization, before gtest_main calls RUN_ALL_TESTS.
[[maybe_unused]] testing::Environment* const device_env =
    testing::AddGlobalTestEnvironment(new DeviceEnvironment);
}  // namespace
#endif
