// Bad-input rows for kiln::numpy's movement, sorting and linear-algebra functions.
#include <cmath>
#include <limits>

#include "bad_input.h"

namespace bad_input {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::Shape;

namespace {

void movement(std::vector<Row>& r) {
  r.push_back(err("numpy::reshape", [] { np::reshape(f23(), {4}); }, {"reshape", "(2, 3)", "(4,)"}));
  r.push_back(err("numpy::reshape", [] { np::reshape(f23(), {-1, -1}); }, {"reshape", "-1"}));
  r.push_back(err("numpy::reshape", [] { np::reshape(np::zeros({0}), {-1, 0}); }, {"reshape"}));
  r.push_back(ok_row("numpy::ravel", [] { expect_true(np::ravel(np::zeros({0, 3})).shape() == Shape{0}, "ravel of empty"); }));
  r.push_back(err("numpy::ravel", [] { np::ravel(Array()); }, {"ravel"}));
  r.push_back(err("numpy::transpose", [] { np::transpose(f23(), std::vector<int>{0, 0}); }, {"transpose"}));
  r.push_back(err("numpy::swapaxes", [] { np::swapaxes(f23(), 0, 2); }, {"swapaxes", "axis 2"}));
  r.push_back(err("numpy::moveaxis", [] { np::moveaxis(f23(), 0, 5); }, {"moveaxis", "axis 5"}));
  r.push_back(err("numpy::moveaxis", [] { np::moveaxis(f23(), std::vector<int>{0}, std::vector<int>{0, 1}); }, {"moveaxis"}));
  r.push_back(err("numpy::broadcast_to", [] { np::broadcast_to(f23(), {3, 3}); }, {"broadcast_to", "(2, 3)", "(3, 3)"}));
  r.push_back(err("numpy::broadcast_to", [] { np::broadcast_to(f23(), {3}); }, {"broadcast_to"}));
  r.push_back(err("numpy::broadcast_arrays", [] { np::broadcast_arrays({f23(), np::ones({2})}); }, {"broadcast_arrays"}));
  r.push_back(err("numpy::broadcast_shapes", [] { np::broadcast_shapes({2, 3}, {4}); }, {"broadcast_shapes"}));
  r.push_back(err("numpy::expand_dims", [] { np::expand_dims(f23(), 3); }, {"expand_dims", "axis 3"}));
  r.push_back(err("numpy::squeeze", [] { np::squeeze(f23(), 0); }, {"squeeze", "axis 0"}));
  r.push_back(err("numpy::index", [] { np::index(f23(), {int64_t(2)}); }, {"index", "index 2"}));
  r.push_back(err("numpy::index", [] { np::index(f23(), {kiln::Slice{0, 2, 0}}); }, {"index", "step"}));
  r.push_back(err("numpy::pad", [] { np::pad(f23(), {{1, 1}}, "wrap"); }, {"pad", "wrap"}));
  r.push_back(err("numpy::pad", [] { np::pad(f23(), {{0, 0}, {1, 1}}, "reflect", 0); np::pad(np::zeros({0}), {{1, 1}}, "edge"); }, {"pad"}));
  r.push_back(err("numpy::pad", [] { np::pad(f23(), {{int64_t(1) << 40, 0}}).eval(); }, {"pad"}));
  r.push_back(err("numpy::concatenate", [] { np::concatenate({f23(), np::ones({3, 2})}, 0); }, {"concatenate", "(3, 2)"}));
  r.push_back(err("numpy::concatenate", [] { np::concatenate({}, 0); }, {"concatenate"}));
  r.push_back(err("numpy::concatenate", [] { np::concatenate({f23(), f23()}, 2); }, {"concatenate", "axis 2"}));
  r.push_back(err("numpy::stack", [] { np::stack({f23(), np::ones({3})}); }, {"stack"}));
  r.push_back(err("numpy::stack", [] { np::stack({}); }, {"stack"}));
  r.push_back(err("numpy::split", [] { np::split(f23(), int64_t(4), 1); }, {"split", "4"}));
  r.push_back(err("numpy::split", [] { np::split(f23(), int64_t(0), 1); }, {"split"}));
  r.push_back(err("numpy::split", [] { np::split(f23(), std::vector<int64_t>{1}, 2); }, {"split", "axis 2"}));
  r.push_back(err("numpy::flip", [] { np::flip(f23(), 2); }, {"flip", "axis 2"}));
  r.push_back(err("numpy::repeat", [] { np::repeat(f23(), int64_t(-1)); }, {"repeat", "-1"}));
  r.push_back(err("numpy::repeat", [] { np::repeat(f23(), std::vector<int64_t>{1, 2}, 1); }, {"repeat"}));
  r.push_back(err("numpy::tile", [] { np::tile(f23(), {-1}); }, {"tile", "-1"}));
  r.push_back(err("numpy::take", [] { np::take(f23(), np::zeros({2}, kiln::int32), 2); }, {"take", "axis 2"}));
  r.push_back(err("numpy::take", [] { np::take(f23(), np::zeros({2}), 0); }, {"take", "float32"}));
  r.push_back(err("numpy::take_along_axis", [] { np::take_along_axis(f23(), np::zeros({4, 4}, kiln::int32), 1); }, {"take_along_axis"}));
  r.push_back(err("numpy::take_along_axis", [] { np::take_along_axis(f23(), np::zeros({2, 1}, kiln::int32), 3); }, {"take_along_axis", "axis 3"}));
}

void sorting(std::vector<Row>& r) {
  r.push_back(err("numpy::sort", [] { np::sort(f23(), 2); }, {"sort", "axis 2"}));
  r.push_back(err("numpy::argsort", [] { np::argsort(f23(), -3); }, {"argsort", "axis -3"}));
  r.push_back(ok_row("numpy::sort", [] {
    auto v = np::sort(np::array(std::vector<float>{NAN, 1, -INFINITY, INFINITY}, {4})).to_vector<float>();
    expect_true(v[0] == -INFINITY && v[1] == 1 && v[2] == INFINITY && std::isnan(v[3]), "NaN sorts last");
  }));
  r.push_back(ok_row("numpy::argsort", [] { expect_true(np::argsort(np::zeros({0})).size() == 0, "argsort of empty"); }));
}

void linear_algebra(std::vector<Row>& r) {
  r.push_back(err("numpy::matmul", [] { np::matmul(f23(), f23()); }, {"matmul", "(2, 3)"}));
  r.push_back(err("numpy::matmul", [] { np::matmul(Array(1.0), f23()); }, {"matmul", "()", "rank >= 1"}));
  r.push_back(err("numpy::dot", [] { np::dot(f23(), np::ones({2})); }, {"dot"}));
  r.push_back(err("numpy::vdot", [] { np::vdot(f23(), np::ones({5})); }, {"vdot"}));
  r.push_back(err("numpy::inner", [] { np::inner(f23(), np::ones({2})); }, {"inner"}));
  r.push_back(ok_row("numpy::outer", [] { expect_true(np::outer(np::zeros({0}), f23()).shape() == Shape{0, 6}, "outer of empty"); }));
  r.push_back(err("numpy::outer", [] { np::outer(Array(), f23()); }, {"outer"}));
  r.push_back(err("numpy::tensordot", [] { np::tensordot(f23(), f23(), 3); }, {"tensordot"}));
  r.push_back(err("numpy::tensordot", [] { np::tensordot(f23(), f23(), {{0}, {1}}); }, {"tensordot"}));
  r.push_back(err("numpy::einsum", [] { np::einsum("ij,jk->ik", {f23(), f23()}); }, {"einsum"}));
  r.push_back(err("numpy::einsum", [] { np::einsum("ij->", {f23(), f23()}); }, {"einsum"}));
  r.push_back(err("numpy::einsum", [] { np::einsum("i$->i", {f23()}); }, {"einsum"}));
}

}  // namespace

std::vector<Row> numpy_more_rows() {
  std::vector<Row> r;
  movement(r);
  sorting(r);
  linear_algebra(r);
  return r;
}

}  // namespace bad_input
