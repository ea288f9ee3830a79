// Public header: kiln::numpy::fft, discrete Fourier transforms on (real, imag) pairs.
#pragma once
#include "library/fft.h"
