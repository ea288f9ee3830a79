// call_op: runs one kiln operation by the name the TypeScript wrapper uses (op_table.cpp).
// Returns a Handle, a JS array of Handles, or a JS Error carrying kiln::Error's message.
#pragma once
#include "js_values.h"

namespace kiln::js {
val call_op(const std::string& name, const val& args, const val& params);
}
