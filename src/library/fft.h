// kiln::numpy::fft: discrete Fourier transforms (jnp.fft's names) on complex values held as a
// pair of real arrays, as jax-js's ComplexPair (kiln has no complex dtype).
#pragma once
#include <optional>
#include <vector>

#include "frontend/array.h"
#include "library/numpy.h"

namespace kiln::numpy::fft {

// real + i imag; both parts have one shape and one float dtype.
struct Complex {
  Array real;
  Array imag;
};

// Transforms are mixed-radix Cooley-Tukey compositions of reshapes, small dense DFT matmuls
// and twiddle products (fft.cpp), so they are linear kiln programs: grad, jvp, vmap and jit
// apply unchanged. Sizes need not be powers of two. Unnormalized forward, 1/n inverse
// (NumPy's norm="backward"); float16 is computed in float32 and rounded once.
Complex fft(const Complex& a, int axis = -1);
Complex ifft(const Complex& a, int axis = -1);
// axes = nullopt: every axis.
Complex fftn(const Complex& a, const std::optional<std::vector<int>>& axes = std::nullopt);
Complex ifftn(const Complex& a, const std::optional<std::vector<int>>& axes = std::nullopt);
Complex fft2(const Complex& a, const std::vector<int>& axes = {-2, -1});
Complex ifft2(const Complex& a, const std::vector<int>& axes = {-2, -1});

// Real input: the n/2 + 1 non-negative frequencies along the (last) transformed axis.
Complex rfft(const Array& a, int axis = -1);
Complex rfftn(const Array& a, const std::optional<std::vector<int>>& axes = std::nullopt);
Complex rfft2(const Array& a, const std::vector<int>& axes = {-2, -1});
// Inverses of the real transforms: the output length along the last transformed axis is
// 2 (m - 1) for m packed frequencies (jax-js has no `n` argument, so kiln has none).
Array irfft(const Complex& a, int axis = -1);
Array irfftn(const Complex& a, const std::optional<std::vector<int>>& axes = std::nullopt);
Array irfft2(const Complex& a, const std::vector<int>& axes = {-2, -1});
// Hermitian input (m packed frequencies) to a real signal of length 2 (m - 1), and back.
Array hfft(const Complex& a, int axis = -1);
Complex ihfft(const Array& a, int axis = -1);

// Sample frequencies [0, 1, ..., -1] / (n d) and [0, ..., n/2] / (n d).
Array fftfreq(int64_t n, double d = 1.0, DType dtype = float32);
Array rfftfreq(int64_t n, double d = 1.0, DType dtype = float32);
// Rolls the zero frequency to the centre (by n/2 along each axis) and back.
Array fftshift(const Array& a, Axes axes = {});
Array ifftshift(const Array& a, Axes axes = {});

}  // namespace kiln::numpy::fft
