// Smoke test: proves the build, GoogleTest and CTest pipeline runs end to end.
// It checks only rules that JAX and jax-js agree on; dtype's own tests cover the rest.
#include <gtest/gtest.h>

#include "ir/dtype.h"

namespace smoke_test {

TEST(Smoke, DTypeBasics) {
  EXPECT_EQ(kiln::itemsize(kiln::float32), 4);
  kiln::TypeInfo t = kiln::promote({kiln::int32, false}, {kiln::float32, false});
  EXPECT_EQ(t.dtype, kiln::float32);
  EXPECT_FALSE(t.weak);
}

}  // namespace smoke_test
