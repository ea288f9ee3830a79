// Public header: kiln::executorch, ExecuTorch `.pte` programs (load, method_names, run) run
// through kiln's compiler, and the list of ExecuTorch operators kiln supports.
#pragma once
#include "models/executorch/program.h"
