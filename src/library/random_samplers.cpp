// kiln::random's samplers that are formulas over uniform and normal: JAX's algorithms
// (jax/_src/random.py, jax 0.10), step for step, so samples agree with jax.random for the
// same key up to the last-ulp differences of the transcendental functions.
#include <cmath>
#include <limits>

#include "library/array_args.h"
#include "library/linalg.h"
#include "library/numpy.h"
#include "library/random.h"

namespace kiln::random {

namespace np = kiln::numpy;
using np::detail::cast;

namespace {

void need_float(const char* op, DType dtype) {
  if (!is_float(dtype)) fail(op, "got dtype ", dtype_name(dtype), ", expected a float dtype");
}

// numpy.finfo(dtype) fields the samplers use: the smallest normal, eps and epsneg.
struct FInfo {
  double tiny, eps, epsneg;
};
FInfo finfo(DType dtype) {
  if (dtype == float16) return {std::ldexp(1.0, -14), std::ldexp(1.0, -10), std::ldexp(1.0, -11)};
  if (dtype == float64)
    return {std::numeric_limits<double>::min(), std::ldexp(1.0, -52), std::ldexp(1.0, -53)};
  return {double(std::numeric_limits<float>::min()), std::ldexp(1.0, -23), std::ldexp(1.0, -24)};
}

// A parameter in the sample dtype (JAX's lax.convert_element_type), checked against shape.
Array param(const char* op, const Array& p, const Shape& shape, DType dtype) {
  if (np::broadcast_shapes(shape, p.shape()) != shape)
    fail(op, "got a parameter of shape ", shape_str(p.shape()), " that does not broadcast to shape ",
         shape_str(shape));
  return p.dtype() == dtype && !p.weak_type() ? p : cast(p, dtype, false);
}

Array one(DType dtype) { return cast(Array(1.0), dtype, false); }

}  // namespace

Array exponential(const Array& key, const Shape& shape, DType dtype) {
  return with_name("exponential", [&]() -> Array {
    need_float("exponential", dtype);
    return -np::log1p(-uniform(key, shape, dtype));
  });
}

Array gumbel(const Array& key, const Shape& shape, DType dtype) {
  return with_name("gumbel", [&]() -> Array {
    need_float("gumbel", dtype);
    return -np::log(-np::log(uniform(key, shape, dtype, Array(finfo(dtype).tiny), Array(1.0))));
  });
}

Array laplace(const Array& key, const Shape& shape, DType dtype) {
  return with_name("laplace", [&]() -> Array {
    need_float("laplace", dtype);
    Array u = uniform(key, shape, dtype, Array(-1.0 + finfo(dtype).epsneg), Array(1.0));
    return np::sign(u) * np::log1p(-np::abs(u));
  });
}

Array logistic(const Array& key, const Shape& shape, DType dtype) {
  return with_name("logistic", [&]() -> Array {
    need_float("logistic", dtype);
    Array x = uniform(key, shape, dtype, Array(finfo(dtype).tiny), Array(1.0));
    return np::log(x) - np::log1p(-x);
  });
}

Array cauchy(const Array& key, const Shape& shape, DType dtype) {
  return with_name("cauchy", [&]() -> Array {
    need_float("cauchy", dtype);
    Array u = uniform(key, shape, dtype, Array(finfo(dtype).eps), Array(1.0));
    return np::tan(cast(Array(M_PI), dtype, false) * (u - Array(0.5)));
  });
}

Array lognormal(const Array& key, const Array& sigma, const Shape& shape, DType dtype) {
  return with_name("lognormal", [&]() -> Array {
    need_float("lognormal", dtype);
    return np::exp(normal(key, shape, dtype) * param("lognormal", sigma, shape, dtype));
  });
}

Array rayleigh(const Array& key, const Array& scale, const Shape& shape, DType dtype) {
  return with_name("rayleigh", [&]() -> Array {
    need_float("rayleigh", dtype);
    Array s = param("rayleigh", scale, shape, dtype);
    Array u = uniform(key, shape, dtype);
    return s * np::sqrt(np::log(u) * Array(-2.0));
  });
}

Array maxwell(const Array& key, const Shape& shape, DType dtype) {
  return with_name("maxwell", [&]() -> Array {
    need_float("maxwell", dtype);
    Shape s3 = shape;
    s3.push_back(3);
    Array z = normal(key, s3, dtype);
    // jnp.linalg.norm(axis=-1) for real input: sqrt(sum(x * x)).
    return np::sqrt(np::sum(z * z, -1));
  });
}

Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale, const Shape& shape,
                           DType dtype) {
  return with_name("double_sided_maxwell", [&]() -> Array {
    need_float("double_sided_maxwell", dtype);
    // JAX samples shape + broadcast(loc, scale).shape.
    Shape params = np::broadcast_shapes(loc.shape(), scale.shape());
    Shape s = shape;
    s.insert(s.end(), params.begin(), params.end());
    Array keys = split(key);
    Array m = maxwell(np::index(keys, {int64_t(0)}), s, dtype);
    Array sign = rademacher(np::index(keys, {int64_t(1)}), s, dtype);
    return sign * m * param("double_sided_maxwell", scale, s, dtype) + param("double_sided_maxwell", loc, s, dtype);
  });
}

