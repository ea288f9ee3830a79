// View edits for each movement op, the single-view reshape (NumPy's no-copy reshape,
// extended to masks), and lowering of views to index expressions.
#include "ir/view.h"

#include <sstream>

namespace kiln {

int64_t prod(const Dims& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

View View::contiguous(const Dims& shape) {
  View v;
  v.shape = shape;
  v.strides.assign(shape.size(), 0);
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    v.strides[i] = shape[i] == 1 ? 0 : s;
    s *= shape[i];
  }
  return v;
}

bool View::has_contiguous_strides(const Dims& shape, const Dims& strides) {
  if (strides.size() != shape.size()) return false;
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (strides[i] != (shape[i] == 1 ? 0 : s)) return false;
    s *= shape[i];
  }
  return true;
}

int64_t View::size() const { return prod(shape); }

bool View::is_contiguous() const {
  if (offset != 0 || mask) return false;
  View c = contiguous(shape);
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] != 1 && strides[i] != c.strides[i]) return false;
  return true;
}

namespace {
bool mask_empty(const std::optional<Ranges>& m) {
  if (!m) return false;
  for (auto& [a, b] : *m)
    if (a >= b) return true;
  return false;
}
// Drops a mask that covers the whole shape.
std::optional<Ranges> normalize_mask(const Dims& shape, Ranges m) {
  for (size_t i = 0; i < shape.size(); i++) {
    m[i].first = std::clamp<int64_t>(m[i].first, 0, shape[i]);
    m[i].second = std::clamp<int64_t>(m[i].second, 0, shape[i]);
    if (m[i].first >= m[i].second) m[i] = {0, 0};
  }
  for (size_t i = 0; i < shape.size(); i++)
    if (m[i].first != 0 || m[i].second != shape[i]) return m;
  return std::nullopt;
}
}  // namespace

std::optional<View> View::reshape(const Dims& new_shape) const {
  if (new_shape == shape) return *this;
  if (size() == 0 || prod(new_shape) == 0) return contiguous(new_shape);
  if (is_contiguous()) return contiguous(new_shape);
  if (mask_empty(mask)) return std::nullopt;
  // Group old and new axes into runs of equal product (skipping size-1 old axes); a run
  // of old axes merges only if it is itself contiguous, and a masked axis may only be
  // carried one-to-one.
  std::vector<int> old_axes;
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] != 1) old_axes.push_back(int(i));
  View out;
  out.shape = new_shape;
  out.strides.assign(new_shape.size(), 0);
  out.offset = offset;
  Ranges new_mask(new_shape.size());
  for (size_t i = 0; i < new_shape.size(); i++) new_mask[i] = {0, new_shape[i]};
  // Masks on size-1 axes are (0,1) after normalization, so they drop out with the axis.
  size_t oi = 0, ni = 0;
  while (ni < new_shape.size() && new_shape[ni] == 1) ni++;
  while (oi < old_axes.size() && ni < new_shape.size()) {
    size_t oj = oi + 1, nj = ni + 1;
    int64_t po = shape[size_t(old_axes[oi])], pn = new_shape[ni];
    while (po != pn) {
      if (pn < po) {
        if (nj >= new_shape.size()) return std::nullopt;
        pn *= new_shape[nj++];
      } else {
        if (oj >= old_axes.size()) return std::nullopt;
        po *= shape[size_t(old_axes[oj++])];
      }
    }
    // Absorb trailing size-1 new axes into this run.
    while (nj < new_shape.size() && new_shape[nj] == 1) nj++;
    for (size_t k = oi; k + 1 < oj; k++) {
      size_t a = size_t(old_axes[k]), b = size_t(old_axes[k + 1]);
      if (strides[a] != strides[b] * shape[b]) return std::nullopt;
    }
    bool masked = false;
    for (size_t k = oi; k < oj; k++) {
      auto r = mask ? (*mask)[size_t(old_axes[k])] : std::pair<int64_t, int64_t>{0, shape[size_t(old_axes[k])]};
      if (r.first != 0 || r.second != shape[size_t(old_axes[k])]) masked = true;
    }
    size_t real_new = 0, new_axis = ni;
    for (size_t k = ni; k < nj; k++)
      if (new_shape[k] != 1) real_new++, new_axis = k;
    if (masked) {
      if (oj - oi != 1 || real_new != 1) return std::nullopt;
      new_mask[new_axis] = (*mask)[size_t(old_axes[oi])];
    }
    int64_t st = strides[size_t(old_axes[oj - 1])];
    for (size_t k = nj; k-- > ni;) {
      if (new_shape[k] == 1) continue;
      out.strides[k] = st;
      st *= new_shape[k];
    }
    oi = oj;
    ni = nj;
  }
  if (oi != old_axes.size()) return std::nullopt;
  for (; ni < new_shape.size(); ni++)
    if (new_shape[ni] != 1) return std::nullopt;
  if (mask) out.mask = normalize_mask(new_shape, new_mask);
  return out;
}

