// kiln::random: threefry2x32 written with uint32 numpy ops (add, xor, shifts), so it runs
// and transforms on every backend, and JAX's samplers on top of it (jax/_src/random).
#include "library/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backend/backend.h"
#include "frontend/transforms.h"
#include "library/array_args.h"
#include "library/lax.h"
#include "library/numpy.h"
#include "library/special.h"

namespace kiln::random {

namespace np = kiln::numpy;
using np::detail::cast;
using np::detail::constant;

namespace {

Array u32(const Array& like, uint32_t v) { return constant({}, uint32, double(v), like.device()); }

// Checks for one raw key and returns its two words as scalars.
std::pair<Array, Array> key_words(const char* op, const Array& key) {
  if (key.dtype() != uint32 || key.shape() != Shape{2})
    fail(op, "got a key of ", dtype_name(key.dtype()), shape_str(key.shape()),
         ", expected one raw key: uint32 of shape (2,) (vmap over batches of keys)");
  return {np::index(key, {int64_t(0)}), np::index(key, {int64_t(1)})};
}

Array rotate_left(const Array& v, int r) {
  return np::left_shift(v, Array(r)) | np::right_shift(v, Array(32 - r));
}

// The 64-bit counters 0..n-1 laid out as `shape` (JAX's iota_2x32_shape): the high words
// are 0 because kiln arrays hold fewer than 2^32 elements.
std::pair<Array, Array> counters(const Shape& shape, const std::string& device) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Array lo = cast(np::detail::iota({n}, 0, device), uint32, false).reshape(shape);
  return {constant(shape, uint32, 0, device), lo};
}

// Threefry of the counters of `shape` under `key`: JAX's partitionable path, which
// jax 0.10.2 uses by default (jax_threefry_partitionable = True).
std::pair<Array, Array> hash_shape(const char* op, const Array& key, const Shape& shape) {
  auto [k1, k2] = key_words(op, key);
  auto [c1, c2] = counters(shape, key.device());
  return threefry2x32(k1, k2, c1, c2);
}

void check_shape(const char* op, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) fail(op, "got shape ", shape_str(shape), ", expected non-negative dimensions");
}

Array as_dtype(const Array& a, DType dt) {
  return a.dtype() == dt && !a.weak_type() ? a : cast(a, dt, false);
}

// Right-aligns a parameter against the sample shape, as lax.broadcast_to_rank + arithmetic.
Shape check_param_shape(const char* op, const Shape& shape, const Array& param) {
  Shape b = np::broadcast_shapes(shape, param.shape());
  if (b != shape)
    fail(op, "got a parameter of shape ", shape_str(param.shape()),
         " that does not broadcast to shape ", shape_str(shape));
  return b;
}

// Stable argsort of uint32 keys along the last axis, on the host.
Array host_argsort_last(const Array& keys) {
  std::vector<uint32_t> k = keys.to_vector<uint32_t>();
  int64_t n = keys.shape().empty() ? 1 : keys.shape().back();
  std::vector<int32_t> idx(k.size());
  for (size_t row = 0; n > 0 && row < k.size() / size_t(n); ++row) {
    auto* b = idx.data() + row * size_t(n);
    std::iota(b, b + n, 0);
    const uint32_t* kr = k.data() + row * size_t(n);
    std::stable_sort(b, b + n, [&](int32_t i, int32_t j) { return kr[i] < kr[j]; });
  }
  return np::array(idx, keys.shape());
}

// The same argsort with primitives only (usable under tracing): rank each element by the
// number of elements that sort before it, then invert the ranks. O(n^2) work.
Array traced_argsort_last(const Array& keys) {
  int nd = keys.ndim();
  int64_t n = keys.shape().back();
  Array ki = np::expand_dims(keys, nd),
        kj = np::expand_dims(keys, nd - 1);  // [.., n, 1], [.., 1, n]
  Array ii = np::arange(n).reshape({n, 1}), jj = np::arange(n).reshape({1, n});
  Array before = np::logical_or(kj < ki, np::logical_and(np::equal(kj, ki), jj < ii));
  Array rank = np::sum(before.astype(int32), nd);                        // [.., n]: rank of i
  Array hit = np::equal(np::expand_dims(rank, nd), jj.reshape({1, n}));  // [.., i, r]
  return np::sum(np::where(hit, ii, Array(0)), nd - 1);                  // [.., r]: the i at rank r
}

