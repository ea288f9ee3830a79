// Argument handling shared by the numpy functions: axis normalization, broadcasting and
// JAX type promotion of operands, and small constructors used across files.
#pragma once
#include <string>
#include <vector>

#include "frontend/primitive.h"
#include "library/numpy.h"

namespace kiln::numpy::detail {

using frontend::Params;
using frontend::Prim;

// Maps a possibly negative axis into [0, ndim); throws naming `op` otherwise.
int normalize_axis(const char* op, int axis, int ndim);
// Normalized, sorted, duplicate-free axes; Axes{} means all.
std::vector<int> normalize_axes(const char* op, const Axes& axes, int ndim);

// The broadcast shape of all operands; throws naming `op` if they do not broadcast.
Shape broadcast_shape(const char* op, const std::vector<Shape>& shapes);
// JAX promotion of the operands' types.
TypeInfo result_type(const std::vector<Array>& args);
// Casts to a dtype, keeping or dropping weak typing.
Array cast(const Array& a, DType dtype, bool weak);
// Promotes operands to a common type and broadcasts them to a common shape.
std::vector<Array> promote_broadcast(const char* op, const std::vector<Array>& args);
// Primitive shorthands that are no-ops when nothing changes, so views stay simple.
Array reshape_to(const Array& a, const Shape& shape);
Array permute(const Array& a, const std::vector<int>& perm);
Array expand_to(const Array& a, const Shape& shape);  // same rank, size-1 axes grow
// Broadcasts one array to `shape` (rank may grow on the left).
Array broadcast(const Array& a, const Shape& shape);

// An int32 array with values 0..n-1 along `axis` of `shape` (lazy; no buffer).
Array iota(const Shape& shape, int axis, const std::string& device);
// A constant array of `aval` on a device (lazy; no buffer).
Array constant(const Shape& shape, DType dtype, double value, const std::string& device,
               bool weak = false);
// Host values (rounded once to dtype) uploaded into a buffer on `device`: tables that
// library routines build on the host (FFT twiddles, Jacobi orderings).
Array host_array(const std::vector<double>& values, const Shape& shape, DType dtype,
                 const std::string& device);
// The same array with a different aval but identical elements (only the weak flag).
Array with_weak(const Array& a, bool weak);

inline Array bind1(Prim p, const Array& a, const Params& prm = {}) { return frontend::bind(p, {a}, prm); }
inline Array bind2(Prim p, const Array& a, const Array& b) { return frontend::bind(p, {a, b}); }

}  // namespace kiln::numpy::detail
