// DType: the element types kiln arrays hold, their sizes, and JAX's type promotion
// (with weakly typed scalars) over them.
#pragma once
#include <cstdint>
#include <string>

namespace kiln {

// The element types of kiln arrays (NumPy's names: bool, int32, uint32, float16, float32,
// float64; float64 is not on webgpu).
enum class DType : uint8_t { Bool, Int32, Uint32, Float16, Float32, Float64 };

// Short names of the dtypes, as jnp.float32 and friends (bool_ because bool is a C++ keyword).
inline constexpr DType bool_ = DType::Bool;
inline constexpr DType int32 = DType::Int32;
inline constexpr DType uint32 = DType::Uint32;
inline constexpr DType float16 = DType::Float16;
inline constexpr DType float32 = DType::Float32;
inline constexpr DType float64 = DType::Float64;

int itemsize(DType d);  // bytes per element: 1, 4, 4, 2, 4, 8
const char* dtype_name(DType d);  // NumPy's names: "float32", "bool", ...
DType dtype_from_name(const std::string& name);  // throws kiln::Error on unknown names
// float16, float32 or float64
inline bool is_float(DType d) { return d == DType::Float16 || d == DType::Float32 || d == DType::Float64; }
inline bool is_int(DType d) { return d == DType::Int32 || d == DType::Uint32; }  // int32 or uint32
// uint32 or bool
inline bool is_unsigned(DType d) { return d == DType::Uint32 || d == DType::Bool; }

// A dtype together with JAX's weak-type flag (Python scalars are weak).
struct TypeInfo {
  DType dtype;
  bool weak = false;
  bool operator==(const TypeInfo&) const = default;  // same dtype and weakness
};

// JAX's promotion lattice: bool < int < float, with weak types yielding to strong ones
// of the same kind. int32 with uint32 gives int32 (JAX's rule without 64-bit integers).
TypeInfo promote(TypeInfo a, TypeInfo b);

}  // namespace kiln