Array pareto(const Array& key, const Array& b, const Shape& shape, DType dtype) {
  return with_name("pareto", [&]() -> Array {
    need_float("pareto", dtype);
    Array bb = param("pareto", b, shape, dtype);
    return np::exp(exponential(key, shape, dtype) / bb);
  });
}

Array weibull_min(const Array& key, const Array& scale, const Array& concentration, const Shape& shape,
                  DType dtype) {
  return with_name("weibull_min", [&]() -> Array {
    need_float("weibull_min", dtype);
    Array u = uniform(key, shape, dtype);
    Array c = param("weibull_min", concentration, shape, dtype);
    return np::power(-np::log1p(-u), one(dtype) / c) * param("weibull_min", scale, shape, dtype);
  });
}

Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right, const Shape& shape,
                 DType dtype) {
  return with_name("triangular", [&]() -> Array {
    need_float("triangular", dtype);
    Array l = np::broadcast_to(param("triangular", left, shape, dtype), shape);
    Array r = np::broadcast_to(param("triangular", right, shape, dtype), shape);
    Array m = np::broadcast_to(param("triangular", mode, shape, dtype), shape);
    Array fc = (m - l) / (r - l);
    Array u = uniform(key, shape, dtype);
    Array out1 = l + np::sqrt(u * (r - l) * (m - l));
    Array out2 = r - np::sqrt((one(dtype) - u) * (r - l) * (r - m));
    return np::where(u < fc, out1, out2);
  });
}

Array geometric(const Array& key, const Array& p, const Shape& shape, DType dtype) {
  return with_name("geometric", [&]() -> Array {
    if (is_float(dtype) || dtype == DType::Bool)
      fail("geometric", "got dtype ", dtype_name(dtype), ", expected an integer dtype");
    DType pt = is_float(p.dtype()) ? p.dtype() : float32;
    Array pp = param("geometric", p, shape, pt);
    Array u = uniform(key, shape, pt);
    u = np::where(u == Array(0.0), one(pt), u);
    Array g = np::floor(np::log(u) / np::broadcast_to(np::log1p(-pp), shape)) + one(pt);
    return g.astype(dtype);
  });
}

Array rademacher(const Array& key, const Shape& shape, DType dtype) {
  return with_name("rademacher", [&]() -> Array {
    if (dtype == DType::Bool || dtype == DType::Uint32)
      fail("rademacher", "got dtype ", dtype_name(dtype), ", expected a signed dtype");
    Array b = bernoulli(key, 0.5, shape).astype(dtype);
    return (cast(Array(2), dtype, false) * b - cast(Array(1), dtype, false)).astype(dtype);
  });
}

Array multivariate_normal(const Array& key, const Array& mean, const Array& cov, std::optional<Shape> shape,
                          DType dtype) {
  return with_name("multivariate_normal", [&]() -> Array {
    need_float("multivariate_normal", dtype);
    if (mean.ndim() < 1) fail("multivariate_normal", "got a 0-d mean, expected at least one dimension");
    int64_t n = mean.shape().back();
    if (cov.ndim() < 2 || cov.shape(-1) != n || cov.shape(-2) != n)
      fail("multivariate_normal", "got mean ", shape_str(mean.shape()), " and cov ", shape_str(cov.shape()),
           ", expected cov of shape (..., ", n, ", ", n, ")");
    Shape mb(mean.shape().begin(), mean.shape().end() - 1), cb(cov.shape().begin(), cov.shape().end() - 2);
    Shape batch = np::broadcast_shapes(mb, cb);
    Shape s = shape ? *shape : batch;
    if (shape && np::broadcast_shapes(s, batch) != s)
      fail("multivariate_normal", "got shape ", shape_str(s), ", expected one that the batch shape ",
           shape_str(batch), " broadcasts to");
    Array m = cast(mean, dtype, false), c = cast(cov, dtype, false);
    // JAX: factor = cholesky(cov) (symmetrized), normal of shape + (n,), mean + factor @ z.
    Array factor = linalg::cholesky(c);
    Shape zs = s;
    zs.push_back(n);
    Array z = normal(key, zs, dtype);
    return m + np::einsum("...ij,...j->...i", {factor, z});
  });
}

}  // namespace kiln::random
