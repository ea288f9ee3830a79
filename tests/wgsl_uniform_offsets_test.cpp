// backend/webgpu/wgsl_uniform_offsets: a tiled contraction's load offsets become uniform words,
// so the same contraction at two offsets of one buffer (two layers' rows of a KV cache) has
// one WGSL text (js/test/webgpu_first_call.test.ts runs it: one pipeline, results as cpu's).
#include <gtest/gtest.h>

#include "backend/webgpu/wgsl_codegen.h"
#include "backend/webgpu/wgsl_uniform_offsets.h"

namespace wgsl_uniform_offsets_test {

namespace {

using namespace kiln;

// out[i, j] = sum_r a[i, r] * b[offset + r * 96 + j]: a 64 x 96 x 64 matmul whose B is the
// slice of a larger buffer that starts at `offset`.
Kernel matmul_at(int64_t offset) {
  const AluExp g = AluExp::var(VarId::Gidx, DType::Int32, 64 * 96 - 1);
  const AluExp r = AluExp::var(VarId::Ridx, DType::Int32, 63);
  Kernel k;
  k.inputs = {DType::Float32, DType::Float32};
  k.size = 64 * 96;
  k.exp = AluExp::binary(AluOp::Mul, AluExp::load(DType::Float32, 0, g / 96 * 64 + r),
                         AluExp::load(DType::Float32, 1, r * 96 + g % 96 + offset));
  k.reduction = Reduction{AluOp::Add, 64, AluExp::accumulator(DType::Float32)};
  return k;
}

}  // namespace

TEST(WgslUniformOffsets, TwoOffsetsOfOneBufferShareTheText) {
  const webgpu::WgslParams params;
  const webgpu::WgslKernel w1 = webgpu::generate_wgsl(matmul_at(6144), params);
  const webgpu::WgslKernel w2 = webgpu::generate_wgsl(matmul_at(12288), params);
  ASSERT_EQ(w1.strategy, webgpu::WgslStrategy::Tiled);
  EXPECT_NE(w1.wgsl, w2.wgsl);  // the offsets are constants of the text
  const webgpu::LiftedOffsets l1 = webgpu::lift_load_offsets(matmul_at(6144));
  const webgpu::LiftedOffsets l2 = webgpu::lift_load_offsets(matmul_at(12288));
  EXPECT_EQ(l1.count, 1);
  EXPECT_EQ(l1.words[0], 6144);
  EXPECT_EQ(l2.words[0], 12288);
  const webgpu::WgslKernel t1 = webgpu::generate_wgsl(l1.kernel, params);
  const webgpu::WgslKernel t2 = webgpu::generate_wgsl(l2.kernel, params);
  EXPECT_EQ(t1.strategy, webgpu::WgslStrategy::Tiled);  // still tiled: the offset is a constant to the analysis
  EXPECT_EQ(t1.wgsl, t2.wgsl);
  EXPECT_NE(t1.wgsl.find("params.w1"), std::string::npos);
  EXPECT_EQ(t1.wgsl.find("6144"), std::string::npos);
  // Substituted back, the lifted body is the original one.
  EXPECT_EQ(l1.kernel.exp.substitute(webgpu::uniform_word(0), AluExp::idx(6144)).to_string(),
            matmul_at(6144).exp.to_string());
}

TEST(WgslUniformOffsets, NothingToLiftAtOffsetZero) {
  const webgpu::LiftedOffsets l = webgpu::lift_load_offsets(matmul_at(0));
  EXPECT_EQ(l.count, 0);
  EXPECT_EQ(l.kernel.exp.to_string(), matmul_at(0).exp.to_string());
}

}  // namespace wgsl_uniform_offsets_test
