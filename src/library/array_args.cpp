// Axis normalization, broadcasting and promotion for the numpy layer.
#include "library/array_args.h"

#include <algorithm>

namespace kiln::numpy::detail {

int normalize_axis(const char* op, int axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    fail(op, "axis ", axis, " is out of bounds for an array of rank ", ndim);
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int> normalize_axes(const char* op, const Axes& axes, int ndim) {
  std::vector<int> out;
  if (axes.all()) {
    for (int i = 0; i < ndim; i++) out.push_back(i);
    return out;
  }
  for (int ax : axes.list()) out.push_back(normalize_axis(op, ax, ndim));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) fail(op, "repeated axis in the axes given");
  return out;
}

Shape broadcast_shape(const char* op, const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (auto& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (auto& s : shapes) {
    for (size_t i = 0; i < s.size(); i++) {
      int64_t& o = out[nd - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string got;
      for (auto& t : shapes) got += (got.empty() ? "" : " ") + shape_str(t);
      fail_as(ErrorKind::Type, op, "shapes ", got, " cannot be broadcast together");
    }
  }
  return out;
}

TypeInfo result_type(const std::vector<Array>& args) {
  TypeInfo t{args[0].dtype(), args[0].weak_type()};
  for (size_t i = 1; i < args.size(); i++) t = promote(t, {args[i].dtype(), args[i].weak_type()});
  return t;
}

Array cast(const Array& a, DType dtype, bool weak) {
  if (a.dtype() == dtype && a.weak_type() == weak) return a;
  Params p;
  p.dtype = dtype;
  p.weak = weak;
  return bind1(Prim::Cast, a, p);
}

Array reshape_to(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  Params p;
  p.shape = shape;
  return bind1(Prim::Reshape, a, p);
}

Array permute(const Array& a, const std::vector<int>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); i++) identity = identity && perm[i] == int(i);
  if (identity) return a;
  Params p;
  p.axes = perm;
  return bind1(Prim::Transpose, a, p);
}

Array expand_to(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  Params p;
  p.shape = shape;
  return bind1(Prim::Expand, a, p);
}

Array broadcast(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  Shape padded(shape.size() - a.shape().size(), 1);
  padded.insert(padded.end(), a.shape().begin(), a.shape().end());
  return expand_to(reshape_to(a, padded), shape);
}

std::vector<Array> promote_broadcast(const char* op, const std::vector<Array>& args) {
  std::vector<Shape> shapes;
  for (auto& a : args) shapes.push_back(a.shape());
  Shape s = broadcast_shape(op, shapes);
  TypeInfo t = result_type(args);
  std::vector<Array> out;
  for (auto& a : args) out.push_back(broadcast(cast(a, t.dtype, t.weak), s));
  return out;
}

Array iota(const Shape& shape, int axis, const std::string& device) {
  int64_t n = shape[size_t(axis)];
  frontend::Aval av{{n}, DType::Int32, false};
  Array line(frontend::make_from_exp(av, device, frontend::gidx_var(n), {}));
  Shape s1(shape.size(), 1);
  s1[size_t(axis)] = n;
  Params p;
  p.shape = s1;
  return broadcast(bind1(Prim::Reshape, line, p), shape);
}

Array constant(const Shape& shape, DType dtype, double value, const std::string& device, bool weak) {
  return Array(frontend::make_constant({shape, dtype, weak}, device, value));
}

Array host_array(const std::vector<double>& values, const Shape& shape, DType dtype,
                 const std::string& device) {
  if (int64_t(values.size()) != kiln::prod(shape))
    fail("host_array", "got ", values.size(), " values for shape ", shape_str(shape));
  int64_t bytes = int64_t(values.size()) * itemsize(dtype);
  std::vector<uint8_t> data(size_t(std::max<int64_t>(bytes, 1)));
  for (size_t i = 0; i < values.size(); i++) write_element(data.data(), dtype, int64_t(i), values[i]);
  BufferRef buf = get_backend(device).allocate(std::max<int64_t>(bytes, 1));
  if (bytes) buf->backend().write(buf->handle(), 0, data.data(), bytes);
  return Array(frontend::make_from_buffer({shape, dtype, false}, device, buf));
}

Array with_weak(const Array& a, bool weak) {
  if (a.weak_type() == weak) return a;
  auto impl = std::make_shared<frontend::ArrayImpl>(*a.impl());
  impl->aval.weak = weak;
  return Array(impl);
}

}  // namespace kiln::numpy::detail