View View::permute(const std::vector<int>& perm) const {
  View v;
  v.offset = offset;
  for (int p : perm) {
    v.shape.push_back(shape[size_t(p)]);
    v.strides.push_back(strides[size_t(p)]);
  }
  if (mask) {
    Ranges m;
    for (int p : perm) m.push_back((*mask)[size_t(p)]);
    v.mask = m;
  }
  return v;
}

View View::expand(const Dims& new_shape) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] == new_shape[i]) continue;
    v.shape[i] = new_shape[i];
    v.strides[i] = 0;
    if (v.mask) {
      auto& r = (*v.mask)[i];
      r = r.first < r.second ? std::pair<int64_t, int64_t>{0, new_shape[i]} : std::pair<int64_t, int64_t>{0, 0};
    }
  }
  if (v.mask) v.mask = normalize_mask(v.shape, *v.mask);
  return v;
}

View View::pad(const Ranges& widths) const {
  View v = *this;
  Ranges m(shape.size());
  for (size_t i = 0; i < shape.size(); i++) {
    auto [lo, hi] = widths[i];
    auto r = mask ? (*mask)[i] : std::pair<int64_t, int64_t>{0, shape[i]};
    m[i] = {r.first + lo, r.second + lo};
    v.shape[i] = shape[i] + lo + hi;
    v.offset -= lo * strides[i];
  }
  v.mask = normalize_mask(v.shape, m);
  return v;
}

View View::shrink(const Ranges& ranges) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); i++) {
    auto [b, e] = ranges[i];
    v.shape[i] = e - b;
    v.offset += b * strides[i];
    if (mask) (*v.mask)[i] = {(*mask)[i].first - b, (*mask)[i].second - b};
  }
  if (v.mask) v.mask = normalize_mask(v.shape, *v.mask);
  return v;
}

View View::flip(const std::vector<bool>& axes) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); i++) {
    if (!axes[i] || shape[i] == 0) continue;
    v.offset += (shape[i] - 1) * strides[i];
    v.strides[i] = -strides[i];
    if (mask) (*v.mask)[i] = {shape[i] - (*mask)[i].second, shape[i] - (*mask)[i].first};
  }
  return v;
}

View View::stride(const Dims& steps) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); i++) {
    int64_t s = steps[i];
    v.shape[i] = (shape[i] + s - 1) / s;
    v.strides[i] = strides[i] * s;
    if (mask) (*v.mask)[i] = {((*mask)[i].first + s - 1) / s, ((*mask)[i].second + s - 1) / s};
  }
  if (v.mask) v.mask = normalize_mask(v.shape, *v.mask);
  return v;
}

