// Public header: kiln::lax, convolution, windowed reductions and dtype conversion.
#pragma once
#include "library/lax.h"
#include "library/lax_control.h"
#include "library/special.h"
