// Public header: jit (trace, fuse into kernels, cache by signature) and make_jaxpr.
// Composes with the transformations of kiln/transforms.h in any order.
#pragma once
#include "frontend/jit.h"
