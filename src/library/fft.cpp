// kiln::numpy::fft: mixed-radix Cooley-Tukey FFTs written with numpy functions only, so
// every transform is a linear kiln program that differentiates, batches and jits.
//
// One level splits n = A B (A the first factor, j = a + A b, k = B c + d):
//   X[B c + d] = sum_a W_A^{ac} W_n^{ad} (sum_b x[a + A b] W_B^{bd}),
// i.e. a length-B transform along a reshaped axis, a twiddle product, then a dense A-point
// DFT as one real [2A, 2A] matmul on the stacked (real, imag) parts. Factors are taken
// 4, 2, 3, 5, 7, then larger odd numbers (jax-js's order), so the work is O(n sum(factors))
// and a prime size is one dense DFT. Twiddles are computed in double on the host with the
// exponent reduced mod n, then rounded once to the working dtype, so they are exact to
// that dtype's rounding (computing them in-kernel in float32 would add ~|2 pi k / n| ulps).
#include "library/fft.h"

#include <cmath>
#include <numbers>

#include "library/array_args.h"

namespace kiln::numpy::fft {
namespace {

using detail::normalize_axis;

std::vector<int64_t> factor(int64_t n) {
  std::vector<int64_t> f;
  for (int64_t r : {4, 2, 3, 5, 7})
    while (n % r == 0) f.push_back(r), n /= r;
  for (int64_t r = 11; r * r <= n; r += 2)
    while (n % r == 0) f.push_back(r), n /= r;
  if (n > 1) f.push_back(n);
  return f;
}

Array upload(const std::vector<double>& v, const Shape& shape, DType dtype, const std::string& device) {
  return detail::host_array(v, shape, dtype, device);
}

// exp(sign 2 pi i k / n) as (cos, sin), with k reduced mod n first.
std::pair<double, double> root(int64_t k, int64_t n, bool inverse) {
  double t = 2 * std::numbers::pi * double(k % n) / double(n);
  return {std::cos(t), inverse ? std::sin(t) : -std::sin(t)};
}

// [[Wr, -Wi], [Wi, Wr]] for the A-point DFT matrix W[c, a] = root(a c, A).
Array dft_matrix(int64_t a_n, bool inverse, DType dtype, const std::string& device) {
  int64_t m = 2 * a_n;
  std::vector<double> v(size_t(m * m));
  for (int64_t c = 0; c < a_n; c++)
    for (int64_t a = 0; a < a_n; a++) {
      auto [re, im] = root(a * c, a_n, inverse);
      v[size_t(c * m + a)] = re;
      v[size_t(c * m + a_n + a)] = -im;
      v[size_t((a_n + c) * m + a)] = im;
      v[size_t((a_n + c) * m + a_n + a)] = re;
    }
  return upload(v, {m, m}, dtype, device);
}

Shape with_last(const Shape& batch, std::initializer_list<int64_t> tail) {
  Shape s = batch;
  s.insert(s.end(), tail);
  return s;
}

// Dense A-point DFT along axis -2 of [..., A, B] parts.
Complex dense_dft(const Complex& y, int64_t a_n, bool inverse) {
  Shape batch(y.real.shape().begin(), y.real.shape().end() - 2);
  int64_t b_n = y.real.shape(-1);
  Array stacked = numpy::concatenate({y.real, y.imag}, -2);  // [..., 2A, B]
  Array z = numpy::matmul(dft_matrix(a_n, inverse, y.real.dtype(), y.real.device()), stacked);
  Shape half = with_last(batch, {a_n, b_n});
  return {numpy::index(z, {ellipsis, Slice{0, a_n, std::nullopt}, Slice{}}).reshape(half),
          numpy::index(z, {ellipsis, Slice{a_n, 2 * a_n, std::nullopt}, Slice{}}).reshape(half)};
}

// The transform of [..., n] along its last axis, using factors[i:] of n.
Complex transform_last(const Complex& x, const std::vector<int64_t>& factors, size_t i, bool inverse) {
  Shape batch(x.real.shape().begin(), x.real.shape().end() - 1);
  int64_t n = x.real.shape(-1);
  int64_t a_n = factors[i], b_n = n / a_n;
  if (b_n == 1) {
    Complex col{x.real.reshape(with_last(batch, {n, 1})), x.imag.reshape(with_last(batch, {n, 1}))};
    Complex z = dense_dft(col, n, inverse);
    return {z.real.reshape(x.real.shape()), z.imag.reshape(x.real.shape())};
  }
  // j = a + A b: [..., B, A] -> [..., A, B], then the B-point transforms along the last axis.
  auto split = [&](const Array& p) { return numpy::swapaxes(p.reshape(with_last(batch, {b_n, a_n})), -1, -2); };
  Complex y = transform_last({split(x.real), split(x.imag)}, factors, i + 1, inverse);
  std::vector<double> tr(static_cast<size_t>(n)), ti(static_cast<size_t>(n));
  for (int64_t a = 0; a < a_n; a++)
    for (int64_t d = 0; d < b_n; d++) std::tie(tr[size_t(a * b_n + d)], ti[size_t(a * b_n + d)]) = root(a * d, n, inverse);
  Array twr = upload(tr, {a_n, b_n}, x.real.dtype(), x.real.device());
  Array twi = upload(ti, {a_n, b_n}, x.real.dtype(), x.real.device());
  Complex t{y.real * twr - y.imag * twi, y.real * twi + y.imag * twr};
  Complex z = dense_dft(t, a_n, inverse);  // [..., C, D] with k = B c + d
  return {z.real.reshape(x.real.shape()), z.imag.reshape(x.real.shape())};
}

void check_pair(const char* op, const Complex& a) {
  if (a.real.shape() != a.imag.shape())
    fail(op, "got real and imaginary parts of shapes ", shape_str(a.real.shape()), " and ",
         shape_str(a.imag.shape()), ", expected one shape");
  if (a.real.dtype() != a.imag.dtype())
    fail(op, "got real and imaginary parts of dtypes ", dtype_name(a.real.dtype()), " and ",
         dtype_name(a.imag.dtype()), ", expected one dtype");
  if (!is_float(a.real.dtype()))
    fail(op, "got dtype ", dtype_name(a.real.dtype()), ", expected a float dtype");
}

void check_real(const char* op, const Array& a) {
  if (!is_float(a.dtype())) fail(op, "got dtype ", dtype_name(a.dtype()), ", expected a float dtype");
}

Complex transform(const char* op, const Complex& a, int axis, bool inverse) {
  check_pair(op, a);
  int ax = normalize_axis(op, axis, a.real.ndim());
  int64_t n = a.real.shape(ax);
  if (n < 1) fail(op, "got size ", n, " along axis ", axis, ", expected a positive size");
  DType dt = a.real.dtype();
  DType work = dt == DType::Float16 ? DType::Float32 : dt;
  auto in = [&](const Array& p) { return numpy::moveaxis(p.astype(work), ax, -1); };
  Complex z{in(a.real), in(a.imag)};
  if (n > 1) z = transform_last(z, factor(n), 0, inverse);
  auto out = [&](const Array& p) {
    Array r = inverse ? p / Array(double(n)).astype(work) : p;
    return numpy::moveaxis(r, -1, ax).astype(dt);
  };
  return {out(z.real), out(z.imag)};
}

std::vector<int> axes_or_all(const char* op, const std::optional<std::vector<int>>& axes, int ndim) {
  std::vector<int> out;
  if (!axes)
    for (int i = 0; i < ndim; i++) out.push_back(i);
  else
    for (int a : *axes) out.push_back(normalize_axis(op, a, ndim));
  for (size_t i = 0; i < out.size(); i++)
    for (size_t j = 0; j < i; j++)
      if (out[i] == out[j]) fail(op, "got axis ", out[i], " twice, expected distinct axes");
  return out;
}

Array slice_axis(const Array& a, int axis, int64_t start, int64_t stop) {
  std::vector<Index> idx(size_t(axis), Slice{});
  idx.push_back(Slice{start, stop, std::nullopt});
  return numpy::index(a, idx);
}

Array roll_axis(const Array& a, int axis, int64_t shift) {
  int64_t n = a.shape(axis);
  if (n == 0) return a;
  shift = ((shift % n) + n) % n;
  if (shift == 0) return a;
  return numpy::concatenate({slice_axis(a, axis, n - shift, n), slice_axis(a, axis, 0, n - shift)}, axis);
}

Array shift(const char* op, const Array& a, const Axes& axes, bool forward) {
  std::vector<int> ax = detail::normalize_axes(op, axes, a.ndim());
  Array out = a;
  for (int x : ax) {
    int64_t s = a.shape(x) / 2;
    out = roll_axis(out, x, forward ? s : -s);
  }
  return out;
}

Array frequencies(const char* op, int64_t n, double d, DType dtype, bool real) {
  if (n < 1) fail(op, "got n = ", n, ", expected a positive integer");
  if (!std::isfinite(d) || d == 0) fail(op, "got d = ", d, ", expected a finite non-zero number");
  if (!is_float(dtype)) fail(op, "got dtype ", dtype_name(dtype), ", expected a float dtype");
  double scale = 1.0 / (double(n) * d);
  std::vector<double> v;
  if (real) {
    for (int64_t i = 0; i <= n / 2; i++) v.push_back(double(i) * scale);
  } else {
    for (int64_t i = 0; i < (n - 1) / 2 + 1; i++) v.push_back(double(i) * scale);
    for (int64_t i = -(n / 2); i < 0; i++) v.push_back(double(i) * scale);
  }
  return upload(v, {int64_t(v.size())}, dtype, default_device());
}

}  // namespace

Complex fft(const Complex& a, int axis) {
  return with_name("fft", [&]() -> Complex { return transform("fft", a, axis, false); });
}
Complex ifft(const Complex& a, int axis) {
  return with_name("ifft", [&]() -> Complex { return transform("ifft", a, axis, true); });
}

Complex fftn(const Complex& a, const std::optional<std::vector<int>>& axes) {
  return with_name("fftn", [&]() -> Complex {
    check_pair("fftn", a);
    Complex z = a;
    for (int ax : axes_or_all("fftn", axes, a.real.ndim())) z = transform("fftn", z, ax, false);
    return z;
  });
}
Complex ifftn(const Complex& a, const std::optional<std::vector<int>>& axes) {
  return with_name("ifftn", [&]() -> Complex {
    check_pair("ifftn", a);
    Complex z = a;
    for (int ax : axes_or_all("ifftn", axes, a.real.ndim())) z = transform("ifftn", z, ax, true);
    return z;
  });
}
Complex fft2(const Complex& a, const std::vector<int>& axes) {
  return with_name("fft2", [&]() -> Complex { return fftn(a, axes); });
}
Complex ifft2(const Complex& a, const std::vector<int>& axes) {
  return with_name("ifft2", [&]() -> Complex { return ifftn(a, axes); });
}

Complex rfft(const Array& a, int axis) {
  return with_name("rfft", [&]() -> Complex {
    check_real("rfft", a);
    int ax = normalize_axis("rfft", axis, a.ndim());
    int64_t keep = a.shape(ax) / 2 + 1;
    Complex z = transform("rfft", {a, numpy::zeros_like(a)}, ax, false);
    return {slice_axis(z.real, ax, 0, keep), slice_axis(z.imag, ax, 0, keep)};
  });
}

Array irfft(const Complex& a, int axis) {
  return with_name("irfft", [&]() -> Array {
    check_pair("irfft", a);
    int ax = normalize_axis("irfft", axis, a.real.ndim());
    int64_t m = a.real.shape(ax);
    if (m < 2) fail("irfft", "got ", m, " packed frequencies along axis ", axis, ", expected at least 2");
    // The full Hermitian spectrum X[n - k] = conj(X[k]); the real part of its inverse drops
    // the imaginary parts of X[0] and X[n/2], as NumPy's irfft does.
    Array re = numpy::concatenate({a.real, numpy::flip(slice_axis(a.real, ax, 1, m - 1), ax)}, ax);
    Array im = numpy::concatenate({a.imag, -numpy::flip(slice_axis(a.imag, ax, 1, m - 1), ax)}, ax);
    return transform("irfft", {re, im}, ax, true).real;
  });
}

Complex rfftn(const Array& a, const std::optional<std::vector<int>>& axes) {
  return with_name("rfftn", [&]() -> Complex {
    check_real("rfftn", a);
    std::vector<int> ax = axes_or_all("rfftn", axes, a.ndim());
    if (ax.empty()) return {a, numpy::zeros_like(a)};
    Complex z = rfft(a, ax.back());
    for (size_t i = 0; i + 1 < ax.size(); i++) z = transform("rfftn", z, ax[i], false);
    return z;
  });
}
Complex rfft2(const Array& a, const std::vector<int>& axes) {
  return with_name("rfft2", [&]() -> Complex { return rfftn(a, axes); });
}

Array irfftn(const Complex& a, const std::optional<std::vector<int>>& axes) {
  return with_name("irfftn", [&]() -> Array {
    check_pair("irfftn", a);
    std::vector<int> ax = axes_or_all("irfftn", axes, a.real.ndim());
    if (ax.empty()) return a.real;
    Complex z = a;
    for (size_t i = 0; i + 1 < ax.size(); i++) z = transform("irfftn", z, ax[i], true);
    return irfft(z, ax.back());
  });
}
Array irfft2(const Complex& a, const std::vector<int>& axes) {
  return with_name("irfft2", [&]() -> Array { return irfftn(a, axes); });
}

Array hfft(const Complex& a, int axis) {
  return with_name("hfft", [&]() -> Array {
    check_pair("hfft", a);
    int ax = normalize_axis("hfft", axis, a.real.ndim());
    int64_t n = 2 * (a.real.shape(ax) - 1);
    Array r = irfft({a.real, -a.imag}, ax);
    return r * Array(double(n)).astype(r.dtype());
  });
}

Complex ihfft(const Array& a, int axis) {
  return with_name("ihfft", [&]() -> Complex {
    check_real("ihfft", a);
    int ax = normalize_axis("ihfft", axis, a.ndim());
    Array n = Array(double(a.shape(ax))).astype(a.dtype());
    Complex z = rfft(a, ax);
    return {z.real / n, -z.imag / n};
  });
}

Array fftfreq(int64_t n, double d, DType dtype) {
  return with_name("fftfreq", [&]() -> Array { return frequencies("fftfreq", n, d, dtype, false); });
}
Array rfftfreq(int64_t n, double d, DType dtype) {
  return with_name("rfftfreq", [&]() -> Array { return frequencies("rfftfreq", n, d, dtype, true); });
}
Array fftshift(const Array& a, Axes axes) {
  return with_name("fftshift", [&]() -> Array { return shift("fftshift", a, axes, true); });
}
Array ifftshift(const Array& a, Axes axes) {
  return with_name("ifftshift", [&]() -> Array { return shift("ifftshift", a, axes, false); });
}

}  // namespace kiln::numpy::fft
