// pick_rows (pick_rows.h): an integer-factor repeat as a view, any other pick as a gather.
#include "models/pick_rows.h"

#include "library/numpy.h"

namespace kiln::models {

namespace np = kiln::numpy;

Array pick_rows(const Array& x, const std::vector<int32_t>& rows, int axis) {
  const int64_t in = x.shape(axis), out = int64_t(rows.size());
  if (in > 0 && out % in == 0) {
    const int64_t f = out / in;
    bool repeats = true;
    for (int64_t i = 0; i < out && repeats; ++i) repeats = rows[size_t(i)] == i / f;
    if (repeats) return f == 1 ? x : np::repeat(x, f, axis);
  }
  return np::take(x, np::array(rows, {out}), axis);
}

}  // namespace kiln::models