bool traced(const Array& a) { return a.impl()->tracer != nullptr; }

// One stable sort of x along `axis` by fresh random keys.
Array shuffle_once(const Array& key, const Array& x, int axis) {
  Array sort_keys = np::moveaxis(bits(key, x.shape()), axis, -1);
  // On the host where the keys read back synchronously; on the device (a stable bitonic
  // argsort) where they cannot (webgpu). Both give JAX's permutation.
  Array perm = traced(key) || traced(x)                         ? traced_argsort_last(sort_keys)
               : get_backend(sort_keys.device()).can_read_sync() ? host_argsort_last(sort_keys)
                                                                 : np::argsort(sort_keys, -1);
  return np::moveaxis(np::take_along_axis(np::moveaxis(x, axis, -1), perm, -1), -1, axis);
}

Array shuffle(Array key, Array x, int axis) {
  // JAX's static round count (tjablin's heuristic with exponent 3).
  double n = double(std::max<int64_t>(1, x.size()));
  int rounds =
      int(std::ceil(3 * std::log(n) / std::log(double(std::numeric_limits<uint32_t>::max()))));
  for (int r = 0; r < rounds; ++r) {
    Array ks = split(key);
    key = ks[0];
    x = shuffle_once(ks[1], x, axis);
  }
  return x;
}

}  // namespace

std::pair<Array, Array> threefry2x32(const Array& k1, const Array& k2, const Array& x1,
                                     const Array& x2) {
  return with_name("threefry2x32", [&]() -> std::pair<Array, Array> {
    for (const Array* a : {&k1, &k2, &x1, &x2})
      if (a->dtype() != uint32)
        fail("threefry2x32", "got dtype ", dtype_name(a->dtype()), ", expected uint32");
    static constexpr int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
    Array ks[3] = {k1, k2, k1 ^ k2 ^ u32(k1, 0x1BD11BDAu)};
    Array x[2] = {x1 + ks[0], x2 + ks[1]};
    for (int i = 0; i < 5; ++i) {
      for (int r : rot[i % 2]) {
        x[0] = x[0] + x[1];
        x[1] = x[0] ^ rotate_left(x[1], r);
      }
      x[0] = x[0] + ks[(i + 1) % 3];
      x[1] = x[1] + ks[(i + 2) % 3] + u32(k1, uint32_t(i + 1));
    }
    auto b = np::broadcast_arrays({x[0], x[1]});
    return {b[0], b[1]};
  });
}

Array PRNGKey(int64_t seed) {
  return with_name("PRNGKey", [&]() -> Array { return np::array(std::vector<uint32_t>{0u, uint32_t(uint64_t(seed))}, {2}); });
}
Array key(int64_t seed) {
  return with_name("key", [&]() -> Array { return PRNGKey(seed); });
}

Array split(const Array& key, const Shape& shape) {
  return with_name("split", [&]() -> Array {
    check_shape("split", shape);
    auto [b1, b2] = hash_shape("split", key, shape);
    return np::stack({b1, b2}, int(shape.size()));
  });
}
Array split(const Array& key, int64_t num) {
  return with_name("split", [&]() -> Array { return split(key, Shape{num}); });
}

Array fold_in(const Array& key, const Array& data) {
  return with_name("fold_in", [&]() -> Array {
    auto [k1, k2] = key_words("fold_in", key);
    if (data.ndim() != 0 || !(is_int(data.dtype()) || data.dtype() == bool_))
      fail("fold_in", "got data of ", dtype_name(data.dtype()), shape_str(data.shape()),
           ", expected an integer scalar (vmap for batches)");
    // JAX hashes the seed-like key [0, data] with threefry_2x32, whose two counters are the
    // halves of that 2-vector.
    auto [a, b] = threefry2x32(k1, k2, u32(key, 0), cast(data, uint32, false));
    return np::stack({a, b});
  });
}

Array bits(const Array& key, const Shape& shape) {
  return with_name("bits", [&]() -> Array {
    check_shape("bits", shape);
    auto [b1, b2] = hash_shape("bits", key, shape);
    return b1 ^ b2;
  });
}

