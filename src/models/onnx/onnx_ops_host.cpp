// ONNX operators whose output shape depends on input values (NonZero, Unique,
// NonMaxSuppression): computed on the host from static inputs, results uploaded as arrays.
#include <algorithm>
#include <map>
#include <numeric>

#include "library/numpy.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;

Array int_matrix(const std::vector<int32_t>& v, int64_t rows, int64_t cols) { return np::array(v, {rows, cols}); }

std::vector<Array> non_zero(const NodeContext& c) {
  const Array& x = c.input(0);
  const std::vector<double> v = c.host_doubles(0);
  const int r = std::max(x.ndim(), 1);
  std::vector<std::vector<int32_t>> coords(static_cast<size_t>(r));
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0) continue;
    int64_t rest = int64_t(i);
    for (int a = r - 1; a >= 0; --a) {
      const int64_t d = x.ndim() ? x.shape(a) : 1;
      coords[size_t(a)].push_back(int32_t(rest % d));
      rest /= d;
    }
  }
  std::vector<int32_t> flat;
  for (const auto& row : coords) flat.insert(flat.end(), row.begin(), row.end());
  return {int_matrix(flat, r, int64_t(coords[0].size()))};
}

// Unique: distinct elements (or slices along `axis`), sorted or in order of first occurrence,
// with first indices, the inverse map and the counts.
std::vector<Array> unique(const NodeContext& c) {
  const Array& x = c.input(0);
  const std::vector<double> v = c.host_doubles(0);
  const bool has_axis = c.has_attr("axis");
  const int axis = has_axis ? normalize_axis(c, c.attr_int("axis", 0), x.ndim()) : 0;
  const Array src = has_axis ? np::moveaxis(x, axis, 0) : np::ravel(x);
  const int64_t n = src.ndim() ? src.shape(0) : 1, width = n ? int64_t(v.size()) / n : 0;
  const std::vector<double> sv = src.to_vector<double>();
  std::vector<std::vector<double>> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[size_t(i)].assign(sv.begin() + i * width, sv.begin() + (i + 1) * width);
  std::map<std::vector<double>, int32_t> first;  // key -> first index
  std::vector<int32_t> order;                     // first indices in order of appearance
  for (int64_t i = 0; i < n; ++i)
    if (first.emplace(keys[size_t(i)], int32_t(i)).second) order.push_back(int32_t(i));
  if (c.attr_int("sorted", 1)) {
    order.clear();
    for (const auto& [key, i] : first) order.push_back(i);
  }
  std::map<std::vector<double>, int32_t> slot;
  std::vector<int32_t> counts(order.size(), 0), inverse;
  for (size_t k = 0; k < order.size(); ++k) slot[keys[size_t(order[k])]] = int32_t(k);
  for (const auto& key : keys) inverse.push_back(slot[key]), ++counts[size_t(slot[key])];
  const int64_t u = int64_t(order.size());
  const Array idx = np::array(order, {u});
  Array y = has_axis ? np::moveaxis(np::take(src, idx, 0), 0, axis) : np::take(src, idx, 0);
  return {y, idx, np::array(inverse, {n}), np::array(counts, {u})};
}

struct Box {
  double y1, x1, y2, x2;
};

Box box_at(const std::vector<double>& b, size_t i, bool center) {
  const double* p = &b[4 * i];
  if (center) return {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

double iou(const Box& a, const Box& b) {
  const double area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return 0;
  const double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  return h * w / (area_a + area_b - h * w);
}

// NonMaxSuppression: per batch and class, boxes by descending score (ties: lower index),
// each kept unless it overlaps a kept one by more than iou_threshold.
std::vector<Array> non_max_suppression(const NodeContext& c) {
  const Array &boxes = c.input(0), &scores = c.input(1);
  if (boxes.ndim() != 3 || scores.ndim() != 3 || boxes.shape(2) != 4) c.fail("boxes [B, N, 4] and scores [B, C, N] expected");
  const int64_t B = boxes.shape(0), N = boxes.shape(1), C = scores.shape(1);
  const std::vector<double> bv = c.host_doubles(0), sv = c.host_doubles(1);
  const int64_t max_out = c.has_input(2) && c.input(2).size() ? c.host_ints(2).at(0) : 0;
  const double iou_th = c.has_input(3) && c.input(3).size() ? c.host_doubles(3).at(0) : 0;
  const bool has_score_th = c.has_input(4) && c.input(4).size();
  const double score_th = has_score_th ? c.host_doubles(4).at(0) : 0;
  const bool center = c.attr_int("center_point_box", 0) != 0;
  std::vector<int32_t> out;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < C; ++k) {
      const double* s = &sv[size_t((b * C + k) * N)];
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < N; ++i)
        if (!has_score_th || s[i] > score_th) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (int64_t(kept.size()) >= max_out) break;
        const Box bi = box_at(bv, size_t(b * N + i), center);
        auto overlaps = [&](int64_t j) { return iou(bi, box_at(bv, size_t(b * N + j), center)) > iou_th; };
        if (std::none_of(kept.begin(), kept.end(), overlaps)) {
          kept.push_back(i);
          out.insert(out.end(), {int32_t(b), int32_t(k), int32_t(i)});
        }
      }
    }
  return {int_matrix(out, int64_t(out.size() / 3), 3)};
}

}  // namespace

std::vector<OpRule> host_rules() {
  return {
      {"NonZero", 9, kMax, {}, non_zero, {0}},
      {"Unique", 11, kMax, {"axis", "sorted"}, unique, {0}},
      {"NonMaxSuppression", 10, kMax, {"center_point_box"}, non_max_suppression, {0, 1, 2, 3, 4}},
  };
}

}  // namespace kiln::onnx
