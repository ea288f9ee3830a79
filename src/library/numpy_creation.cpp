// numpy creation functions: arrays from host data, constants, ranges and identities.
#include <cmath>
#include <cstring>

#include "library/array_args.h"

namespace kiln::numpy {

using namespace detail;

namespace {
void check_shape(const char* op, const Shape& shape, DType dtype = float32) { check_array_size(op, shape, dtype); }

// Uploads host values (converted to dtype) to the default device.
Array upload(const Shape& shape, DType dtype, const std::vector<double>& values) {
  std::vector<uint8_t> bytes(values.size() * size_t(itemsize(dtype)));
  for (size_t i = 0; i < values.size(); i++) write_element(bytes.data(), dtype, int64_t(i), values[i]);
  return array(bytes.data(), shape, dtype);
}

template <typename T>
Array from_vector(const std::vector<T>& data, const Shape& shape, DType dtype) {
  check_shape("array", shape, dtype);
  if (int64_t(data.size()) != kiln::prod(shape))
    fail("array", "got ", data.size(), " values for shape ", shape_str(shape), ", expected ", kiln::prod(shape));
  return array(data.data(), shape, dtype);
}
}  // namespace

Array array(const void* data, const Shape& shape, DType dtype) {
  check_shape("array", shape, dtype);
  const std::string& dev = default_device();
  int64_t bytes = kiln::prod(shape) * itemsize(dtype);
  if (!data && bytes > 0) fail("array", "got no data (a null pointer) for shape ", shape_str(shape), ", expected ", bytes, " bytes");
  BufferRef buf = get_backend(dev).allocate(std::max<int64_t>(bytes, 1));
  if (bytes) buf->backend().write(buf->handle(), 0, data, bytes);
  return Array(frontend::make_from_buffer({shape, dtype, false}, dev, buf));
}

Array array(const std::vector<float>& d, const Shape& s) { return from_vector(d, s, DType::Float32); }
Array array(const std::vector<double>& d, const Shape& s) { return from_vector(d, s, DType::Float64); }
Array array(const std::vector<int32_t>& d, const Shape& s) { return from_vector(d, s, DType::Int32); }
Array array(const std::vector<uint32_t>& d, const Shape& s) { return from_vector(d, s, DType::Uint32); }
Array array(const std::vector<bool>& d, const Shape& s) {
  std::vector<uint8_t> bytes(d.begin(), d.end());
  return from_vector(bytes, s, DType::Bool);
}

Array asarray(const Array& a, std::optional<DType> dtype) {
  return with_name("asarray", [&]() -> Array {
    if (!a.valid()) fail("asarray", "got an empty Array handle, expected an array");
    return dtype ? cast(a, *dtype, false) : a;
  });
}

Array zeros(const Shape& shape, DType dtype) {
  return with_name("zeros", [&]() -> Array {
    check_shape("zeros", shape, dtype);
    return constant(shape, dtype, 0, default_device());
  });
}
Array ones(const Shape& shape, DType dtype) {
  return with_name("ones", [&]() -> Array {
    check_shape("ones", shape, dtype);
    return constant(shape, dtype, 1, default_device());
  });
}
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype) {
  return with_name("full", [&]() -> Array {
    check_shape("full", shape);
    Array v = dtype ? cast(fill_value, *dtype, false) : fill_value;
    return broadcast_to(v, shape);
  });
}
Array zeros_like(const Array& a, std::optional<DType> dtype) {
  return with_name("zeros_like", [&]() -> Array { return constant(a.shape(), dtype.value_or(a.dtype()), 0, a.device(), !dtype && a.weak_type()); });
}
Array ones_like(const Array& a, std::optional<DType> dtype) {
  return with_name("ones_like", [&]() -> Array { return constant(a.shape(), dtype.value_or(a.dtype()), 1, a.device(), !dtype && a.weak_type()); });
}
Array full_like(const Array& a, const Array& fill_value, std::optional<DType> dtype) {
  return with_name("full_like", [&]() -> Array { return broadcast_to(cast(fill_value, dtype.value_or(a.dtype()), false), a.shape()); });
}

Array arange_impl(double start, double stop, double step, bool integral, std::optional<DType> dtype) {
  return with_name("arange", [&]() -> Array {
    if (step == 0 || !std::isfinite(step)) fail_as(ErrorKind::Range, "arange", "got step ", step, ", expected a finite non-zero step");
    if (!std::isfinite(start) || !std::isfinite(stop))
      fail("arange", "got start ", start, " and stop ", stop, ", expected finite bounds");
    DType dt = dtype.value_or(integral ? DType::Int32 : DType::Float32);
    const double count = std::max(0.0, std::ceil((stop - start) / step));
    if (count > double(max_array_bytes())) fail("arange", "got ", count, " elements, expected at most ", max_array_bytes());
    const int64_t n = int64_t(count);
    check_array_size("arange", {n}, dt);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) v[size_t(i)] = start + double(i) * step;
    return upload({n}, dt, v);
  });
}

Array linspace(double start, double stop, int64_t num, bool endpoint, DType dtype) {
  return with_name("linspace", [&]() -> Array {
    if (num < 0) fail_as(ErrorKind::Range, "linspace", "got num ", num, ", expected num >= 0");
    check_array_size("linspace", {num}, dtype);
    std::vector<double> v(static_cast<size_t>(num));
    int64_t div = endpoint ? num - 1 : num;
    double step = div > 0 ? (stop - start) / double(div) : 0;
    for (int64_t i = 0; i < num; i++) v[size_t(i)] = start + double(i) * step;
    if (endpoint && num > 1) v.back() = stop;
    return upload({num}, dtype, v);
  });
}

Array eye(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  return with_name("eye", [&]() -> Array {
    int64_t cols = m.value_or(n);
    if (n < 0 || cols < 0) fail("eye", "got shape (", n, ", ", cols, "), expected non-negative sizes");
    Shape s{n, cols};
    check_array_size("eye", s, dtype);
    const std::string& dev = default_device();
    Array on = equal(add(iota(s, 0, dev), Array(int(k))), iota(s, 1, dev));
    return cast(on, dtype, false);
  });
}

}  // namespace kiln::numpy