Array uniform(const Array& key, const Shape& shape, DType dtype, const Array& minval,
              const Array& maxval) {
  return with_name("uniform", [&]() -> Array {
    check_shape("uniform", shape);
    if (!is_float(dtype))
      fail("uniform", "got dtype ", dtype_name(dtype), ", expected a float dtype");
    check_param_shape("uniform", shape, minval);
    check_param_shape("uniform", shape, maxval);
    Array lo = as_dtype(minval, dtype), hi = as_dtype(maxval, dtype);
    auto [b1, b2] = hash_shape("uniform", key, shape);
    Array floats;
    if (dtype == float32) {
      // Random mantissa under exponent 0: a float in [1, 2), minus 1.
      Array fb = np::right_shift(b1 ^ b2, Array(9)) | u32(key, 0x3f800000u);
      floats = lax::bitcast_convert_type(fb, float32) - Array(1.0);
    } else if (dtype == float16) {
      // JAX draws 16 bits (the low half of the 32); m / 2^10 is exactly the bit trick's value.
      Array m = np::right_shift(np::bitwise_and(b1 ^ b2, u32(key, 0xffffu)), Array(6));
      floats = cast(cast(m, float32, false) * Array(1.0 / 1024), float16, false);
    } else {
      // 64 bits: b1 is the high word, b2 the low; the top 52 bits make the mantissa m, and
      // m / 2^52 (exact in float64) equals the bit trick's value, without 64-bit integers.
      Array hi20 = cast(np::right_shift(b1, Array(12)), float64, false);
      Array lo32 =
          cast(np::left_shift(b1, Array(20)) | np::right_shift(b2, Array(12)), float64, false);
      floats = (hi20 * Array(4294967296.0) + lo32) * Array(std::ldexp(1.0, -52));
    }
    // XLA contracts floats * span + lo into one FMA (float32 only matters: the others are exact
    // or rounded in their own dtype by JAX too).
    Array scaled = dtype == float32 ? lax::fma_f32(floats, hi - lo, lo) : floats * (hi - lo) + lo;
    return np::maximum(lo, scaled);
  });
}

Array normal(const Array& key, const Shape& shape, DType dtype) {
  return with_name("normal", [&]() -> Array {
    if (dtype != float32)
      fail("normal", "got dtype ", dtype_name(dtype),
           ", expected float32 (the only erf_inv kiln has)");
    // uniform in (-1, 1): the lower end is nextafter(-1, 0) so erf_inv stays finite.
    Array u = uniform(key, shape, float32, Array(double(std::nextafter(-1.0f, 0.0f))), Array(1.0));
    return Array(double(float(M_SQRT2))) * lax::erf_inv(u);
  });
}

Array truncated_normal(const Array& key, const Array& lower, const Array& upper,
                       std::optional<Shape> shape, DType dtype) {
  return with_name("truncated_normal", [&]() -> Array {
    if (dtype != float32)
      fail("truncated_normal", "got dtype ", dtype_name(dtype), ", expected float32");
    Shape s = shape ? *shape : np::broadcast_shapes(lower.shape(), upper.shape());
    check_param_shape("truncated_normal", s, lower);
    check_param_shape("truncated_normal", s, upper);
    Array sqrt2(double(float(M_SQRT2)));
    Array lo = as_dtype(lower, float32), hi = as_dtype(upper, float32);
    Array a = np::erf(lo / sqrt2), b = np::erf(hi / sqrt2);
    Array out = sqrt2 * lax::erf_inv(uniform(key, s, float32, a, b));
    // Rounding (or u == a) could land on the bounds; keep the open interval.
    Array lo_in = lax::nextafter(stop_gradient(lo), Array(INFINITY));
    Array hi_in = lax::nextafter(stop_gradient(hi), Array(-INFINITY));
    return np::clip(out, lo_in, hi_in);
  });
}

Array bernoulli(const Array& key, const Array& p, std::optional<Shape> shape) {
  return with_name("bernoulli", [&]() -> Array {
    Shape s = shape ? *shape : p.shape();
    check_param_shape("bernoulli", s, p);
    DType dt = is_float(p.dtype()) ? p.dtype() : float32;
    return uniform(key, s, dt) < as_dtype(p, dt);
  });
}

