// DType sizes, names and JAX-style promotion.
#include "ir/dtype.h"

#include "ir/error.h"

namespace kiln {

int itemsize(DType d) {
  switch (d) {
    case DType::Bool: return 1;
    case DType::Float16: return 2;
    case DType::Int32:
    case DType::Uint32:
    case DType::Float32: return 4;
    case DType::Float64: return 8;
  }
  return 0;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Uint32: return "uint32";
    case DType::Float16: return "float16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

DType dtype_from_name(const std::string& name) {
  for (DType d : {DType::Bool, DType::Int32, DType::Uint32, DType::Float16, DType::Float32,
                  DType::Float64})
    if (name == dtype_name(d)) return d;
  fail("dtype", "unknown dtype '", name,
       "', expected one of bool, int32, uint32, float16, float32, float64");
}

namespace {
// Kind rank: bool 0, int 1, float 2.
int kind(DType d) { return d == DType::Bool ? 0 : is_int(d) ? 1 : 2; }
}  // namespace

TypeInfo promote(TypeInfo a, TypeInfo b) {
  if (a.dtype == b.dtype) return {a.dtype, a.weak && b.weak};
  // A weak operand of the same or a lower kind yields to the strong one.
  if (a.weak != b.weak) {
    TypeInfo& w = a.weak ? a : b;
    TypeInfo& s = a.weak ? b : a;
    if (kind(w.dtype) <= kind(s.dtype)) return s;
    // A weak scalar of a higher kind wins and stays weak: in JAX, int32 array + 1.0 is a
    // weakly typed float32.
    return {w.dtype, true};
  }
  int ka = kind(a.dtype), kb = kind(b.dtype);
  if (ka != kb) return ka > kb ? a : b;
  bool weak = a.weak && b.weak;
  if (ka == 1) return {DType::Int32, weak};  // int32 with uint32
  // Two floats: the wider one.
  return {itemsize(a.dtype) >= itemsize(b.dtype) ? a.dtype : b.dtype, weak};
}

}  // namespace kiln
