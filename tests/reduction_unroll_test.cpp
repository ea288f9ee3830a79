// ir/reduction_unroll: the period of a reduction's index arithmetic, and the unrolled copies
// (divisions folded, equal nodes shared).
#include <gtest/gtest.h>

#include "ir/reduction_unroll.h"

namespace reduction_unroll_test {

namespace {

using namespace kiln;

AluExp ridx(int64_t k) { return AluExp::var(VarId::Ridx, DType::Int32, k - 1); }

AluExp packed_term(int64_t k) {
  AluExp r = ridx(k);
  AluExp word = AluExp::load(DType::Uint32, 0, r / 8);
  AluExp code = AluExp::binary(AluOp::Shr, word, AluExp::cast(DType::Uint32, (r % 8) * 4));
  AluExp scale = AluExp::load(DType::Float32, 1, r / 32);
  return AluExp::binary(AluOp::Mul, AluExp::cast(DType::Float32, code), scale);
}

TEST(ReductionUnroll, PeriodIsTheLcmOfTheDivisorsOfRidx) {
  EXPECT_EQ(reduction_period(packed_term(96), 96, 32), 32);
  EXPECT_EQ(reduction_period(packed_term(72), 72, 32), 1);   // 32 does not divide 72
  EXPECT_EQ(reduction_period(packed_term(96), 96, 16), 1);   // longer than allowed
  AluExp plain = AluExp::load(DType::Float32, 0, ridx(50));
  EXPECT_EQ(reduction_period(plain, 50, 32), 1);             // nothing to fold
  AluExp thirds = AluExp::load(DType::Float32, 0, ridx(12) % 3 + ridx(12) / 4);
  EXPECT_EQ(reduction_period(thirds, 12, 32), 12);
}

TEST(ReductionUnroll, CopiesFoldTheDivisionsAndShareLoads) {
  std::vector<AluExp> copies = unroll_reduction(packed_term(96), 96, 32);
  ASSERT_EQ(copies.size(), 32u);
  EXPECT_EQ(copies[3].to_string(), "(cast<float32>(shr(in0[(ridx * 4)], 12)) * in1[ridx])");
  EXPECT_EQ(copies[9].to_string(), "(cast<float32>(shr(in0[((ridx * 4) + 1)], 4)) * in1[ridx])");
  // The word of u = 8..15 is one node, and the scale one node for all 32 copies.
  auto word = [&](int u) { return copies[size_t(u)].src(0).src(0).src(0).get(); };
  auto scale = [&](int u) { return copies[size_t(u)].src(1).get(); };
  for (int u = 9; u < 16; u++) EXPECT_EQ(word(u), word(8));
  EXPECT_NE(word(0), word(8));
  for (int u = 1; u < 32; u++) EXPECT_EQ(scale(u), scale(0));
}

TEST(ReductionUnroll, SharingKeepsDistinctNodesApart) {
  AluExp a = AluExp::load(DType::Float32, 0, ridx(8)), b = AluExp::load(DType::Float32, 1, ridx(8));
  std::vector<AluExp> shared = share_equal_nodes({AluExp::binary(AluOp::Add, a, b), AluExp::binary(AluOp::Add, a, b),
                                                  AluExp::binary(AluOp::Add, b, a)});
  EXPECT_EQ(shared[0].get(), shared[1].get());
  EXPECT_NE(shared[0].get(), shared[2].get());
}

}  // namespace

}  // namespace reduction_unroll_test
