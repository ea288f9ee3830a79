// Public header: kiln's transformations (grad, jvp, vjp, vmap, jacobians, custom rules)
// and the Tree pytree type they take and return.
#pragma once
#include "frontend/pytree.h"
#include "frontend/transforms.h"
