// End-to-end training on real data: the small CNN of examples/mnist, one epoch over all
// 60k MNIST training images with Adam under jit, must reach >= 97% test accuracy.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "backend/backend.h"
#include "mnist/train.h"

namespace mnist_train_test {

namespace {

// The epoch runs on the `native` backend: ~36-72 s on the shared 2-core machine
// (2026-12-03), against many minutes on the cpu interpreter or the scalar wasm backend, and
// far more under ASan. So it runs in the release native suite and is skipped elsewhere.
// (Measured there: a 784-128-10 MLP reaches only ~95.5-96% after one epoch, 784-256-10
// 96.0%; this CNN with 8 filters 97.1%, with 16 filters 97.7%.)
bool native_available() {
#if defined(NDEBUG) && !defined(__EMSCRIPTEN__)
  for (const std::string& d : kiln::available_devices())
    if (d == "native") return true;
#endif
  return false;
}

TEST(MnistTraining, LoadsBothDataSets) {
  mnist::Dataset m = mnist::load("mnist", mnist::default_dir("mnist"));
  EXPECT_EQ(m.train.size(), 60000);
  EXPECT_EQ(m.test.size(), 10000);
  EXPECT_EQ(m.test.labels[0], 7);  // the first MNIST test digit is a 7
  // Fashion-MNIST as Debian ships it: gzipped IDX, through kiln::io's inflate.
  mnist::Dataset f = mnist::load("fashion", mnist::default_dir("fashion"));
  EXPECT_EQ(f.train.size(), 60000);
  EXPECT_EQ(f.test.size(), 10000);
  EXPECT_EQ(f.test.labels[0], 9);  // the first Fashion-MNIST test item is an ankle boot
  int64_t per_class[10] = {};
  for (int32_t l : f.train.labels) per_class[l]++;
  for (int64_t c : per_class) EXPECT_EQ(c, 6000);  // Fashion-MNIST is balanced
  float mx = 0;
  for (float v : m.train.images) mx = std::max(mx, v);
  EXPECT_EQ(mx, 1.0f);  // pixels scaled from 0..255 to [0, 1]
  EXPECT_THROW(mnist::load("cifar", "."), kiln::Error);
}

TEST(MnistTraining, OneEpochSmallCnnReaches97Percent) {
  if (!native_available())
    GTEST_SKIP() << "runs on the native backend in release builds (minutes elsewhere)";
  std::string saved = kiln::default_device();
  kiln::set_default_device("native");
  mnist::Dataset d = mnist::load("mnist", mnist::default_dir("mnist"));
  mnist::Trainer t(mnist::Model::SmallCnn, 2e-3, 0);
  auto start = std::chrono::steady_clock::now();
  double loss = t.train_epoch(d.train, 32, 0);
  double acc = t.accuracy(d.test);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ mnist    ] device %s: one epoch, train loss %.4f, test accuracy %.2f%%, %.1f s\n",
              kiln::default_device().c_str(), loss, 100 * acc, secs);
  kiln::set_default_device(saved);
  EXPECT_LT(loss, 0.5);
  EXPECT_GE(acc, 0.97);
}

}  // namespace

}  // namespace mnist_train_test
