// Public header: kiln::numpy, NumPy-style array functions.
#pragma once
#include "library/numpy.h"
