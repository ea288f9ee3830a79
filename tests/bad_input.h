// The bad-input tables (issue 17, item 4): one row per bad call of a public function, split
// by family over bad_input_*_test.cpp. Each row is either an error row (the call must throw a
// kiln::Error whose message contains every expected part, the function's name first) or a
// valid row (NaN/Inf, empty arrays: the call must succeed and `check` its IEEE result).
// After every row, arrays made before it still read back their values and the memory
// counters are back where they were (bad_input_coverage_test.cpp runs the tables and checks
// that every free function the public headers declare has a row).
#pragma once
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace bad_input {

struct Row {
  std::string fn;  // qualified as the headers declare it, e.g. "numpy::add"
  std::function<void()> call;
  std::vector<std::string> expect;  // message parts; empty: a valid call (no error)
};

// An error row: `call` must throw a kiln::Error naming `parts` (default: the last component
// of `fn`, the function's own name).
inline Row err(std::string fn, std::function<void()> call, std::vector<std::string> parts = {}) {
  if (parts.empty()) parts.push_back(fn.substr(fn.rfind(':') == std::string::npos ? 0 : fn.rfind(':') + 1));
  return Row{std::move(fn), std::move(call), std::move(parts)};
}
// A valid row: `call` must not throw (it checks its own result with ok() below).
inline Row ok_row(std::string fn, std::function<void()> call) { return Row{std::move(fn), std::move(call), {}}; }

// Throws (so that the row fails) when a valid call computed the wrong value.
void expect_true(bool cond, const std::string& what);
// Elementwise equality where NaN equals NaN (IEEE results of NaN/Inf inputs).
bool same_values(const std::vector<double>& got, const std::vector<double>& want);
std::vector<double> values(const kiln::Array& a);
// arange(6) as a 2x3 array: what most rows pass where a valid array is needed.
inline kiln::Array f23() { return kiln::numpy::arange(6.0).reshape({2, 3}); }

// The tables, one per family.
std::vector<Row> numpy_rows();
std::vector<Row> numpy_more_rows();
std::vector<Row> library_rows();  // lax, linalg, fft, nn, random
std::vector<Row> api_rows();      // optax, transforms, jit, pytree, io, debug, memory, Array
std::vector<Row> all_rows();

// Runs every row of `rows` against sentinel arrays; returns the failures (empty when all hold).
std::vector<std::string> run_rows(const std::vector<Row>& rows);

}  // namespace bad_input
