// Public umbrella header: everything a C++ user of kiln needs.
#pragma once
#include "kiln/array.h"
#include "kiln/debug.h"
#include "kiln/fft.h"
#include "kiln/io.h"
#include "kiln/jit.h"
#include "kiln/lax.h"
#include "kiln/linalg.h"
#include "kiln/nn.h"
#include "kiln/numpy.h"
#include "kiln/optax.h"
#include "kiln/random.h"
#include "kiln/transforms.h"