std::pair<AluExp, AluExp> View::to_index(const std::vector<AluExp>& idxs) const {
  AluExp flat = AluExp::idx(offset);
  AluExp valid = AluExp::constant(DType::Bool, 1);
  for (size_t i = 0; i < shape.size(); i++) {
    if (strides[i] != 0) flat = flat + idxs[i] * strides[i];
    if (mask) {
      auto [a, b] = (*mask)[i];
      valid = valid && (idxs[i] >= AluExp::idx(a)) && (idxs[i] < AluExp::idx(b));
    }
  }
  return {flat, valid};
}

std::string View::to_string() const {
  std::ostringstream os;
  auto list = [&](const Dims& d) {
    os << "(";
    for (size_t i = 0; i < d.size(); i++) os << (i ? ", " : "") << d[i];
    os << (d.size() == 1 ? ",)" : ")");
  };
  os << "View(shape=";
  list(shape);
  os << ", strides=";
  list(strides);
  os << ", offset=" << offset;
  if (mask) {
    os << ", mask=(";
    for (size_t i = 0; i < mask->size(); i++)
      os << (i ? ", " : "") << "(" << (*mask)[i].first << ", " << (*mask)[i].second << ")";
    os << ")";
  }
  os << ")";
  return os.str();
}

std::vector<AluExp> unravel(const AluExp& flat, const Dims& shape) {
  std::vector<AluExp> idxs(shape.size());
  int64_t inner = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    idxs[i] = shape[i] == 1 ? AluExp::idx(0) : (flat / inner) % shape[i];
    inner *= shape[i];
  }
  return idxs;
}

ShapeTracker ShapeTracker::with_last(View v) const {
  ShapeTracker t = *this;
  t.views_.back() = std::move(v);
  return t;
}

ShapeTracker ShapeTracker::reshape(const Dims& new_shape) const {
  if (auto v = views_.back().reshape(new_shape)) return with_last(*v);
  ShapeTracker t = *this;
  t.views_.push_back(View::contiguous(new_shape));
  return t;
}

ShapeTracker ShapeTracker::permute(const std::vector<int>& perm) const {
  return with_last(views_.back().permute(perm));
}
ShapeTracker ShapeTracker::expand(const Dims& s) const { return with_last(views_.back().expand(s)); }
ShapeTracker ShapeTracker::pad(const Ranges& w) const { return with_last(views_.back().pad(w)); }
ShapeTracker ShapeTracker::shrink(const Ranges& r) const { return with_last(views_.back().shrink(r)); }
ShapeTracker ShapeTracker::flip(const std::vector<bool>& a) const {
  return with_last(views_.back().flip(a));
}
ShapeTracker ShapeTracker::stride(const Dims& s) const { return with_last(views_.back().stride(s)); }

ShapeTracker ShapeTracker::compose(const ShapeTracker& outer) const {
  ShapeTracker t = *this;
  for (size_t i = 0; i < outer.views_.size(); i++) {
    const View& v = outer.views_[i];
    // The view below is a plain row-major array: the new view can index the buffer
    // directly, so it replaces it.
    if (i == 0 && t.views_.back().is_contiguous()) {
      t.views_.back() = v;
    } else if (i == 0 && v.is_contiguous()) {
      // A contiguous outer view over the same shape adds nothing beyond a reshape.
      t = t.reshape(v.shape);
    } else {
      t.views_.push_back(v);
    }
  }
  return t;
}

std::pair<AluExp, AluExp> ShapeTracker::to_index(const std::vector<AluExp>& idxs) const {
  auto [flat, valid] = views_.back().to_index(idxs);
  for (size_t i = views_.size() - 1; i-- > 0;) {
    auto [f, v] = views_[i].to_index(unravel(flat, views_[i].shape));
    flat = f;
    valid = valid && v;
  }
  return {flat, valid};
}

std::pair<AluExp, AluExp> ShapeTracker::to_index_flat(const AluExp& flat) const {
  return to_index(unravel(flat, shape()));
}

std::string ShapeTracker::to_string() const {
  std::string s = "ShapeTracker(";
  for (size_t i = 0; i < views_.size(); i++) s += (i ? ", " : "") + views_[i].to_string();
  return s + ")";
}

}  // namespace kiln
