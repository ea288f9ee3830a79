// kiln::Array: a reference-counted handle to an n-d array with value semantics.
// Arrays are lazy: elementwise and movement ops build expressions; reading realizes them.
#pragma once
#include <concepts>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/error.h"

namespace kiln {

using Shape = std::vector<int64_t>;  // the size of each axis, C order
std::string shape_str(const Shape& s);  // "(2, 3)"
// The most bytes one array may hold: what a 32-bit (Wasm) address space can hold, 2^44 on
// 64-bit hosts (far above any machine's memory, far below int64 overflow).
int64_t max_array_bytes();
// Throws kiln::Error naming `op` when `shape` has a negative size, its element count
// overflows, or its bytes exceed max_array_bytes(): a huge request fails when it is made,
// before any allocation (an allocation that size would abort or wrap a 32-bit size_t).
// `max_bytes` is max_array_bytes() for arrays that will hold a buffer (creation); primitive
// results pass a larger bound, as they may stay lazy views or fused intermediates that are
// never allocated (a quantized matmul broadcasts its packed words far past 2 GiB, fused away).
void check_array_size(const std::string& op, const Shape& shape, DType dtype,
                      int64_t max_bytes = max_array_bytes());
// The bound for primitive results: no element or byte count near int64 overflow.
constexpr int64_t kMaxLazyArrayBytes = int64_t{1} << 60;

namespace frontend {
struct ArrayImpl;
}

// One term of basic NumPy indexing: a[1], a[1:5:2], a[None], a[...].
struct Slice {
  std::optional<int64_t> start, stop, step;
};
// The index terms a[None] and a[...]: insert an axis of size 1, and stand for every axis not
// named.
struct NewAxis {};
struct Ellipsis {};
inline constexpr NewAxis newaxis{};  // a[newaxis]: a new axis of size 1
inline constexpr Ellipsis ellipsis{};  // a[ellipsis]: every axis not otherwise named
using Index = std::variant<int64_t, Slice, NewAxis, Ellipsis>;  // one term of a[...]

// A reference-counted handle to an n-d array on a device, with value semantics (copies share
// the array). Arrays are immutable and lazy: operations build expressions that run as fused
// kernels when a value is read (eval, to_vector, item). Functions throw kiln::Error on bad
// input. Example:
//   Array x = numpy::reshape(numpy::arange(6), {2, 3});  // int32 [[0, 1, 2], [3, 4, 5]]
//   double s = numpy::sum(x * 2).item();                 // 30
class Array {
 public:
  Array() = default;  // an empty handle; using it throws kiln::Error
  // Scalars convert implicitly and are weakly typed, as Python scalars are in JAX.
  Array(double v);
  Array(float v);
  Array(int v);
  template <typename B>
    requires std::same_as<B, bool>
  Array(B v) : Array(from_bool(v)) {}

  const Shape& shape() const;  // the size of each axis
  int64_t shape(int axis) const;  // negative axes count from the end
  int ndim() const;  // the number of axes
  int64_t size() const;  // the number of elements
  DType dtype() const;  // the element type
  bool weak_type() const;  // made from a C++ scalar: takes the other operand's dtype
  const std::string& device() const;  // "cpu", "native", "wasm" or "webgpu"
  bool valid() const { return impl_ != nullptr; }  // false for an empty handle

  // Realizes the array into a buffer on its device (a no-op if already one).
  const Array& eval() const;
  // Synchronous reads (on devices that allow them), converted to T.
  template <typename T>
  std::vector<T> to_vector() const;
  std::vector<uint8_t> bytes() const;  // raw little-endian elements, C order
  // Asynchronous read: never blocks the caller on the device.
  std::future<std::vector<uint8_t>> bytes_async() const;
  double item() const;  // the value of a size-1 array
  std::string to_string() const;  // NumPy-like text

  // These four and the operators below are numpy functions, defined in the library
  // (library/array_operators.cpp), so the frontend does not depend on the library.
  Array astype(DType dtype) const;
  Array reshape(const Shape& shape) const;
  Array transpose() const;  // reverses the axes
  Array T() const { return transpose(); }
  Array operator[](const std::vector<Index>& index) const;
  Array operator[](int64_t i) const { return (*this)[std::vector<Index>{i}]; }

  // Internal: the implementation behind the handle.
  explicit Array(std::shared_ptr<frontend::ArrayImpl> impl) : impl_(std::move(impl)) {}
  const std::shared_ptr<frontend::ArrayImpl>& impl() const;  // throws if empty
  // True if both handles refer to the same array object.
  bool is(const Array& other) const { return impl_ == other.impl_; }

 private:
  static Array from_bool(bool v);
  std::shared_ptr<frontend::ArrayImpl> impl_;
};

extern template std::vector<float> Array::to_vector<float>() const;
extern template std::vector<double> Array::to_vector<double>() const;
extern template std::vector<int32_t> Array::to_vector<int32_t>() const;
extern template std::vector<uint32_t> Array::to_vector<uint32_t>() const;
extern template std::vector<int64_t> Array::to_vector<int64_t>() const;
extern template std::vector<uint8_t> Array::to_vector<uint8_t>() const;
extern template std::vector<bool> Array::to_vector<bool>() const;

// Arithmetic and comparison operators (NumPy broadcasting, JAX promotion).
Array operator+(const Array& a, const Array& b);
Array operator-(const Array& a, const Array& b);
Array operator*(const Array& a, const Array& b);
Array operator/(const Array& a, const Array& b);
Array operator%(const Array& a, const Array& b);
Array operator-(const Array& a);
Array operator<(const Array& a, const Array& b);
Array operator<=(const Array& a, const Array& b);
Array operator>(const Array& a, const Array& b);
Array operator>=(const Array& a, const Array& b);
Array operator==(const Array& a, const Array& b);
Array operator!=(const Array& a, const Array& b);
Array operator&(const Array& a, const Array& b);
Array operator|(const Array& a, const Array& b);
Array operator^(const Array& a, const Array& b);
Array operator~(const Array& a);
Array operator!(const Array& a);

}  // namespace kiln
