// ExecuTorch operator rules for views and copies (permute, view, squeeze, expand, slice,
// select), joins and splits, dtype copies, creation (arange, full) and run-time sizes.
#include <algorithm>

#include "library/lax.h"
#include "library/numpy.h"
#include "models/executorch/operator_rules.h"

namespace kiln::executorch::rules {

namespace np = kiln::numpy;

namespace {

// A dim of an array of rank `rank`, negative counting from the end (ATen's wrap_dim).
int wrap_dim(const OpCall& c, int64_t dim, int rank) {
  const int64_t wrapped = dim < 0 ? dim + rank : dim;
  if (wrapped < 0 || wrapped >= std::max(rank, 1))
    c.fail("dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank));
  return int(wrapped);
}

std::optional<DType> result_dtype_of(const OpCall& c) { return c.result_dtype(0); }

}  // namespace

void permute(OpCall& c) {  // (self, dims)
  const Array x = c.tensor(0);
  std::vector<int> axes;
  for (int64_t d : c.ints(1)) axes.push_back(wrap_dim(c, d, x.ndim()));
  c.result(np::transpose(x, axes));
}

void view(OpCall& c) { c.result(np::reshape(c.tensor(0), c.ints(1))); }  // (self, size)

void unsqueeze(OpCall& c) {  // (self, dim): dim in [-rank - 1, rank]
  const Array x = c.tensor(0);
  c.result(np::expand_dims(x, wrap_dim(c, c.integer(1), x.ndim() + 1)));
}

void squeeze_dims(OpCall& c) {  // (self, dims): only the listed dims of size 1 go
  const Array x = c.tensor(0);
  std::vector<int> axes;
  for (int64_t d : c.ints(1)) {
    const int axis = wrap_dim(c, d, x.ndim());
    if (x.ndim() > 0 && x.shape(axis) == 1) axes.push_back(axis);
  }
  c.result(axes.empty() ? x : np::squeeze(x, axes));
}

void expand(OpCall& c) {  // (self, size, implicit): -1 keeps the input's size
  const Array x = c.tensor(0);
  std::vector<int64_t> size = c.ints(1);
  if (size.size() < size_t(x.ndim()))
    c.fail("size has " + std::to_string(size.size()) + " dims for an input of rank " +
           std::to_string(x.ndim()));
  const size_t lead = size.size() - size_t(x.ndim());
  for (size_t i = lead; i < size.size(); ++i)
    if (size[i] == -1) size[i] = x.shape(int(i - lead));
  c.result(np::broadcast_to(x, size));
}

void slice(OpCall& c) {  // (self, dim, start?, end?, step)
  const Array x = c.tensor(0);
  const int dim = wrap_dim(c, c.integer(1), x.ndim());
  const int64_t n = x.shape(dim), step = c.integer(4);
  if (step <= 0) c.fail("step " + std::to_string(step) + ", expected > 0");
  auto clamp = [&](size_t i, int64_t fallback) {
    int64_t v = c.is_none(i) ? fallback : c.integer(i);
    if (v < 0) v += n;
    return std::clamp<int64_t>(v, 0, n);
  };
  const int64_t start = clamp(2, 0), end = std::max(start, clamp(3, n));
  std::vector<Index> index(size_t(dim), Slice{});
  index.push_back(Slice{start, end, step});
  c.result(np::index(x, index));
}

void select(OpCall& c) {  // (self, dim, index)
  const Array x = c.tensor(0);
  const int dim = wrap_dim(c, c.integer(1), x.ndim());
  int64_t i = c.integer(2);
  if (i < -x.shape(dim) || i >= x.shape(dim))
    c.fail("index " + std::to_string(i) + " is out of range for size " +
           std::to_string(x.shape(dim)));
  if (i < 0) i += x.shape(dim);
  std::vector<Index> index(size_t(dim), Slice{});
  index.push_back(i);
  c.result(np::index(x, index));
}

void cat(OpCall& c) {  // (tensors, dim)
  const std::vector<Array> parts = c.tensors(0);
  if (parts.empty()) c.fail("no tensors to concatenate");
  c.result(np::concatenate(parts, wrap_dim(c, c.integer(1), parts[0].ndim())));
}

void split_with_sizes(OpCall& c) {  // (self, split_sizes, dim) -> TensorList
  const Array x = c.tensor(0);
  const int dim = wrap_dim(c, c.integer(2), x.ndim());
  std::vector<int64_t> cuts;
  int64_t at = 0;
  const std::vector<int64_t> sizes = c.ints(1);
  for (size_t i = 0; i + 1 < sizes.size(); ++i) cuts.push_back(at += sizes[i]);
  if (at + (sizes.empty() ? 0 : sizes.back()) != x.shape(dim))
    c.fail("split sizes do not add up to dim " + std::to_string(dim) + "'s size " +
           std::to_string(x.shape(dim)));
  c.results(np::split(x, cuts, dim));
}

// (self, non_blocking, dim_order?): a copy in the planned dtype; only contiguous orders.
void to_dim_order_copy(OpCall& c) {
  const Array x = c.tensor(0);
  if (!c.is_none(2)) {
    const std::vector<int64_t> order = c.ints(2);
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i] != int64_t(i)) c.fail("non-contiguous dim_order is not supported");
  }
  c.result(lax::convert_element_type(x, c.result_dtype(0)));
}