Array categorical(const Array& key, const Array& logits, int axis, std::optional<Shape> shape) {
  return with_name("categorical", [&]() -> Array {
    int nd = logits.ndim();
    int ax = np::detail::normalize_axis("categorical", axis, nd);
    Shape batch = logits.shape();
    batch.erase(batch.begin() + ax);
    Shape s = shape ? *shape : batch;
    if (s.size() < batch.size() ||
        !std::equal(batch.begin(), batch.end(), s.end() - long(batch.size())))
      fail("categorical", "got shape ", shape_str(s), ", expected one ending with the batch shape ",
           shape_str(batch));
    Shape prefix(s.begin(), s.end() - long(batch.size()));
    Shape gshape = prefix;
    gshape.insert(gshape.end(), logits.shape().begin(), logits.shape().end());
    DType dt = is_float(logits.dtype()) ? logits.dtype() : float32;
    // Gumbel noise, JAX's "low" mode: -log(-log(uniform(tiny, 1))).
    double tiny = dt == float16   ? 6.103515625e-05
                  : dt == float32 ? double(std::numeric_limits<float>::min())
                                  : std::numeric_limits<double>::min();
    Array g = np::negative(
        np::log(np::negative(np::log(uniform(key, gshape, dt, Array(tiny), Array(1.0))))));
    return np::argmax(g + as_dtype(logits, dt), int(prefix.size()) + ax);
  });
}

Array randint(const Array& key, const Shape& shape, const Array& minval, const Array& maxval,
              DType dtype) {
  return with_name("randint", [&]() -> Array {
    check_shape("randint", shape);
    if (!is_int(dtype))
      fail("randint", "got dtype ", dtype_name(dtype), ", expected int32 or uint32");
    check_param_shape("randint", shape, minval);
    check_param_shape("randint", shape, maxval);
    auto to_int = [&](const Array& v) {
      // Clip to the dtype's range before converting, as JAX's _convert_and_clip_integer.
      if (is_float(v.dtype())) return as_dtype(v, dtype);  // float->int casts saturate already
      if (v.dtype() == dtype) return as_dtype(v, dtype);
      if (dtype == uint32) return cast(np::maximum(v, Array(0)), uint32, false);
      return lax::bitcast_convert_type(np::minimum(cast(v, uint32, false), u32(key, 0x7fffffffu)),
                                       int32);
    };
    Array lo = to_int(minval), hi = to_int(maxval);
    Array ks = split(key);
    Array higher = bits(ks[0], shape), lower = bits(ks[1], shape);
    Array span = dtype == uint32 ? hi - lo : lax::bitcast_convert_type(hi - lo, uint32);
    // maxval <= minval returns minval (span 1).
    span = np::where(hi <= lo, u32(key, 1), span);
    // (hi * 2^32 + lo) mod span without 64-bit integers: 2^32 mod span via (2^16 mod span)^2.
    Array mult = np::mod(u32(key, 1u << 16), span);
    mult = np::mod(mult * mult, span);
    Array off = np::mod(np::mod(higher, span) * mult + np::mod(lower, span), span);
    Array offset = dtype == int32 ? lax::bitcast_convert_type(off, int32) : off;
    return np::broadcast_to(lo + offset, shape);
  });
}

Array permutation(const Array& key, int64_t n) {
  return with_name("permutation", [&]() -> Array {
    if (n < 0) fail("permutation", "got n = ", n, ", expected n >= 0");
    key_words("permutation", key);
    return shuffle(key, np::arange(n), 0);
  });
}

Array permutation(const Array& key, const Array& x, int axis, bool independent) {
  return with_name("permutation", [&]() -> Array {
    key_words("permutation", key);
    if (x.ndim() == 0)
      fail("permutation", "got a scalar array, expected at least one dimension (or pass n)");
    int ax = np::detail::normalize_axis("permutation", axis, x.ndim());
    if (independent || x.ndim() == 1) return shuffle(key, x, ax);
    Array ind = shuffle(key, np::arange(x.shape(ax)), 0);
    return np::take(x, ind, ax);
  });
}

}  // namespace kiln::random
