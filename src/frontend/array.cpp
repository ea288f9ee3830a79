// kiln::Array's methods: metadata, reads (sync and async), printing, and the operators,
// which forward to kiln::numpy.
#include "frontend/array.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <type_traits>

#include "backend/blocking_read.h"
#include "frontend/array_impl.h"
#include "ir/alu_op.h"

namespace kiln {

int64_t max_array_bytes() { return sizeof(size_t) == 4 ? (int64_t(1) << 31) : (int64_t(1) << 44); }

void check_array_size(const std::string& op, const Shape& shape, DType dtype, int64_t max_bytes) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0) fail(op, "got shape ", shape_str(shape), ", expected non-negative sizes");
    if (d != 0 && n > max_bytes / d) overflow = true;
    else n *= d;
  }
  bool empty = std::find(shape.begin(), shape.end(), int64_t(0)) != shape.end();
  if (!empty && (overflow || n > max_bytes / itemsize(dtype)))
    fail(op, "got shape ", shape_str(shape), " of ", dtype_name(dtype), ", expected at most ", max_bytes,
         " bytes in one array");
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); i++) os << (i ? ", " : "") << s[i];
  os << (s.size() == 1 ? ",)" : ")");
  return os.str();
}

namespace {
Array scalar(DType dtype, double v, bool weak) {
  frontend::Aval av{{}, dtype, weak};
  return Array(frontend::make_from_exp(av, default_device(), AluExp::weak_constant(dtype, v), {}));
}
}  // namespace

Array::Array(double v) : Array(scalar(DType::Float32, v, true)) {}
Array::Array(float v) : Array(scalar(DType::Float32, v, true)) {}
Array::Array(int v) : Array(scalar(DType::Int32, v, true)) {}
Array Array::from_bool(bool v) { return scalar(DType::Bool, v ? 1 : 0, false); }

const std::shared_ptr<frontend::ArrayImpl>& Array::impl() const {
  if (!impl_) throw Error("Array: the handle is empty (default-constructed or moved from)");
  return impl_;
}

const Shape& Array::shape() const { return impl()->aval.shape; }
int64_t Array::shape(int axis) const {
  int nd = ndim();
  if (axis < -nd || axis >= nd) fail("Array.shape", "axis ", axis, " is out of bounds for rank ", nd);
  return shape()[size_t(axis < 0 ? axis + nd : axis)];
}
int Array::ndim() const { return int(shape().size()); }
int64_t Array::size() const { return impl()->aval.size(); }
DType Array::dtype() const { return impl()->aval.dtype; }
bool Array::weak_type() const { return impl()->aval.weak; }
const std::string& Array::device() const { return impl()->device; }

const Array& Array::eval() const {
  // A traced array has no data to realize yet; eval() is a no-op on it, as in JAX.
  if (impl()->tracer) return *this;
  impl()->realize();
  return *this;
}

std::vector<uint8_t> Array::bytes() const {
  auto& im = *impl();
  const BufferRef& buf = im.buffer();
  Backend& be = buf->backend();
  if (!can_read_blocking(be))
    fail("Array.bytes", "device ", be.name(), " has no synchronous reads here, expected bytes_async()");
  std::vector<uint8_t> out(static_cast<size_t>(size() * itemsize(dtype())));
  read_blocking(be, buf->handle(), 0, int64_t(out.size()), out.data());
  return out;
}

std::future<std::vector<uint8_t>> Array::bytes_async() const {
  auto& im = *impl();
  const BufferRef& buf = im.buffer();
  auto promise = std::make_shared<std::promise<std::vector<uint8_t>>>();
  auto fut = promise->get_future();
  // The buffer is captured so it outlives the read.
  buf->backend().read_async_checked(
      buf->handle(), 0, size() * itemsize(dtype()),
      [promise, buf](std::vector<uint8_t> data) { promise->set_value(std::move(data)); },
      [promise](std::string msg) { promise->set_exception(std::make_exception_ptr(Error(msg))); });
  return fut;
}

namespace {
// Whether `d`'s elements are stored exactly as a T.
template <typename T>
bool same_element_type(DType d) {
  if constexpr (std::is_same_v<T, float>) return d == DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return d == DType::Float64;
  else if constexpr (std::is_same_v<T, int32_t>) return d == DType::Int32;
  else if constexpr (std::is_same_v<T, uint32_t>) return d == DType::Uint32;
  else return false;
}
}  // namespace

template <typename T>
std::vector<T> Array::to_vector() const {
  std::vector<uint8_t> b = bytes();
  std::vector<T> out(static_cast<size_t>(size()));
  // Elements already of type T (a float32 array read as floats: an LLM step's logits) are
  // copied whole; converting each through read_element's double cost a call per element.
  if constexpr (!std::is_same_v<T, bool>) {
    if (same_element_type<T>(dtype())) {
      if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
      return out;
    }
  }
  for (size_t i = 0; i < out.size(); i++) out[i] = static_cast<T>(read_element(b.data(), dtype(), int64_t(i)));
  return out;
}
template std::vector<float> Array::to_vector<float>() const;
template std::vector<double> Array::to_vector<double>() const;
template std::vector<int32_t> Array::to_vector<int32_t>() const;
template std::vector<uint32_t> Array::to_vector<uint32_t>() const;
template std::vector<int64_t> Array::to_vector<int64_t>() const;
template std::vector<uint8_t> Array::to_vector<uint8_t>() const;
template std::vector<bool> Array::to_vector<bool>() const;

double Array::item() const {
  if (size() != 1) fail("Array.item", "got an array of shape ", shape_str(shape()), ", expected size 1");
  return to_vector<double>()[0];
}

std::string Array::to_string() const {
  std::vector<double> v = to_vector<double>();
  std::ostringstream os;
  const Shape& s = shape();
  auto fmt = [&](double x) {
    if (dtype() == DType::Bool) os << (x != 0 ? "True" : "False");
    else os << x;
  };
  // Nested brackets, row-major.
  std::function<void(size_t, size_t)> rec = [&](size_t axis, size_t offset) {
    if (axis == s.size()) {
      fmt(v[offset]);
      return;
    }
    size_t inner = 1;
    for (size_t k = axis + 1; k < s.size(); k++) inner *= size_t(s[k]);
    os << "[";
    for (int64_t i = 0; i < s[axis]; i++) {
      if (i && axis + 1 == s.size()) os << ' ';
      if (i && axis + 1 < s.size()) os << '\n' << std::string(axis + 1, ' ');
      rec(axis + 1, offset + size_t(i) * inner);
    }
    os << "]";
  };
  rec(0, 0);
  return os.str();
}

}  // namespace kiln
