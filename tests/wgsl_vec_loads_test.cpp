// backend/webgpu/wgsl_vec_loads: which loads of an unrolled chunk become one vec4 load, and
// which the LLM runtime's quantized matvecs get in each row layout (the WGSL itself runs in
// js/test/webgpu.test.ts, whose quantized matvecs take this path).
#include <gtest/gtest.h>

#include "backend/webgpu/wgsl_codegen.h"
#include "backend/webgpu/wgsl_vec_loads.h"
#include "frontend/array_impl.h"
#include "ir/reduction_unroll.h"
#include "library/numpy.h"
#include "models/quantized_weights.h"

namespace wgsl_vec_loads_test {

namespace {

using namespace kiln;

AluExp ridx(int64_t k) { return AluExp::var(VarId::Ridx, DType::Int32, k - 1); }
AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, n - 1); }

// A q4 matvec term: word (g, ridx // 8) shifted by (ridx % 8) * 4, times x[ridx].
AluExp q4_term(int64_t n, int64_t k) {
  AluExp r = ridx(k);
  AluExp word = AluExp::load(DType::Uint32, 0, gidx(n) * (k / 8) + r / 8);
  AluExp code = AluExp::binary(AluOp::Shr, word, AluExp::cast(DType::Uint32, (r % 8) * 4));
  return AluExp::binary(AluOp::Mul, AluExp::cast(DType::Float32, code), AluExp::load(DType::Float32, 1, r));
}

TEST(WgslVecLoads, KnownMultiples) {
  EXPECT_EQ(webgpu::known_multiple(ridx(64) * 32), 32);
  EXPECT_EQ(webgpu::known_multiple(ridx(64) * 32 + gidx(8) * 12), 4);
  EXPECT_EQ(webgpu::known_multiple(ridx(64) * 32 + 2), 2);
  EXPECT_EQ(webgpu::known_multiple(ridx(64)), 1);
}

TEST(WgslVecLoads, ChunkOfAMatvecReadsXAndTheWordsByFour) {
  // Chunks of 32 values: x[ridx * 32 + u] in 8 quads; the 4 words of a row's block
  // (g * 16 + ridx * 4 + w) in 1 quad, as g * 16 is a multiple of 4.
  std::vector<AluExp> chunk = unroll_reduction(q4_term(8, 128), 128, 32);
  std::vector<webgpu::VecLoad> quads = webgpu::find_vec_loads(chunk);
  int x = 0, words = 0;
  for (const auto& q : quads) (q.arg == 1 ? x : words)++;
  EXPECT_EQ(x, 8);
  EXPECT_EQ(words, 1);
  for (const auto& q : quads)
    for (int lane = 0; lane < 4; lane++) EXPECT_EQ(q.lanes[size_t(lane)]->op, AluOp::Load);
}

TEST(WgslVecLoads, NoQuadWithoutAlignmentOrAllFourLanes) {
  // x[ridx * 8 + u + 2]: the lanes of each block of 4 are there, but the base is not a
  // known multiple of 4 plus an aligned offset for the first and last pairs.
  AluExp r = ridx(64);
  std::vector<AluExp> shifted;
  for (int u = 0; u < 8; u++) shifted.push_back(AluExp::load(DType::Float32, 0, r * 6 + u));
  EXPECT_TRUE(webgpu::find_vec_loads(shifted).empty());  // 6 * ridx: only a multiple of 2
  std::vector<AluExp> three;
  for (int u = 0; u < 3; u++) three.push_back(AluExp::load(DType::Float32, 0, r * 8 + u));
  EXPECT_TRUE(webgpu::find_vec_loads(three).empty());  // lane 3 missing
  std::vector<AluExp> bytes;
  for (int u = 0; u < 4; u++) bytes.push_back(AluExp::load(DType::Float16, 0, r * 8 + u));
  EXPECT_TRUE(webgpu::find_vec_loads(bytes).empty());  // 2-byte elements
}

// The generated tree reduction of models::quantized_linear (one row of x) over a `type`
// weight of rows x cols uploaded in `layout`, with the GPU's tree limits (runtime.ts).
struct MatvecWgsl {
  webgpu::WgslKernel w;
  int words = -1;  // the kernel input holding the packed words
};
MatvecWgsl matvec_wgsl(formats::GgmlType type, int64_t rows, int64_t cols, models::RowLayout layout) {
  const auto& info = formats::ggml_type_info(type);
  std::vector<uint8_t> bytes(size_t(rows * cols / info.block_size * info.block_bytes), 0x3c);
  const models::QuantizedWeight q = models::upload(models::pack_tensor("w", type, rows, cols, bytes), layout);
  frontend::KernelRecorder rec;
  models::quantized_linear(numpy::array(std::vector<float>(size_t(cols), 0.5f), {1, cols}), q).eval();  // x loaded
  EXPECT_EQ(rec.kernels().size(), 1u);
  const Kernel& k = rec.kernels().at(0);
  MatvecWgsl out;
  for (size_t i = 0; i < k.inputs.size(); i++)
    if (k.inputs[i] == DType::Uint32) out.words = int(i);
  webgpu::WgslParams p;
  p.tree_max_outputs = 65536;
  out.w = webgpu::generate_wgsl(k, p);
  EXPECT_EQ(out.w.strategy, webgpu::WgslStrategy::TreeReduce);
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

// Row-contiguous words (webgpu's layout): a chunk (one scale block: 32 values, q6_K 16) reads
// its row's words by four, one vec4 load per four words, and x by four. Interleaved by 16
// rows (the CPU layout), a row's words are 16 apart: no vec4 of them.
TEST(WgslVecLoads, LlmMatvecReadsRowContiguousWordsByFour) {
  using formats::GgmlType;
  struct Case {
    GgmlType type;
    int x_quads, word_quads;  // per chunk
  };
  for (const Case& c : {Case{GgmlType::Q4_0, 8, 1}, Case{GgmlType::Q4_1, 8, 1}, Case{GgmlType::Q4_K, 8, 1},
                        Case{GgmlType::Q8_0, 8, 2}, Case{GgmlType::Q5_0, 8, 2}, Case{GgmlType::Q6_K, 4, 1}}) {
    const std::string name = formats::ggml_type_name(c.type);
    const MatvecWgsl rows = matvec_wgsl(c.type, 64, 2048, models::RowLayout::Contiguous);
    ASSERT_GE(rows.words, 0) << name;
    const std::string wv = "in" + std::to_string(rows.words) + "v[";
    EXPECT_EQ(count(rows.w.wgsl, wv), c.word_quads) << name << "\n" << rows.w.wgsl;
    EXPECT_EQ(count(rows.w.wgsl, "v["), c.x_quads + c.word_quads) << name << "\n" << rows.w.wgsl;
    const MatvecWgsl inter = matvec_wgsl(c.type, 64, 2048, models::RowLayout::Interleaved);
    EXPECT_EQ(count(inter.w.wgsl, "in" + std::to_string(inter.words) + "v["), 0) << name << "\n" << inter.w.wgsl;
    EXPECT_EQ(count(inter.w.wgsl, "v["), c.x_quads) << name << "\n" << inter.w.wgsl;
  }
}

}  // namespace

}  // namespace wgsl_vec_loads_test
