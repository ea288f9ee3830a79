// Public header: kiln::executorch, ExecuTorch `.pte` programs (load, method_names, run) run
// through kiln's compiler, the named data of their `.ptd` files, and the list of ExecuTorch
// operators kiln supports.
#pragma once
#include "models/executorch/named_data.h"
#include "models/executorch/program.h"
