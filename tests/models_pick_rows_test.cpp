// models::pick_rows (the importers' nearest resizes): an integer-factor repeat of rows is a
// broadcast view (no index buffer in the kernel that reads it), any other pick a gather; both
// give x.take(rows, axis).
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "frontend/array_impl.h"
#include "kiln/kiln.h"
#include "models/pick_rows.h"

namespace models_pick_rows_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;

// The inputs of the one kernel a jit call of pick_rows(x, rows, axis) * 2 runs, and its value
// against take's.
size_t kernel_inputs(const Array& x, const std::vector<int32_t>& rows, int axis) {
  auto f = kiln::jit(kiln::ArrayFn([&](const Array& v) { return kiln::models::pick_rows(v, rows, axis) * 2.0f; }));
  const Array first = f(x);  // compiles
  std::vector<kiln::Kernel> kernels;
  std::optional<Array> run;
  {
    kiln::frontend::KernelRecorder rec;
    run = f(x);
    run->eval();
    kernels = rec.kernels();
  }
  const Array got = *run;
  const Array want = np::take(x, np::array(rows, {int64_t(rows.size())}), axis) * 2.0f;
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
  EXPECT_EQ(kernels.size(), 1u);
  return kernels.empty() ? 0 : kernels[0].inputs.size();
}

TEST(ModelsPickRows, IntegerFactorRepeatsAreViewsOtherPicksGather) {
  std::vector<float> v(2 * 3 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.5f - 3.0f;
  const Array x = np::array(v, {2, 3, 4});
  EXPECT_EQ(kernel_inputs(x, {0, 0, 1, 1, 2, 2}, 1), 1u);           // 2x along the middle axis
  EXPECT_EQ(kernel_inputs(x, {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}, 2), 1u);  // 3x along the last
  EXPECT_EQ(kernel_inputs(x, {0, 1, 1, 2, 2, 2}, 1), 2u);           // not a repeat: the index buffer too
  EXPECT_EQ(kernel_inputs(x, {2, 0, 1}, 1), 2u);
}

}  // namespace

}  // namespace models_pick_rows_test
