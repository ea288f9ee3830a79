// Public header: kiln::Array, the array handle.
#pragma once
#include "frontend/array.h"
