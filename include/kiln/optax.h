// Public header: kiln::optax, optax-style optimizers, clipping and schedules over pytrees.
#pragma once
#include "library/optax.h"
