// Public header: kiln::random, JAX-identical threefry2x32 keys and samplers.
#pragma once
#include "library/random.h"
