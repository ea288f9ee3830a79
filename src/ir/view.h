// View and ShapeTracker: how a logical n-d index maps to an element of a flat buffer.
// Movement ops (reshape, permute, expand, pad, shrink, flip, stride) edit views, not data.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/alu_exp.h"

namespace kiln {

using Dims = std::vector<int64_t>;
using Ranges = std::vector<std::pair<int64_t, int64_t>>;  // [begin, end) per axis

// One strided view: element (i0, i1, ...) is at offset + sum(ik * strides[k]) when every
// ik lies in mask[k]; elements outside the mask read as zero (padding).
struct View {
  Dims shape;
  Dims strides;
  int64_t offset = 0;
  std::optional<Ranges> mask;

  static View contiguous(const Dims& shape);
  // Whether `strides` are contiguous(shape)'s, checked without building that view (a jit call
  // asks this of every argument).
  static bool has_contiguous_strides(const Dims& shape, const Dims& strides);
  int64_t size() const;
  // Row-major with offset 0 and no mask: flat index == buffer index.
  bool is_contiguous() const;
  bool operator==(const View&) const = default;

  // Each returns the new view; reshape returns nullopt when no single view can express it.
  std::optional<View> reshape(const Dims& new_shape) const;
  View permute(const std::vector<int>& perm) const;
  View expand(const Dims& new_shape) const;  // size-1 axes broadcast to any size
  View pad(const Ranges& widths) const;      // (before, after) per axis, zero-filled
  View shrink(const Ranges& ranges) const;   // [begin, end) per axis
  View flip(const std::vector<bool>& axes) const;
  View stride(const Dims& steps) const;  // keeps every steps[k]-th element, steps >= 1

  // The buffer index and validity of the element at the given per-axis indices.
  std::pair<AluExp, AluExp> to_index(const std::vector<AluExp>& idxs) const;
  std::string to_string() const;
};

// A stack of views: views.back() gives the logical shape; each view indexes the flat
// row-major space of the view below it, and views.front() indexes the buffer.
class ShapeTracker {
 public:
  ShapeTracker() = default;
  explicit ShapeTracker(View v) : views_{std::move(v)} {}
  static ShapeTracker contiguous(const Dims& shape) { return ShapeTracker(View::contiguous(shape)); }

  const Dims& shape() const { return views_.back().shape; }
  int64_t size() const { return views_.back().size(); }
  const std::vector<View>& views() const { return views_; }
  bool is_contiguous() const { return views_.size() == 1 && views_[0].is_contiguous(); }

  ShapeTracker reshape(const Dims& new_shape) const;
  ShapeTracker permute(const std::vector<int>& perm) const;
  ShapeTracker expand(const Dims& new_shape) const;
  ShapeTracker pad(const Ranges& widths) const;
  ShapeTracker shrink(const Ranges& ranges) const;
  ShapeTracker flip(const std::vector<bool>& axes) const;
  ShapeTracker stride(const Dims& steps) const;
  // Applies `outer` (whose bottom view indexes this tracker's logical row-major space)
  // on top of this one.
  ShapeTracker compose(const ShapeTracker& outer) const;

  // Buffer index and validity for a per-axis logical index.
  std::pair<AluExp, AluExp> to_index(const std::vector<AluExp>& idxs) const;
  // The same for a flat row-major logical index.
  std::pair<AluExp, AluExp> to_index_flat(const AluExp& flat) const;
  std::string to_string() const;

 private:
  ShapeTracker with_last(View v) const;
  std::vector<View> views_;
};

// Per-axis indices of a flat row-major index into `shape`.
std::vector<AluExp> unravel(const AluExp& flat, const Dims& shape);
int64_t prod(const Dims& d);

}  // namespace kiln
