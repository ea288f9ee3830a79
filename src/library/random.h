// kiln::random: JAX's counter-based PRNG (threefry2x32, the default impl, partitionable
// mode as in jax 0.10) and its samplers, bit for bit identical to jax.random.
#pragma once
#include <cstdint>
#include <optional>

#include "frontend/array.h"

namespace kiln::random {

// Keys are JAX's raw keys: uint32 arrays whose last axis is 2 (kiln has no typed key dtype,
// so key(seed) and PRNGKey(seed) are the same). Every function takes one key of shape (2,);
// vmap over a batch of keys for more.
//
// Seeds follow JAX without x64 (its default): the key is [0, seed mod 2^32], so -1 gives
// [0, 0xffffffff] and 2^32 + 5 gives [0, 5].
Array PRNGKey(int64_t seed);
Array key(int64_t seed);
// Keys as a new leading axis: split(k, 3) has shape (3, 2); split(k, {2, 3}) (2, 3, 2).
Array split(const Array& key, int64_t num = 2);
Array split(const Array& key, const Shape& shape);
// A new key from a key and a 32-bit integer (data: an int32/uint32 scalar, or a C++ int).
Array fold_in(const Array& key, const Array& data);
// The threefry2x32 hash of counters (x1, x2) under key (k1, k2), elementwise with
// broadcasting: the building block of everything else (all operands uint32).
std::pair<Array, Array> threefry2x32(const Array& k1, const Array& k2, const Array& x1,
                                     const Array& x2);

// Uniform random bits (jax.random.bits / random_bits with 32-bit width): uint32.
Array bits(const Array& key, const Shape& shape = {});
// [minval, maxval) in float16/32/64 by JAX's mantissa trick.
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = float32,
              const Array& minval = 0.0, const Array& maxval = 1.0);
// Standard normal: sqrt(2) * erf_inv(uniform(-1 + ulp, 1)) (float32 only: XLA's f32 erf_inv).
Array normal(const Array& key, const Shape& shape = {}, DType dtype = float32);
// Normal truncated to (lower, upper); shape defaults to their broadcast shape (float32).
Array truncated_normal(const Array& key, const Array& lower, const Array& upper,
                       std::optional<Shape> shape = std::nullopt, DType dtype = float32);
// True with probability p (bool); shape defaults to p's shape.
Array bernoulli(const Array& key, const Array& p = 0.5, std::optional<Shape> shape = std::nullopt);
// Samples category indices (int32) from unnormalized log-probabilities along `axis` by the
// Gumbel-max trick; shape defaults to logits' shape without `axis` (with replacement).
Array categorical(const Array& key, const Array& logits, int axis = -1,
                  std::optional<Shape> shape = std::nullopt);
// Integers in [minval, maxval) (int32 or uint32), JAX's double-width modulo construction.
Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval,
              DType dtype = int32);
// A random permutation of arange(n), or of x along `axis` (independent: each slice along
// `axis` shuffled separately). JAX sorts by random 32-bit keys, stably, for
// ceil(3 ln n / ln(2^32 - 1)) rounds; kiln has no sort primitive yet, so concrete inputs
// are sorted on the host and traced ones rank by an O(n^2) comparison (same result).
Array permutation(const Array& key, int64_t n);
Array permutation(const Array& key, const Array& x, int axis = 0, bool independent = false);

// ---- samplers built on uniform/normal (random_samplers.cpp): JAX's formulas, so results
// equal jax.random's for the same key (float dtypes; parameters broadcast to `shape`) ----
Array exponential(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = float32);  // mode "low"
Array laplace(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array logistic(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array cauchy(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array lognormal(const Array& key, const Array& sigma = 1.0, const Shape& shape = {}, DType dtype = float32);
Array rayleigh(const Array& key, const Array& scale = 1.0, const Shape& shape = {}, DType dtype = float32);
Array maxwell(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale, const Shape& shape = {},
                           DType dtype = float32);
Array pareto(const Array& key, const Array& b, const Shape& shape = {}, DType dtype = float32);
Array weibull_min(const Array& key, const Array& scale, const Array& concentration, const Shape& shape = {},
                  DType dtype = float32);
Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right,
                 const Shape& shape = {}, DType dtype = float32);
// Number of trials to the first success (int32 by default).
Array geometric(const Array& key, const Array& p, const Shape& shape = {}, DType dtype = int32);
// -1 or +1 with equal probability (int32 by default).
Array rademacher(const Array& key, const Shape& shape = {}, DType dtype = int32);
// mean + L z with L = cholesky(cov) (JAX's method="cholesky"); shape: the batch shape
// (defaults to the broadcast of mean's and cov's batch shapes), the result adds [n].
Array multivariate_normal(const Array& key, const Array& mean, const Array& cov,
                          std::optional<Shape> shape = std::nullopt, DType dtype = float32);

}  // namespace kiln::random