void arange_start(OpCall& c) {  // (start, end, step)
  c.result(np::arange_impl(c.real(0), c.real(1), c.real(2), false, result_dtype_of(c)));
}

void arange(OpCall& c) {  // (end)
  c.result(np::arange_impl(0, c.real(0), 1, false, result_dtype_of(c)));
}

void full(OpCall& c) {  // (size, fill_value)
  c.result(np::full(c.ints(0), c.scalar(1), result_dtype_of(c)));
}

void full_like(OpCall& c) {  // (self, fill_value, memory_format?)
  c.result(np::full(c.tensor(0).shape(), c.scalar(1), result_dtype_of(c)));
}

void scalar_tensor(OpCall& c) { c.result(np::full(Shape{}, c.scalar(0), result_dtype_of(c))); }

void index_select(OpCall& c) {  // (self, dim, index)
  const Array x = c.tensor(0);
  c.result(np::take(x, c.tensor(2), wrap_dim(c, c.integer(1), x.ndim())));
}

// (self, dim, index, sparse_grad): index may be smaller than self in the other dims, which
// take_along_axis does not allow, so self is cut to index's extent there first.
void gather(OpCall& c) {
  Array x = c.tensor(0);
  const Array index = c.tensor(2);
  const int dim = wrap_dim(c, c.integer(1), x.ndim());
  if (index.ndim() != x.ndim())
    c.fail("index of rank " + std::to_string(index.ndim()) + " for an input of rank " +
           std::to_string(x.ndim()));
  std::vector<Index> cut;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d != dim && index.shape(d) > x.shape(d))
      c.fail("index is larger than the input in dim " + std::to_string(d));
    cut.push_back(d == dim ? Slice{} : Slice{0, index.shape(d), 1});
  }
  c.result(np::take_along_axis(np::index(x, cut), index, dim));
}

// (self, pad, value): pad lists (before, after) pairs from the last dim backwards.
void constant_pad(OpCall& c) {
  const Array x = c.tensor(0);
  const std::vector<int64_t> pad = c.ints(1);
  if (pad.size() % 2 || pad.size() / 2 > size_t(x.ndim()))
    c.fail(std::to_string(pad.size()) + " pad entries for rank " + std::to_string(x.ndim()));
  std::vector<std::pair<int64_t, int64_t>> widths(size_t(x.ndim()), {0, 0});
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    if (pad[2 * k] < 0 || pad[2 * k + 1] < 0) c.fail("negative padding is not supported yet");
    widths[widths.size() - 1 - k] = {pad[2 * k], pad[2 * k + 1]};
  }
  c.result(np::pad(x, widths, "constant", c.scalar(2)));
}

void sym_size(OpCall& c) {  // (self, dim) -> Int
  const Array x = c.tensor(0);
  c.result_int(x.shape(wrap_dim(c, c.integer(1), x.ndim())));
}

}  // namespace kiln::executorch::rules
