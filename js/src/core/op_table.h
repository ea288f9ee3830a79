// call_op: runs one kiln operation by the name the TypeScript wrapper uses (op_table.cpp).
// Returns a Handle, a JS array of Handles, or a JS Error carrying kiln::Error's message.
#pragma once
#include <functional>
#include <map>

#include "js_values.h"

namespace kiln::js {
val call_op(const std::string& name, const val& args, const val& params);

// One op: array arguments and a JS options object to a Handle or JS array of Handles.
using OpFn = std::function<val(const std::vector<Array>&, const val&)>;
// numpy.fft and the eigen/singular value decompositions (op_table_spectral.cpp).
const std::map<std::string, OpFn>& spectral_ops();
}  // namespace kiln::js
