// Reader of the JAX fixture files written by tools/gen_jax_fixtures.py and its siblings
// (transforms_jax.txt, control_flow_jax.txt, remat_jax.txt), and the comparison their tests
// share. Line format:
//   case <id> <function> <dtype>
//   input|expect <name> <dtype> <dims...> : <values...>
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.h"

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace kiln_test {

struct FixtureValues {
  kiln::Shape shape;
  std::string dtype;
  std::vector<double> values;
};

struct JaxFixtureCase {
  std::string id, function;
  kiln::DType dtype = kiln::float32;
  std::map<std::string, FixtureValues> inputs, expects;
};

inline std::vector<JaxFixtureCase> read_jax_fixture(const std::string& file) {
  std::ifstream in(std::string(KILN_FIXTURE_DIR) + "/" + file);
  std::vector<JaxFixtureCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kind, tok;
    ls >> kind;
    if (kind == "case") {
      JaxFixtureCase c;
      std::string dt;
      ls >> c.id >> c.function >> dt;
      c.dtype = dt == "float64" ? kiln::float64 : kiln::float32;
      cases.push_back(c);
    } else if ((kind == "input" || kind == "expect") && !cases.empty()) {
      std::string name;
      FixtureValues v;
      ls >> name >> v.dtype;
      while (ls >> tok && tok != ":") v.shape.push_back(std::stoll(tok));
      while (ls >> tok) v.values.push_back(std::strtod(tok.c_str(), nullptr));
      (kind == "input" ? cases.back().inputs : cases.back().expects)[name] = v;
    }
  }
  return cases;
}

// Made on the default device at call time (tests read the cases while they are registered,
// before a test environment may change that device).
inline kiln::Array fixture_array(const FixtureValues& v) {
  namespace np = kiln::numpy;
  if (v.dtype == "int32") return np::array(std::vector<int32_t>(v.values.begin(), v.values.end()), v.shape);
  return np::array(v.values, v.shape).astype(v.dtype == "float64" ? kiln::float64 : kiln::float32);
}

inline std::map<std::string, kiln::Array> fixture_inputs(const JaxFixtureCase& c) {
  std::map<std::string, kiln::Array> inputs;
  for (auto& [k, v] : c.inputs) inputs[k] = fixture_array(v);
  return inputs;
}

// Every expected output present, with its shape and dtype, and each value within rtol of
// JAX's relative to itself plus the output's largest magnitude (1e-10 in float64, 1e-5 in
// float32; int32 exact).
inline void expect_matches_jax(const JaxFixtureCase& c, const std::map<std::string, kiln::Array>& out) {
  for (auto& [name, ex] : c.expects) {
    ASSERT_TRUE(out.count(name)) << c.id << ": missing output " << name;
    const kiln::Array& got = out.at(name);
    EXPECT_EQ(got.shape(), ex.shape) << c.id << " " << name;
    EXPECT_EQ(kiln::dtype_name(got.dtype()), ex.dtype) << c.id << " " << name;
    const double rtol = ex.dtype == "int32" ? 0 : ex.dtype == "float64" ? 1e-10 : 1e-5;
    std::vector<double> g = got.to_vector<double>();
    ASSERT_EQ(g.size(), ex.values.size()) << c.id << " " << name;
    double scale = 0;
    for (double w : ex.values) scale = std::max(scale, std::abs(w));
    for (size_t i = 0; i < g.size(); i++)
      EXPECT_NEAR(g[i], ex.values[i], rtol * (std::abs(ex.values[i]) + scale)) << c.id << " " << name << "[" << i << "]";
  }
}

}  // namespace kiln_test
