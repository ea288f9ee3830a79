// kiln::nn activations, softmax family, one_hot, standardize and dot_product_attention,
// each following jax/_src/nn/functions.py so values and gradients agree with JAX.
#include "library/nn.h"

#include <cmath>
#include <limits>

#include "frontend/transforms.h"
#include "library/array_args.h"

namespace kiln::nn {

namespace np = kiln::numpy;
using np::detail::cast;

namespace {

Array inexact(const Array& x) { return is_float(x.dtype()) ? x : cast(x, float32, x.weak_type()); }
// A constant rounded to x's dtype first (JAX's np.sqrt(2).astype(x.dtype)).
Array like(const Array& x, double v) { return np::detail::constant({}, x.dtype(), v, x.device()); }

}  // namespace

Array relu(const Array& x_in) {
  return with_name("relu", [&]() -> Array {
    Array x = x_in;
    // where (not maximum) so the derivative at 0 is 0, as JAX's custom jvp; x <= 0 (not
    // x > 0) picks the zero so that NaN passes through, as JAX's maximum(x, 0) does.
    return np::where(x <= Array(0), np::zeros_like(x), x);
  });
}

Array relu6(const Array& x) {
  return with_name("relu6", [&]() -> Array {
    // Comparisons that are false for NaN select x, so NaN passes through as in JAX's
    // minimum(maximum(x, 0), 6); the kinks keep derivative 0.
    return np::where(x <= Array(0), np::zeros_like(x), np::where(x >= Array(6), np::full_like(x, 6), x));
  });
}

Array sigmoid(const Array& x_in) {
  return with_name("sigmoid", [&]() -> Array {
    Array x = inexact(x_in);
    return np::reciprocal(Array(1.0) + np::exp(np::negative(x)));
  });
}

Array softplus(const Array& x_in) {
  return with_name("softplus", [&]() -> Array {
    // logaddexp(x, 0) = max(x, 0) + log1p(exp(-|x|)), with the branches written as where()
    // so the derivative at 0 is sigmoid(0) = 1/2 like JAX's logaddexp jvp (kiln's max and
    // abs would split or zero it there).
    Array x = inexact(x_in);
    Array pos = x > Array(0);
    Array abs_x = np::where(pos, x, np::negative(x));
    return np::where(pos, x, np::zeros_like(x)) + np::log1p(np::exp(np::negative(abs_x)));
  });
}

Array log_sigmoid(const Array& x) {
  return with_name("log_sigmoid", [&]() -> Array { return np::negative(softplus(np::negative(inexact(x)))); });
}

Array silu(const Array& x_in) {
  return with_name("silu", [&]() -> Array {
    Array x = inexact(x_in);
    return x * sigmoid(x);
  });
}
Array swish(const Array& x) {
  return with_name("swish", [&]() -> Array { return silu(x); });
}

Array elu(const Array& x_in, double alpha) {
  return with_name("elu", [&]() -> Array {
    Array x = inexact(x_in);
    Array pos = x > Array(0);
    // expm1 only sees x <= 0, so large positive inputs cannot overflow into the unused branch.
    Array safe = np::where(pos, np::zeros_like(x), x);
    return np::where(pos, x, Array(alpha) * np::expm1(safe));
  });
}

Array leaky_relu(const Array& x_in, double negative_slope) {
  return with_name("leaky_relu", [&]() -> Array {
    Array x = inexact(x_in);
    return np::where(x >= Array(0), x, Array(negative_slope) * x);
  });
}

Array gelu(const Array& x_in, bool approximate) {
  return with_name("gelu", [&]() -> Array {
    Array x = inexact(x_in);
    if (approximate) {
      Array inner = like(x, std::sqrt(2 / M_PI)) * (x + Array(0.044715) * (x * x * x));
      return x * (Array(0.5) * (Array(1.0) + np::tanh(inner)));
    }
    return x * (np::erf(x / like(x, M_SQRT2)) + Array(1.0)) / Array(2.0);
  });
}

Array softmax(const Array& x_in, Axes axis) {
  return with_name("softmax", [&]() -> Array {
    Array x = inexact(x_in);
    // An empty input has an empty result (as JAX); max would have no identity to start from.
    if (x.size() == 0) return x;
    Array unnormalized = np::exp(x - stop_gradient(np::max(x, axis, true)));
    return unnormalized / np::sum(unnormalized, axis, true);
  });
}

Array log_softmax(const Array& x_in, Axes axis) {
  return with_name("log_softmax", [&]() -> Array {
    Array x = inexact(x_in);
    if (x.size() == 0) return x;
    Array shifted = x - stop_gradient(np::max(x, axis, true));
    return shifted - np::log(np::sum(np::exp(shifted), axis, true));
  });
}

Array logsumexp(const Array& a_in, Axes axis, bool keepdims) {
  return with_name("logsumexp", [&]() -> Array {
    Array a = inexact(a_in);
    Array amax = np::max(a, axis, true);
    // An infinite max (all -inf, or a +inf) would give nan in a - amax; shift by 0 there.
    amax = stop_gradient(np::where(np::isfinite(amax), amax, np::zeros_like(amax)));
    Array out = np::log(np::abs(np::sum(np::exp(a - amax), axis, true))) + amax;
    return keepdims ? out : np::squeeze(out, axis.all() ? Axes() : axis);
  });
}

Array standardize(const Array& x_in, Axes axis, std::optional<Array> mean,
                  std::optional<Array> variance, double epsilon) {
  return with_name("standardize", [&]() -> Array {
    Array x = inexact(x_in);
    Array m = mean ? *mean : np::mean(x, axis, true);
    Array v = variance ? *variance : np::mean(np::square(x), axis, true) - np::square(m);
    return (x - m) * np::rsqrt(v + Array(epsilon));
  });
}

Array one_hot(const Array& x, int64_t num_classes, DType dtype, int axis) {
  return with_name("one_hot", [&]() -> Array {
    if (num_classes < 0) fail("one_hot", "got num_classes = ", num_classes, ", expected >= 0");
    int out_axis = np::detail::normalize_axis("one_hot", axis, x.ndim() + 1);
    Array lhs = np::expand_dims(x, out_axis);
    Shape rshape(size_t(x.ndim() + 1), 1);
    rshape[size_t(out_axis)] = num_classes;
    Array rhs = cast(np::detail::iota(rshape, out_axis, x.device()), x.dtype(), false);
    return np::equal(lhs, rhs).astype(dtype);
  });
}

Array dot_product_attention(const Array& query_in, const Array& key_in, const Array& value_in,
                            std::optional<Array> bias, std::optional<Array> mask,
                            std::optional<double> scale, bool is_causal) {
  return with_name("dot_product_attention", [&]() -> Array {
    const char* op = "dot_product_attention";
    int nd = query_in.ndim();
    if (nd != 3 && nd != 4)
      fail(op, "got query of shape ", shape_str(query_in.shape()),
           ", expected [B, T, N, H] or [T, N, H]");
    if (key_in.ndim() != nd || value_in.ndim() != nd)
      fail(op, "got key ", shape_str(key_in.shape()), " and value ", shape_str(value_in.shape()),
           ", expected the rank of query ", shape_str(query_in.shape()));
    auto batched = [&](const Array& t) { return nd == 3 ? np::expand_dims(t, 0) : t; };
    Array q = batched(query_in), k = batched(key_in), v = batched(value_in);
    int64_t B = q.shape(0), T = q.shape(1), N = q.shape(2), H = q.shape(3);
    int64_t S = k.shape(1), K = k.shape(2);
    if (k.shape(0) != B || k.shape(3) != H || v.shape() != k.shape() || K == 0 || N % K != 0)
      fail(op, "got query ", shape_str(q.shape()), ", key ", shape_str(k.shape()), ", value ",
           shape_str(v.shape()), ", expected key and value [B, S, K, H] with K dividing N");
    int64_t G = N / K;
    DType logits_dt = promote({q.dtype(), false}, {float32, false}).dtype;
    // Grouped-query layout: query heads n = k * G + g share key/value head k.
    Array qg = q.reshape({B, T, K, G, H});
    Array logits = np::einsum("btkgh,bskh->bkgts", {qg, k}).astype(logits_dt);
    logits = logits * np::detail::constant({}, logits_dt, scale ? *scale : 1.0 / std::sqrt(double(H)),
                                           q.device());
    auto grouped = [&](const Array& t, const char* what) {
      Shape full{B, N, T, S};
      Shape b = np::broadcast_shapes(t.shape(), full);
      if (b != full)
        fail(op, "got ", what, " of shape ", shape_str(t.shape()), ", expected one broadcastable to ",
             shape_str(full));
      return np::broadcast_to(t, full).reshape({B, K, G, T, S});
    };
    if (bias) logits = (logits + grouped(*bias, "bias")).astype(logits_dt);
    if (mask || is_causal) {
      Array keep = np::ones({B, K, G, T, S}, bool_);
      if (mask) keep = np::logical_and(keep, grouped(*mask, "mask"));
      if (is_causal) {
        Shape ts{T, S};
        keep = np::logical_and(
            keep, np::detail::iota(ts, 1, q.device()) <= np::detail::iota(ts, 0, q.device()));
      }
      double large_negative =
          -0.7 * (logits_dt == float64   ? std::numeric_limits<double>::max()
                  : logits_dt == float16 ? 65504.0
                                         : double(std::numeric_limits<float>::max()));
      logits =
          np::where(keep, logits, np::detail::constant({}, logits_dt, large_negative, q.device()));
    }
    Array probs = softmax(logits.astype(float32), -1).astype(k.dtype());
    Array out = np::einsum("bkgts,bskh->btkgh", {probs, v}).reshape({B, T, N, H});
    return nd == 3 ? np::squeeze(out, 0) : out;
  });
}

}  // namespace kiln::nn
