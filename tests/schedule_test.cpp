// Tests of the kernel scheduler: every factor it picks divides the axis it splits, the
// output axes of a matmul kernel are found, and per-backend parameters are respected.
#include <gtest/gtest.h>

#include "frontend/array_impl.h"
#include "ir/schedule.h"
#include "kiln/kiln.h"

namespace schedule_test {

namespace {

namespace np = kiln::numpy;
using kiln::Schedule;
using kiln::ScheduleParams;

kiln::Kernel recorded(const std::function<void()>& f) {
  kiln::frontend::KernelRecorder rec;
  f();
  EXPECT_EQ(rec.kernels().size(), 1u);
  return rec.kernels().back();
}

void expect_valid(const Schedule& s, const ScheduleParams& p) {
  for (size_t i = 0; i < s.out_shape.size(); i++) {
    EXPECT_EQ(s.out_shape[i] % s.tile[i], 0) << s.str();
    EXPECT_EQ(s.groups[i] * s.tile[i], s.out_shape[i]) << s.str();
    int64_t per = i + 1 == s.out_shape.size() ? s.tile[i] / s.upcast : s.tile[i];
    EXPECT_EQ(per % s.local[i], 0) << s.str();
  }
  EXPECT_EQ(s.tile.back() % s.upcast, 0) << s.str();
  EXPECT_LE(s.upcast, std::max<int64_t>(p.upcast, 1));
  int64_t threads = 1;
  for (auto l : s.local) threads *= l;
  EXPECT_LE(threads, p.max_local) << s.str();
  if (s.reduce > 0) {
    EXPECT_EQ(s.reduce % s.tile_red, 0) << s.str();
    EXPECT_EQ(s.tile_red % s.unroll, 0) << s.str();
  }
}

TEST(Schedule, MatmulTilesDivideTheShapes) {
  auto a = np::ones({96, 40}).eval(), b = np::ones({40, 48}).eval();
  kiln::Kernel k = recorded([&] { np::matmul(a, b).eval(); });
  for (auto p : {ScheduleParams::cpu(), ScheduleParams::wasm(), ScheduleParams::webgpu()}) {
    Schedule s = kiln::schedule_kernel(k, p);
    ASSERT_EQ(s.out_shape, (kiln::Dims{96, 48})) << s.str();
    EXPECT_EQ(s.reduce, 40);
    expect_valid(s, p);
  }
  Schedule w = kiln::schedule_kernel(k, ScheduleParams::wasm());
  EXPECT_EQ(w.upcast, 4);
  EXPECT_EQ(w.tile, (kiln::Dims{32, 24}));
  EXPECT_EQ(w.tile_red, 40);
  EXPECT_EQ(w.unroll, 4);
  Schedule g = kiln::schedule_kernel(k, ScheduleParams::webgpu());
  // 48x48 tiles: 12 threads x 4 lanes across, 16 rows down (192 of at most 256 threads).
  EXPECT_EQ(g.tile, (kiln::Dims{48, 48})) << g.str();
  EXPECT_EQ(g.local, (kiln::Dims{16, 12})) << g.str();
  Schedule c = kiln::schedule_kernel(k, ScheduleParams::cpu());
  EXPECT_EQ(c.upcast, 1);
  EXPECT_EQ(c.local, (kiln::Dims{1, 1}));
}

TEST(Schedule, OddSizesFallBackToOne) {
  auto a = np::ones({7, 13}).eval(), b = np::ones({13, 11}).eval();
  kiln::Kernel k = recorded([&] { np::matmul(a, b).eval(); });
  for (auto p : {ScheduleParams::wasm(), ScheduleParams::webgpu()}) {
    Schedule s = kiln::schedule_kernel(k, p);
    EXPECT_EQ(s.out_shape, (kiln::Dims{7, 11}));
    EXPECT_EQ(s.upcast, 1);
    EXPECT_EQ(s.unroll, 1);
    expect_valid(s, p);
  }
}

TEST(Schedule, Elementwise) {
  auto x = np::ones({1000}).eval();
  kiln::Kernel k = recorded([&] { np::sin(x).eval(); });
  for (auto p : {ScheduleParams::cpu(), ScheduleParams::wasm(), ScheduleParams::webgpu()}) {
    Schedule s = kiln::schedule_kernel(k, p);
    EXPECT_EQ(s.out_shape, (kiln::Dims{1000}));
    EXPECT_EQ(s.reduce, 0);
    expect_valid(s, p);
  }
  EXPECT_EQ(kiln::schedule_kernel(k, ScheduleParams::wasm()).upcast, 4);
  EXPECT_EQ(kiln::largest_divisor(1000, 64), 50);
  EXPECT_EQ(kiln::largest_divisor(13, 8), 1);
}

}  // namespace

}  // namespace schedule_test
