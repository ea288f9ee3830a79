// Public header: kiln::lax, convolution, windowed reductions, dtype conversion and the fused
// decode attention.
#pragma once
#include "library/lax.h"
#include "library/decode_attention.h"
#include "library/lax_control.h"
#include "library/special.h"
