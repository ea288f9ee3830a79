// kiln::memory_stats and leaks: the counters follow allocations exactly, and training the
// MNIST CNN (jitted and eager) leaves arrays and every device's buffers flat once warm.
// bench/leaks.cpp runs the same loops for 10 000 steps (bench/results/leaks.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "kiln/kiln.h"
#include "mnist/data.h"
#include "mnist/train.h"

namespace memory_test {

namespace np = kiln::numpy;

namespace {

// What must stay flat, as text so that a failure prints both sides: live arrays, and per
// device the live buffers, their bytes, the backend's own table and the jit pool's share.
std::string flat_part(const kiln::MemoryStats& s) {
  std::ostringstream os;
  os << "arrays " << s.arrays;
  for (const kiln::DeviceMemoryStats& d : s.devices)
    os << "; " << d.device << ": " << d.buffers << " buffers, " << d.bytes << " bytes, table "
       << d.backend_buffers << ", pooled " << d.pooled_buffers << "/" << d.pooled_bytes;
  return os.str();
}

// Runs `warmup` steps, takes the counters, then `steps` more steps, and expects the same
// counters after every one of them. Batches cycle through the first 512 training images,
// so the loop's inputs are fresh arrays each step, as in training.
void expect_flat(mnist::Trainer& t, const mnist::Split& data, int64_t batch, int warmup,
                 int steps) {
  std::vector<int32_t> order(512);
  std::iota(order.begin(), order.end(), 0);
  int64_t next = 0;
  auto step = [&] {
    auto [x, y] = mnist::batch(data, order, next, next + batch);
    next = (next + batch) % int64_t(order.size());
    return t.train_step(x, y);
  };
  for (int i = 0; i < warmup; i++) step();
  const std::string warm = flat_part(kiln::memory_stats());
  double first = 0, last = 0;
  for (int i = 0; i < steps; i++) {
    last = step();
    if (i == 0) first = last;
    const std::string now = flat_part(kiln::memory_stats());
    ASSERT_EQ(now, warm) << "after " << warmup << " + " << i + 1 << " steps on "
                         << kiln::default_device();
  }
  // The steps trained (the loss is a real number that moved), so the loop did real work.
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_NE(first, last);
}

// Switches the default device for one test.
struct OnDevice {
  std::string saved = kiln::default_device();
  explicit OnDevice(const std::string& d) { kiln::set_default_device(d); }
  ~OnDevice() { kiln::set_default_device(saved); }
};

bool has_device(const std::string& d) {
  for (const std::string& n : kiln::available_devices())
    if (n == d) return true;
  return false;
}

const mnist::Split& train_split() {
  static const mnist::Dataset d = mnist::load("mnist", mnist::default_dir("mnist"));
  return d.train;
}

// Steps per loop: the brief's 200 jitted and 100 eager on compiled devices (native, wasm),
// fewer on the cpu interpreter (seconds per CNN step) and in sanitizer builds. A leak of one
// buffer or array per step shows at the first step after the warm-up anyway.
int jit_steps() {
  const int n = kiln::default_device() == "cpu" ? 10 : 200;
#if defined(NDEBUG)
  return n;
#else
  return n / 5;
#endif
}
int eager_steps() { return std::max(2, jit_steps() / 2); }  // 2: the loss must move
// Batch 8 as the long runs; 2 on the interpreter, whose CNN step costs grow with the batch.
int64_t batch_size() { return kiln::default_device() == "cpu" ? 2 : 8; }
constexpr int kWarmup = 3;

TEST(Memory, CountsBuffersArraysAndBytes) {
  const std::string dev = kiln::default_device();
  kiln::MemoryStats before = kiln::memory_stats();
  EXPECT_TRUE(before.device(dev).backend_buffers == -1 ||
              before.device(dev).backend_buffers == before.device(dev).buffers)
      << flat_part(before);
  {
    kiln::Array a = np::arange(1000, kiln::float32).eval();
    kiln::Array b = a;  // a second handle to the same array: not a new array
    kiln::MemoryStats during = kiln::memory_stats();
    EXPECT_EQ(during.arrays, before.arrays + 1);
    EXPECT_EQ(during.device(dev).buffers, before.device(dev).buffers + 1);
    EXPECT_EQ(during.device(dev).bytes, before.device(dev).bytes + 4000);
    EXPECT_GE(during.device(dev).peak_bytes, during.device(dev).bytes);
    EXPECT_EQ(during.device(dev).allocations, before.device(dev).allocations + 1);
    EXPECT_EQ(during.buffers(), before.buffers() + 1);
    EXPECT_EQ(during.bytes(), before.bytes() + 4000);
    if (during.device(dev).backend_buffers != -1) {
      EXPECT_EQ(during.device(dev).backend_buffers, during.device(dev).buffers);
    }
  }
  kiln::MemoryStats after = kiln::memory_stats();
  EXPECT_EQ(flat_part(after), flat_part(before));
  EXPECT_THROW(after.device("no-such-device"), kiln::Error);
}

TEST(Memory, JitPoolKeepsTemporariesAsPooledBuffers) {
  const std::string dev = kiln::default_device();
  kiln::ArrayFn f = kiln::jit([](const kiln::Array& x) { return np::sum(np::square(x - np::mean(x))); });
  kiln::Array x = np::ones({4096}, kiln::float32).eval();
  f(x).item();
  kiln::MemoryStats s = kiln::memory_stats();
  const kiln::DeviceMemoryStats& d = s.device(dev);
  // The mean is a reduction that the second one reads, so it is a temporary in its own buffer,
  // which goes back to the pool after the call: a live device buffer that no array owns.
  EXPECT_GE(d.pooled_buffers, 1);
  EXPECT_LE(d.pooled_buffers, d.buffers);
  EXPECT_LE(d.pooled_bytes, d.bytes);
  f(x).item();
  EXPECT_EQ(flat_part(kiln::memory_stats()), flat_part(s));
}

// The checker itself: a loop that keeps one array per step is caught.
TEST(Memory, FlatnessCheckCatchesAnArrayKeptPerStep) {
  kiln::MemoryStats warm = kiln::memory_stats();
  std::vector<kiln::Array> kept;
  for (int i = 0; i < 3; i++) kept.push_back((np::ones({16}, kiln::float32) * double(i)).eval());
  kiln::MemoryStats now = kiln::memory_stats();
  EXPECT_NE(flat_part(now), flat_part(warm));
  EXPECT_EQ(now.arrays, warm.arrays + 3);
  EXPECT_EQ(now.buffers(), warm.buffers() + 3);
  kept.clear();
  EXPECT_EQ(flat_part(kiln::memory_stats()), flat_part(warm));
}

TEST(Memory, JitTrainingStepsAreFlatOnDefaultDevice) {
  mnist::Trainer t(mnist::Model::Cnn, 1e-3, 0);
  expect_flat(t, train_split(), batch_size(), kWarmup, jit_steps());
}

TEST(Memory, EagerTrainingStepsAreFlatOnDefaultDevice) {
  mnist::Trainer t(mnist::Model::Cnn, 1e-3, 0, 128, /*jit=*/false);
  expect_flat(t, train_split(), batch_size(), kWarmup, eager_steps());
}

TEST(Memory, JitTrainingStepsAreFlatOnNative) {
  if (!has_device("native")) GTEST_SKIP() << "no native device in this build";
  if (kiln::default_device() == "native") GTEST_SKIP() << "the default-device test ran it";
  OnDevice on("native");
  mnist::Trainer t(mnist::Model::Cnn, 1e-3, 0);
  expect_flat(t, train_split(), batch_size(), kWarmup, jit_steps());
}

TEST(Memory, EagerTrainingStepsAreFlatOnNative) {
  if (!has_device("native")) GTEST_SKIP() << "no native device in this build";
  if (kiln::default_device() == "native") GTEST_SKIP() << "the default-device test ran it";
  OnDevice on("native");
  mnist::Trainer t(mnist::Model::Cnn, 1e-3, 0, 128, /*jit=*/false);
  expect_flat(t, train_split(), batch_size(), kWarmup, eager_steps());
}

}  // namespace

}  // namespace memory_test
