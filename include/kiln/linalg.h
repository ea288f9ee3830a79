// Public header: kiln::linalg, factorizations and solvers (cholesky, lu, solve, inv, det).
#pragma once
#include "library/linalg.h"
