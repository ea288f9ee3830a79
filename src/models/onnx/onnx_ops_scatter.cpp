// ONNX ScatterElements, Scatter and ScatterND without a scatter routine: updates placed by
// one-hot comparisons of the indices with an iota, combined with the data by `where`.
#include <cmath>

#include "library/numpy.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;

std::string reduction_of(const NodeContext& c) {
  const std::string r = c.attr_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    c.fail("reduction '", r, "', expected none, add, mul, max or min");
  return r;
}

// Combines `data` with the values placed at `hit` positions under reduction `r`.
Array combine(const std::string& r, const Array& data, const Array& hit, const Array& placed) {
  if (r == "add") return np::where(hit, data + placed, data);
  if (r == "mul") return np::where(hit, data * placed, data);
  if (r == "max") return np::where(hit, np::maximum(data, placed), data);
  if (r == "min") return np::where(hit, np::minimum(data, placed), data);
  return np::where(hit, placed, data);
}

// ScatterElements: along `axis`, data[.., indices[p], ..] (op)= updates[p]. The indices'
// axis moves last and meets an iota of the data's axis: hot[..., j, k] = (idx[..., j] == k).
std::vector<Array> scatter_elements(const NodeContext& c) {
  const Array &data = c.input(0), &idx = c.input(1), &upd = c.input(2);
  const int axis = normalize_axis(c, c.attr_int("axis", 0), data.ndim());
  if (idx.ndim() != data.ndim() || upd.shape() != idx.shape()) c.fail("indices and updates must match and have data's rank");
  const std::string r = reduction_of(c);
  const int64_t dim = data.shape(axis);
  Array i = np::moveaxis(idx, axis, -1), u = np::moveaxis(cast_to(upd, data.dtype()), axis, -1);
  i = np::where(i < 0, i + double(dim), i);
  Array hot = np::expand_dims(i, -1) == np::arange(dim, int32);  // [..., J, dim]
  Array uu = np::expand_dims(u, -1);
  Array hit = np::any(hot, -2);
  Array placed;
  if (r == "mul") placed = np::prod(np::where(hot, uu, np::ones_like(uu)), -2);
  else if (r == "max") placed = np::max(np::where(hot, uu, np::full_like(uu, -INFINITY)), -2);
  else if (r == "min") placed = np::min(np::where(hot, uu, np::full_like(uu, INFINITY)), -2);
  else placed = np::sum(np::where(hot, uu, np::zeros_like(uu)), -2);
  // Back to data's layout, padded where indices cover less than data along other axes.
  hit = np::moveaxis(hit, -1, axis), placed = np::moveaxis(placed, -1, axis);
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (int a = 0; a < data.ndim(); ++a) pads.push_back({0, data.shape(a) - hit.shape(a)});
  hit = np::pad(hit, pads, "constant", Array(false));
  placed = np::pad(placed, pads);
  return {combine(r, data, hit, cast_to(placed, data.dtype()))};
}

// ScatterND: each index row addresses a cell of data's first k axes; rows apply in order.
std::vector<Array> scatter_nd(const NodeContext& c) {
  const Array &data = c.input(0), &idx = c.input(1), &upd = c.input(2);
  const std::string r = reduction_of(c);
  const int64_t k = idx.shape(-1);
  if (k > data.ndim()) c.fail("index depth ", k, " exceeds data's rank ", data.ndim());
  int64_t cells = 1, rows = 1;
  for (int a = 0; a < k; ++a) cells *= data.shape(a);
  for (int a = 0; a + 1 < idx.ndim(); ++a) rows *= idx.shape(a);
  Shape rest(data.shape().begin() + k, data.shape().end()), flat{cells}, upd_shape{rows};
  flat.insert(flat.end(), rest.begin(), rest.end());
  upd_shape.insert(upd_shape.end(), rest.begin(), rest.end());
  Array lin = np::zeros({rows}, int32);
  Array ix = np::reshape(cast_to(idx, int32), {rows, k});
  for (int64_t j = 0, stride = cells; j < k; ++j) {
    stride /= data.shape(int(j));
    Array col = np::take(ix, Array(int(j)), 1);
    lin = lin + np::where(col < 0, col + double(data.shape(int(j))), col) * double(stride);
  }
  Shape hot_shape(flat.size(), 1);
  hot_shape[0] = cells;
  const Array cell_ids = np::reshape(np::arange(cells, int32), hot_shape);
  Array out = np::reshape(data, flat), u = np::reshape(cast_to(upd, data.dtype()), upd_shape);
  for (int64_t n = 0; n < rows; ++n) out = combine(r, out, cell_ids == lin[n], u[n]);
  return {np::reshape(out, data.shape())};
}

}  // namespace

std::vector<OpRule> scatter_rules() {
  return {
      {"ScatterElements", 11, kMax, {"axis", "reduction"}, scatter_elements},
      {"Scatter", 9, 10, {"axis"}, scatter_elements},
      {"ScatterND", 11, kMax, {"reduction"}, scatter_nd},
  };
}

}  // namespace kiln::onnx
