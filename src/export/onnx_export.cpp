// export_onnx: a traced jaxpr written as an ONNX graph (default domain, opset 18), one
// rule per primitive in the table of onnx_rules(); the bytes come from formats' writer.
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstring>
#include <limits>
#include <numbers>
#include <optional>

#include "export/export_jaxpr.h"
#include "formats/onnx.h"
#include "frontend/control.h"

namespace kiln {

using formats::OnnxAttribute;
using formats::OnnxAttributeType;
using formats::OnnxDataType;
using formats::OnnxTensor;
using frontend::Atom;
using frontend::Eqn;
using frontend::Jaxpr;
using frontend::Prim;

namespace {

constexpr const char* kOp = "export_onnx";

OnnxDataType onnx_type(DType d) {
  switch (d) {
    case DType::Bool: return OnnxDataType::Bool;
    case DType::Int32: return OnnxDataType::Int32;
    case DType::Uint32: return OnnxDataType::Uint32;
    case DType::Float16: return OnnxDataType::Float16;
    case DType::Float32: return OnnxDataType::Float;
    case DType::Float64: return OnnxDataType::Double;
  }
  return OnnxDataType::Undefined;
}

// An Array's elements in the typed field onnx.proto keeps its type in.
OnnxTensor tensor_of(const Array& a, const std::string& name) {
  OnnxTensor t;
  t.name = name;
  t.dims.assign(a.shape().begin(), a.shape().end());
  t.data_type = int32_t(onnx_type(a.dtype()));
  switch (a.dtype()) {
    case DType::Bool:
    case DType::Int32: t.int32_data = a.to_vector<int32_t>(); break;
    case DType::Uint32:
      for (uint32_t v : a.to_vector<uint32_t>()) t.uint64_data.push_back(v);
      break;
    case DType::Float16: {
      const std::vector<uint8_t> b = a.bytes();  // half bits go in int32_data, one per value
      for (size_t i = 0; i + 1 < b.size(); i += 2) t.int32_data.push_back(int32_t(b[i] | (b[i + 1] << 8)));
      break;
    }
    case DType::Float32: t.float_data = a.to_vector<float>(); break;
    case DType::Float64: t.double_data = a.to_vector<double>(); break;
  }
  return t;
}

OnnxAttribute attr_int(const std::string& name, int64_t v) {
  OnnxAttribute a;
  a.name = name, a.type = OnnxAttributeType::Int, a.i = v;
  return a;
}
OnnxAttribute attr_ints(const std::string& name, std::vector<int64_t> v) {
  OnnxAttribute a;
  a.name = name, a.type = OnnxAttributeType::Ints, a.ints = std::move(v);
  return a;
}
OnnxAttribute attr_string(const std::string& name, const std::string& v) {
  OnnxAttribute a;
  a.name = name, a.type = OnnxAttributeType::String, a.s = v;
  return a;
}

// The graph being written: names of the jaxpr's values, fresh names for intermediate
// results of multi-node rules, and constants as initializers. A control-flow body is
// written by a child emitter into its own graph (a Loop's or If's subgraph): names stay
// unique across the model (ONNX forbids a subgraph to shadow an outer name), initializers
// all go to the main graph, which every subgraph may read.
struct OnnxEmitter {
  const Jaxpr& j;
  formats::OnnxGraph g;
  std::vector<std::string> var_names;
  OnnxEmitter* root = this;
  std::string prefix;  // of this jaxpr's variable and constant names
  int fresh_id = 0, scopes = 0, nodes = 0;  // the root's counters
  // With a symbolic batch: how sizes depend on it, the equation being written, the input
  // whose axis 0 is the batch, and the [1] int64 tensor of its size once computed.
  const exporter::BatchDependence* batch = nullptr;
  size_t eqn = 0;
  std::string batch_input, batch_size;

  explicit OnnxEmitter(const Jaxpr& jaxpr) : j(jaxpr), var_names(jaxpr.vars.size()) { name_vars(); }
  OnnxEmitter(const Jaxpr& jaxpr, OnnxEmitter& parent)
      : j(jaxpr), var_names(jaxpr.vars.size()), root(parent.root), prefix("s" + std::to_string(++parent.root->scopes) + "_") {
    name_vars();
    g.name = "body_" + prefix.substr(0, prefix.size() - 1);  // a subgraph needs a name
  }
  void name_vars() {
    for (size_t v = 0; v < var_names.size(); v++) var_names[v] = prefix + "v" + std::to_string(v);
  }
  std::string fresh() { return "t" + std::to_string(root->fresh_id++); }
  std::string name(const Atom& a) const { return a.is_var() ? var_names[size_t(a.var)] : prefix + "const" + std::to_string(a.cst); }
  std::string in(const Eqn& e, size_t i) const { return name(e.in[i]); }
  DType dtype(const Eqn& e, size_t i = 0) const { return j.aval(e.in[i]).dtype; }
  const Shape& shape(const Eqn& e, size_t i = 0) const { return j.aval(e.in[i]).shape; }

  // Adds a node; its one output is `out`, or a fresh name when empty. Returns the output.
  std::string node(const std::string& op_type, std::vector<std::string> inputs, std::vector<OnnxAttribute> attrs = {},
                   std::string out = "") {
    if (out.empty()) out = fresh();
    formats::OnnxNode n;
    n.op_type = op_type;
    n.name = op_type + "_" + std::to_string(root->nodes++);  // unique in the model, subgraphs included
    n.inputs = std::move(inputs);
    n.outputs = {out};
    n.attributes = std::move(attrs);
    g.nodes.push_back(std::move(n));
    return out;
  }
  std::string initializer(OnnxTensor t) {
    t.name = fresh();
    root->g.initializers.push_back(std::move(t));
    return root->g.initializers.back().name;
  }
  // A 1-D int64 initializer (shapes, axes, pads, indices).
  std::string ints(const std::vector<int64_t>& v, std::optional<std::vector<int64_t>> dims = std::nullopt) {
    OnnxTensor t;
    t.dims = dims ? *dims : std::vector<int64_t>{int64_t(v.size())};
    t.data_type = int32_t(OnnxDataType::Int64);
    t.int64_data = v;
    return initializer(std::move(t));
  }
  // A 1-D int64 tensor of sizes: constants, or with a symbolic batch, entries computed from
  // the batch input's axis 0 where `dep` says they depend on it.
  std::string sizes(const std::vector<int64_t>& v, const std::vector<exporter::Affine>& dep) {
    bool symbolic = false;
    for (const auto& d : dep) symbolic |= d.a != 0;
    if (!symbolic) return ints(v);
    if (batch_size.empty()) batch_size = node("Shape", {batch_input}, {attr_int("start", 0), attr_int("end", 1)});
    std::vector<std::string> parts;
    for (size_t i = 0; i < v.size(); i++)
      parts.push_back(dep[i].a == 0 ? ints({v[i]}) : node("Add", {node("Mul", {batch_size, ints({dep[i].a})}), ints({dep[i].c})}));
    return node("Concat", parts, {attr_int("axis", 0)});
  }
  // This equation's Params::shape / Params::ranges dependence (empty: static).
  std::vector<exporter::Affine> shape_dep() const { return batch ? batch->shapes[eqn] : std::vector<exporter::Affine>{}; }
  std::vector<exporter::Affine> range_dep(bool end) const {
    std::vector<exporter::Affine> r;
    if (batch)
      for (auto& [b, e] : batch->ranges[eqn]) r.push_back(end ? e : b);
    return r;
  }
  // Refuses an axis whose size depends on the batch where a rule needs it fixed.
  void require_static(const Eqn& e, size_t operand, size_t axis, const char* why) const {
    const Atom& a = e.in[operand];
    if (batch && a.is_var() && batch->var_dims[size_t(a.var)][axis].a != 0)
      fail("export_onnx", "batch_dim: ", why, " along an axis whose size depends on the batch");
  }

  // A scalar of `d` (0-d), broadcast by the ONNX binary ops it feeds.
  std::string scalar(DType d, double v) {
    OnnxTensor t;
    t.data_type = int32_t(onnx_type(d));
    switch (d) {
      case DType::Bool:
      case DType::Int32: t.int32_data = {int32_t(v)}; break;
      case DType::Uint32: t.uint64_data = {uint64_t(v)}; break;
      case DType::Float64: t.double_data = {v}; break;
      case DType::Float32: t.float_data = {float(v)}; break;
      case DType::Float16: fail(kOp, "float16 scalars are not supported");
    }
    return initializer(std::move(t));
  }
  // Writes the jaxpr's constants (a splat one as one value expanded to its shape, in the
  // graph, so a shape that depends on a symbolic batch is computed there too) and its
  // equations, the variables bound to inputs already named in var_names.
  void emit_consts(const std::vector<std::vector<exporter::Affine>>* const_dims);
  void emit_eqns();
  // Appends `a` to this (sub)graph's outputs under a fresh name (a subgraph's outputs
  // must be values it computes).
  std::string output(const Atom& a);
  // Declares a graph input of type `a` bound to `var` (a jaxpr variable, or -1).
  std::string input(const frontend::Aval& a, int var = -1);
};


using OnnxRule = std::function<void(OnnxEmitter&, const Eqn&, const std::string&)>;

// ---- rules -------------------------------------------------------------------------------

OnnxRule same(const char* op_type) {
  return [op_type](OnnxEmitter& m, const Eqn& e, const std::string& out) {
    std::vector<std::string> in;
    for (size_t i = 0; i < e.in.size(); i++) in.push_back(m.in(e, i));
    m.node(op_type, in, {}, out);
  };
}

// Float ops that are the identity on integers (floor, ceil, round, trunc).
OnnxRule float_only(OnnxRule r) {
  return [r](OnnxEmitter& m, const Eqn& e, const std::string& out) {
    if (!is_float(m.dtype(e))) return void(m.node("Identity", {m.in(e, 0)}, {}, out));
    r(m, e, out);
  };
}

// Bool operands take the logical op, integers the bitwise one.
OnnxRule logical_or_bitwise(const char* logical, const char* bitwise) {
  return [=](OnnxEmitter& m, const Eqn& e, const std::string& out) {
    same(m.dtype(e) == DType::Bool ? logical : bitwise)(m, e, out);
  };
}

void trunc_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const std::string x = m.in(e, 0);
  const std::string neg = m.node("Less", {x, m.scalar(m.dtype(e), 0)});
  m.node("Where", {neg, m.node("Ceil", {x}), m.node("Floor", {x})}, {}, out);
}

// a mod b with the sign of b (Python's %): C's fmod, then + b where the signs differ.
std::string floor_mod(OnnxEmitter& m, const Eqn& e, const std::string& r) {
  const DType d = m.dtype(e);
  const std::string zero = m.scalar(d, 0), b = m.in(e, 1);
  const std::string nonzero = m.node("Not", {m.node("Equal", {r, zero})});
  const std::string differ = m.node("Xor", {m.node("Less", {r, zero}), m.node("Less", {b, zero})});
  return m.node("Where", {m.node("And", {nonzero, differ}), m.node("Add", {r, b}), r});
}

void mod_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const std::string r = m.node("Mod", {m.in(e, 0), m.in(e, 1)}, {attr_int("fmod", 1)});
  m.node("Identity", {floor_mod(m, e, r)}, {}, out);
}

// Floor division: floor(a / b) for floats; for integers the truncated quotient, less one
// where the remainder is nonzero and its sign differs from b's.
void idiv_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const std::string a = m.in(e, 0), b = m.in(e, 1);
  if (is_float(m.dtype(e))) return void(m.node("Floor", {m.node("Div", {a, b})}, {}, out));
  const std::string q = m.node("Div", {a, b});
  if (m.dtype(e) == DType::Uint32) return void(m.node("Identity", {q}, {}, out));
  const std::string r = m.node("Sub", {a, m.node("Mul", {q, b})});
  const std::string zero = m.scalar(m.dtype(e), 0);
  const std::string nonzero = m.node("Not", {m.node("Equal", {r, zero})});
  const std::string differ = m.node("Xor", {m.node("Less", {r, zero}), m.node("Less", {b, zero})});
  m.node("Where", {m.node("And", {nonzero, differ}), m.node("Sub", {q, m.scalar(m.dtype(e), 1)}), q}, {}, out);
}

void recip_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  if (is_float(m.dtype(e))) return void(m.node("Reciprocal", {m.in(e, 0)}, {}, out));
  m.node("Div", {m.scalar(m.dtype(e), 1), m.in(e, 0)}, {}, out);
}

// Unary ops ONNX spells through others: exp2, expm1, log2, log1p.
OnnxRule via(std::function<std::string(OnnxEmitter&, const Eqn&, const std::string&)> f) {
  return [f](OnnxEmitter& m, const Eqn& e, const std::string& out) {
    m.node("Identity", {f(m, e, m.in(e, 0))}, {}, out);
  };
}

// atan2(y, x) from atan(y / x) by quadrant (ONNX has no Atan2).
void atan2_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const DType d = m.dtype(e);
  const std::string y = m.in(e, 0), x = m.in(e, 1), zero = m.scalar(d, 0);
  const std::string base = m.node("Atan", {m.node("Div", {y, x})});
  const std::string pi = m.scalar(d, std::numbers::pi), half = m.scalar(d, std::numbers::pi / 2);
  const std::string y_neg = m.node("Less", {y, zero});
  const std::string left = m.node("Where", {y_neg, m.node("Sub", {base, pi}), m.node("Add", {base, pi})});
  const std::string on_axis =
      m.node("Where", {m.node("Greater", {y, zero}), half,
                       m.node("Where", {y_neg, m.node("Neg", {half}), m.node("Mul", {y, zero})})});
  const std::string right_or_axis = m.node("Where", {m.node("Greater", {x, zero}), base, on_axis});
  m.node("Where", {m.node("Less", {x, zero}), left, right_or_axis}, {}, out);
}

// max(a, b) + log1p(exp(-|a - b|)), and a + b where a - b is NaN (equal infinities), as
// kiln's own lowering.
void logaddexp_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const DType d = m.dtype(e);
  const std::string a = m.in(e, 0), b = m.in(e, 1);
  const std::string diff = m.node("Sub", {a, b});
  const std::string tail = m.node("Log", {m.node("Add", {m.node("Exp", {m.node("Neg", {m.node("Abs", {diff})})}), m.scalar(d, 1)})});
  const std::string v = m.node("Add", {m.node("Max", {a, b}), tail});
  m.node("Where", {m.node("IsNaN", {diff}), m.node("Add", {a, b}), v}, {}, out);
}

void ne_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  m.node("Not", {m.node("Equal", {m.in(e, 0), m.in(e, 1)})}, {}, out);
}

// Shifts: ONNX's BitShift takes unsigned operands only, so int32 goes through uint32 (a
// left shift wraps alike); an arithmetic right shift is ~(~x >> s) where x < 0.
void shift_rule(OnnxEmitter& m, const Eqn& e, const std::string& out, bool left) {
  const DType d = m.dtype(e);
  const auto u32 = [&](const std::string& v) {
    return d == DType::Uint32 ? v : m.node("Cast", {v}, {attr_int("to", int64_t(OnnxDataType::Uint32))});
  };
  const auto back = [&](const std::string& v) {
    return d == DType::Uint32 ? v : m.node("Cast", {v}, {attr_int("to", int64_t(OnnxDataType::Int32))});
  };
  const std::string x = m.in(e, 0), s = u32(m.in(e, 1));
  const OnnxAttribute dir = attr_string("direction", left ? "LEFT" : "RIGHT");
  if (left || d == DType::Uint32) return void(m.node("Identity", {back(m.node("BitShift", {u32(x), s}, {dir}))}, {}, out));
  const std::string neg = m.node("Less", {x, m.scalar(d, 0)});
  const std::string pos = back(m.node("BitShift", {u32(x), s}, {dir}));
  const std::string negv = m.node("BitwiseNot", {back(m.node("BitShift", {u32(m.node("BitwiseNot", {x})), s}, {dir}))});
  m.node("Where", {neg, negv, pos}, {}, out);
}

void where_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  std::string c = m.in(e, 0);
  if (m.dtype(e) != DType::Bool) c = m.node("Cast", {c}, {attr_int("to", int64_t(OnnxDataType::Bool))});
  m.node("Where", {c, m.in(e, 1), m.in(e, 2)}, {}, out);
}

void cast_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  m.node("Cast", {m.in(e, 0)}, {attr_int("to", int64_t(onnx_type(e.params.dtype)))}, out);
}

std::vector<int64_t> axes_of(const Eqn& e) { return {e.params.axes.begin(), e.params.axes.end()}; }

OnnxRule reduce(const char* op_type) {
  return [op_type](OnnxEmitter& m, const Eqn& e, const std::string& out) {
    // Empty axes would reduce everything in ONNX (noop_with_empty_axes = 0): an identity here.
    if (e.params.axes.empty()) return void(m.node("Identity", {m.in(e, 0)}, {}, out));
    if (m.dtype(e) != DType::Bool) return void(m.node(op_type, {m.in(e, 0), m.ints(axes_of(e))}, {attr_int("keepdims", 0)}, out));
    // any/all (max/min of bools): onnxruntime reduces no bool tensors, so through int32.
    const std::string i = m.node("Cast", {m.in(e, 0)}, {attr_int("to", int64_t(OnnxDataType::Int32))});
    const std::string r = m.node(op_type, {i, m.ints(axes_of(e))}, {attr_int("keepdims", 0)});
    m.node("Cast", {r}, {attr_int("to", int64_t(OnnxDataType::Bool))}, out);
  };
}

void reshape_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const std::vector<int64_t> shape(e.params.shape.begin(), e.params.shape.end());
  std::vector<OnnxAttribute> attrs;  // a 0 in the shape means "copy the input's size" unless allowzero
  for (int64_t d : shape)
    if (d == 0) attrs = {attr_int("allowzero", 1)};
  m.node("Reshape", {m.in(e, 0), m.sizes(shape, m.shape_dep())}, attrs, out);
}

void transpose_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  m.node("Transpose", {m.in(e, 0)}, {attr_ints("perm", axes_of(e))}, out);
}

void expand_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  m.node("Expand", {m.in(e, 0), m.sizes({e.params.shape.begin(), e.params.shape.end()}, m.shape_dep())}, {}, out);
}

void pad_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  std::vector<int64_t> pads;
  for (auto& r : e.params.ranges) pads.push_back(r.first);
  for (auto& r : e.params.ranges) pads.push_back(r.second);
  std::vector<exporter::Affine> dep = m.range_dep(false), after = m.range_dep(true);
  dep.insert(dep.end(), after.begin(), after.end());
  m.node("Pad", {m.in(e, 0), m.sizes(pads, dep)}, {}, out);
}

std::vector<int64_t> iota(size_t n) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = int64_t(i);
  return v;
}

void shrink_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  std::vector<int64_t> starts, ends;
  for (auto& r : e.params.ranges) starts.push_back(r.first), ends.push_back(r.second);
  m.node("Slice", {m.in(e, 0), m.sizes(starts, m.range_dep(false)), m.sizes(ends, m.range_dep(true)), m.ints(iota(starts.size()))}, {}, out);
}

void flip_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const size_t n = e.params.axes.size();
  if (n == 0) return void(m.node("Identity", {m.in(e, 0)}, {}, out));
  const std::vector<int64_t> starts(n, -1), ends(n, std::numeric_limits<int64_t>::min()), steps(n, -1);
  m.node("Slice", {m.in(e, 0), m.ints(starts), m.ints(ends), m.ints(axes_of(e)), m.ints(steps)}, {}, out);
}

void stride_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const size_t n = e.params.strides.size();
  const std::vector<int64_t> starts(n, 0), ends(n, std::numeric_limits<int64_t>::max());
  m.node("Slice", {m.in(e, 0), m.ints(starts), m.ints(ends), m.ints(iota(n)), m.ints({e.params.strides.begin(), e.params.strides.end()})},
         {}, out);
}

// Window: gathers of constant indices, unit axes, one transpose (exporter::plan_window).
void window_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const exporter::WindowPlan plan = exporter::plan_window(m.shape(e), m.j.vars[size_t(e.out[0])].shape, e.params);
  std::string x = m.in(e, 0);
  for (size_t i = 0; i < e.params.window.size(); i++)
    if (e.params.window[i] != 1 || e.params.strides[i] != 1) m.require_static(e, 0, i, "a window");
  for (const exporter::WindowGather& g : plan.gathers)
    x = m.node("Gather", {x, m.ints(g.indices, std::vector<int64_t>{g.o, g.k})}, {attr_int("axis", int64_t(g.position))});
  if (!plan.unit_axes.empty()) x = m.node("Unsqueeze", {x, m.ints(plan.unit_axes)});
  m.node("Transpose", {x}, {attr_ints("perm", plan.perm)}, out);
}

// Gather: indices wrapped once if negative, then clamped into the axis (kiln's take),
// where ONNX would fail on an index out of range.
void gather_rule(OnnxEmitter& m, const Eqn& e, const std::string& out) {
  const int axis = e.params.axes[0];
  m.require_static(e, 0, size_t(axis), "take");
  const int64_t size = m.shape(e, 0)[size_t(axis)];
  std::string i = m.node("Cast", {m.in(e, 1)}, {attr_int("to", int64_t(OnnxDataType::Int64))});
  const auto scalar = [&](int64_t v) { return m.ints({v}, std::vector<int64_t>{}); };
  i = m.node("Where", {m.node("Less", {i, scalar(0)}), m.node("Add", {i, scalar(size)}), i});
  i = m.node("Clip", {i, scalar(0), scalar(std::max<int64_t>(size - 1, 0))});
  m.node("Gather", {m.in(e, 0), i}, {attr_int("axis", axis)}, out);
}

// A graph input/output's type; with a symbolic batch, dims equal to it are the dim_param,
// other dims that depend on it are left unknown.
formats::OnnxValueInfo value_info(const std::string& name, const frontend::Aval& a, const std::vector<exporter::Affine>& dep,
                                  const std::string& batch_dim) {
  formats::OnnxValueInfo v;
  v.name = name;
  v.type.kind = formats::OnnxType::Kind::Tensor;
  v.type.elem_type = int32_t(onnx_type(a.dtype));
  v.type.has_shape = true;
  for (size_t k = 0; k < a.shape.size(); k++) {
    const exporter::Affine d = k < dep.size() ? dep[k] : exporter::Affine{};
    if (d.a == 0) v.type.shape.push_back({true, a.shape[k], ""});
    else v.type.shape.push_back({false, 0, d == exporter::Affine{1, 0} ? batch_dim : ""});
  }
  return v;
}


// ---- control flow ------------------------------------------------------------------------

const exporter::ExportRules<OnnxRule>& onnx_rules();

void OnnxEmitter::emit_consts(const std::vector<std::vector<exporter::Affine>>* const_dims) {
  for (size_t c = 0; c < j.consts.size(); c++) {
    const Array& k = j.consts[c];
    const std::string cname = name(Atom::of_const(int(c)));
    if (!exporter::is_splat(k)) {
      root->g.initializers.push_back(tensor_of(k, cname));
      continue;
    }
    const std::string value = initializer(tensor_of(k.reshape({-1})[int64_t(0)], ""));
    node("Expand", {value, sizes({k.shape().begin(), k.shape().end()}, const_dims ? (*const_dims)[c] : std::vector<exporter::Affine>{})},
         {}, cname);
  }
}

void OnnxEmitter::emit_eqns() {
  const auto& rules = onnx_rules();
  for (const Eqn& e : j.eqns) {
    const OnnxRule& r = e.control ? rules.get(kOp, *e.control) : rules.get(kOp, e.prim);
    r(*this, e, var_names[size_t(e.out[0])]);
    eqn++;
  }
}

std::string OnnxEmitter::output(const Atom& a) {
  const std::string out = node("Identity", {name(a)});
  g.outputs.push_back(value_info(out, j.aval(a), {}, ""));
  return out;
}

std::string OnnxEmitter::input(const frontend::Aval& a, int var) {
  const std::string in = var >= 0 ? var_names[size_t(var)] : fresh();
  g.inputs.push_back(value_info(in, a, {}, ""));
  return in;
}

formats::OnnxValueInfo scalar_info(const std::string& name, OnnxDataType t) {
  formats::OnnxValueInfo v;
  v.name = name;
  v.type.kind = formats::OnnxType::Kind::Tensor;
  v.type.elem_type = int32_t(t);
  v.type.has_shape = true;
  return v;
}

OnnxAttribute attr_graph(const std::string& name, formats::OnnxGraph g) {
  OnnxAttribute a;
  a.name = name, a.type = OnnxAttributeType::Graph;
  a.graphs.push_back(std::move(g));
  return a;
}

// A Loop body's first two inputs (iteration number, condition); returns their names.
std::pair<std::string, std::string> loop_inputs(OnnxEmitter& b) {
  const std::string iter = b.fresh(), cond = b.fresh();
  b.g.inputs.push_back(scalar_info(iter, OnnxDataType::Int64));
  b.g.inputs.push_back(scalar_info(cond, OnnxDataType::Bool));
  return {iter, cond};
}

// Writes `body` into `host`'s own graph (no subgraph), its inputs bound to `ins`; returns
// the names of its outputs.
std::vector<std::string> inline_body(OnnxEmitter& host, const Jaxpr& body, const std::vector<std::string>& ins) {
  OnnxEmitter b(body, host);
  for (size_t i = 0; i < ins.size(); i++) b.var_names[size_t(body.invars[i])] = ins[i];
  b.emit_consts(nullptr);
  b.emit_eqns();
  for (auto& n : b.g.nodes) host.g.nodes.push_back(std::move(n));
  std::vector<std::string> outs;
  for (const Atom& a : body.outs) outs.push_back(b.name(a));
  return outs;
}

// scan -> Loop with the trip count `length` and no condition: the carry is loop-carried,
// consts and xs are read from the outer scope (x slice = Gather of xs at the iteration, or
// at length-1-iteration when reversed), y slices are the Loop's scan outputs, stacked in
// iteration order (so a reversed scan's ys are flipped after the Loop).
void scan_rule(OnnxEmitter& m, const Eqn& e, const std::string&) {
  const frontend::ControlOp& op = *e.control;
  const Jaxpr& body = *op.bodies[0]->jaxpr;
  const size_t nc = size_t(op.num_consts), nk = size_t(op.num_carry), nx = e.in.size() - nc - nk;
  OnnxEmitter b(body, m);
  const auto [iter, cond] = loop_inputs(b);
  for (size_t i = 0; i < nc; i++) b.var_names[size_t(body.invars[i])] = m.in(e, i);
  for (size_t i = nc; i < nc + nk; i++) b.input(body.vars[size_t(body.invars[i])], body.invars[i]);
  std::string at = iter;
  if (op.reverse) at = b.node("Sub", {m.ints({op.length - 1}, std::vector<int64_t>{}), iter});
  for (size_t i = nc + nk; i < nc + nk + nx; i++)
    b.node("Gather", {m.in(e, i), at}, {attr_int("axis", 0)}, b.var_names[size_t(body.invars[i])]);
  b.emit_consts(nullptr);
  b.emit_eqns();
  const std::string cond_out = b.node("Identity", {cond});
  b.g.outputs.push_back(scalar_info(cond_out, OnnxDataType::Bool));
  for (const Atom& a : body.outs) b.output(a);
  std::vector<std::string> ins = {m.ints({op.length}, std::vector<int64_t>{}), ""}, outs;
  for (size_t i = nc; i < nc + nk; i++) ins.push_back(m.in(e, i));
  for (size_t k = 0; k < e.out.size(); k++) outs.push_back(k >= nk && op.reverse ? m.fresh() : m.var_names[size_t(e.out[k])]);
  m.node("Loop", ins, {attr_graph("body", std::move(b.g))}, outs[0]);
  m.g.nodes.back().outputs = outs;
  if (!op.reverse) return;
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  for (size_t k = nk; k < e.out.size(); k++)
    m.node("Slice", {outs[k], m.ints({-1}), m.ints({lowest}), m.ints({0}), m.ints({-1})}, {}, m.var_names[size_t(e.out[k])]);
}

// while -> Loop with no trip count: the condition is computed once before the Loop (the
// cond body inlined) and again at the end of each iteration on the new carry.
void while_rule(OnnxEmitter& m, const Eqn& e, const std::string&) {
  const frontend::ControlOp& op = *e.control;
  const Jaxpr &cj = *op.bodies[0]->jaxpr, &bj = *op.bodies[1]->jaxpr;
  const size_t ncc = size_t(op.cond_consts), nc = size_t(op.num_consts), nk = size_t(op.num_carry);
  std::vector<std::string> cond_consts, body_consts, init;
  for (size_t i = 0; i < ncc; i++) cond_consts.push_back(m.in(e, i));
  for (size_t i = ncc; i < ncc + nc; i++) body_consts.push_back(m.in(e, i));
  for (size_t i = ncc + nc; i < e.in.size(); i++) init.push_back(m.in(e, i));
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::string first = inline_body(m, cj, with(cond_consts, init))[0];
  OnnxEmitter b(bj, m);
  loop_inputs(b);  // the iteration number and condition go unread: the cond body decides
  for (size_t i = 0; i < nc; i++) b.var_names[size_t(bj.invars[i])] = body_consts[i];
  for (size_t i = nc; i < nc + nk; i++) b.input(bj.vars[size_t(bj.invars[i])], bj.invars[i]);
  b.emit_consts(nullptr);
  b.emit_eqns();
  std::vector<std::string> next;
  for (const Atom& a : bj.outs) next.push_back(b.name(a));
  const std::string again = b.node("Identity", {inline_body(b, cj, with(cond_consts, next))[0]});
  b.g.outputs.push_back(scalar_info(again, OnnxDataType::Bool));
  for (const Atom& a : bj.outs) b.output(a);
  std::vector<std::string> outs;
  for (int o : e.out) outs.push_back(m.var_names[size_t(o)]);
  m.node("Loop", with({"", first}, init), {attr_graph("body", std::move(b.g))}, outs[0]);
  m.g.nodes.back().outputs = outs;
}

// cond/switch -> If on index <= k, then branch k, else (an If on index <= k+1 ...) down
// to the last branch: an index below 0 takes branch 0 and one past the end the last, the
// clamp of JAX's switch. Branches read the operands from the outer scope.
// `ins` are the equation's inputs (index, operands) as named in the graph that holds it.
formats::OnnxGraph branch_graph(OnnxEmitter& host, const Eqn& e, const std::vector<std::string>& ins, size_t k) {
  const Jaxpr& body = *e.control->bodies[k]->jaxpr;
  OnnxEmitter b(body, host);
  for (size_t i = 0; i < body.invars.size(); i++) b.var_names[size_t(body.invars[i])] = ins[i + 1];
  b.emit_consts(nullptr);
  b.emit_eqns();
  for (const Atom& a : body.outs) b.output(a);
  return std::move(b.g);
}

void emit_if(OnnxEmitter& host, const Eqn& e, const std::vector<std::string>& ins, size_t k, const std::vector<std::string>& outs) {
  const size_t n = e.control->bodies.size();
  const std::string pick = host.node("LessOrEqual", {ins[0], host.scalar(DType::Int32, double(k))});
  formats::OnnxGraph rest;
  if (k + 2 == n) {
    rest = branch_graph(host, e, ins, n - 1);
  } else {
    const Jaxpr& last = *e.control->bodies[n - 1]->jaxpr;
    OnnxEmitter r(last, host);
    std::vector<std::string> inner;
    for (const Atom& a : last.outs) {
      inner.push_back(r.fresh());
      r.g.outputs.push_back(value_info(inner.back(), last.aval(a), {}, ""));
    }
    emit_if(r, e, ins, k + 1, inner);
    rest = std::move(r.g);
  }
  host.node("If", {pick}, {attr_graph("then_branch", branch_graph(host, e, ins, k)), attr_graph("else_branch", std::move(rest))}, outs[0]);
  host.g.nodes.back().outputs = outs;
}

void cond_rule(OnnxEmitter& m, const Eqn& e, const std::string&) {
  std::vector<std::string> outs, ins;
  for (int o : e.out) outs.push_back(m.var_names[size_t(o)]);
  for (size_t i = 0; i < e.in.size(); i++) ins.push_back(m.in(e, i));
  if (e.control->bodies.size() > 1) return emit_if(m, e, ins, 0, outs);
  ins.erase(ins.begin());  // one branch: no choice to make
  const std::vector<std::string> got = inline_body(m, *e.control->bodies[0]->jaxpr, ins);
  for (size_t k = 0; k < outs.size(); k++) m.node("Identity", {got[k]}, {}, outs[k]);
}

const exporter::ExportRules<OnnxRule>& onnx_rules() {
  static const exporter::ExportRules<OnnxRule> table = [] {
    exporter::ExportRules<OnnxRule> t;
    for (auto [p, op] : std::initializer_list<std::pair<Prim, const char*>>{
             {Prim::Neg, "Neg"}, {Prim::Sqrt, "Sqrt"}, {Prim::Exp, "Exp"}, {Prim::Log, "Log"},
             {Prim::Sin, "Sin"}, {Prim::Cos, "Cos"}, {Prim::Tan, "Tan"}, {Prim::Asin, "Asin"},
             {Prim::Acos, "Acos"}, {Prim::Atan, "Atan"}, {Prim::Sinh, "Sinh"}, {Prim::Cosh, "Cosh"},
             {Prim::Tanh, "Tanh"}, {Prim::Asinh, "Asinh"}, {Prim::Acosh, "Acosh"}, {Prim::Atanh, "Atanh"},
             {Prim::Erf, "Erf"}, {Prim::IsNan, "IsNaN"}, {Prim::Add, "Add"}, {Prim::Sub, "Sub"},
             {Prim::Mul, "Mul"}, {Prim::Div, "Div"}, {Prim::Pow, "Pow"}, {Prim::Max, "Max"},
             {Prim::Min, "Min"}, {Prim::CmpLt, "Less"}, {Prim::CmpLe, "LessOrEqual"}, {Prim::CmpEq, "Equal"}})
      t.add(p, same(op));
    t.add(Prim::Floor, float_only(same("Floor")));
    t.add(Prim::Ceil, float_only(same("Ceil")));
    t.add(Prim::Round, float_only(same("Round")));  // half to even, as kiln
    t.add(Prim::Trunc, float_only(trunc_rule));
    t.add(Prim::Recip, recip_rule);
    t.add(Prim::Exp2, via([](OnnxEmitter& m, const Eqn& e, const std::string& x) { return m.node("Pow", {m.scalar(m.dtype(e), 2), x}); }));
    t.add(Prim::Expm1, via([](OnnxEmitter& m, const Eqn& e, const std::string& x) {
            return m.node("Sub", {m.node("Exp", {x}), m.scalar(m.dtype(e), 1)});
          }));
    t.add(Prim::Log2, via([](OnnxEmitter& m, const Eqn& e, const std::string& x) {
            return m.node("Div", {m.node("Log", {x}), m.scalar(m.dtype(e), std::numbers::ln2)});
          }));
    t.add(Prim::Log1p, via([](OnnxEmitter& m, const Eqn& e, const std::string& x) {
            return m.node("Log", {m.node("Add", {x, m.scalar(m.dtype(e), 1)})});
          }));
    t.add(Prim::Not, logical_or_bitwise("Not", "BitwiseNot"));
    t.add(Prim::And, logical_or_bitwise("And", "BitwiseAnd"));
    t.add(Prim::Or, logical_or_bitwise("Or", "BitwiseOr"));
    t.add(Prim::Xor, logical_or_bitwise("Xor", "BitwiseXor"));
    t.add(Prim::Idiv, idiv_rule);
    t.add(Prim::Mod, mod_rule);
    t.add(Prim::Atan2, atan2_rule);
    t.add(Prim::Logaddexp, logaddexp_rule);
    t.add(Prim::CmpNe, ne_rule);
    t.add(Prim::Shl, [](OnnxEmitter& m, const Eqn& e, const std::string& out) { shift_rule(m, e, out, true); });
    t.add(Prim::Shr, [](OnnxEmitter& m, const Eqn& e, const std::string& out) { shift_rule(m, e, out, false); });
    t.add(Prim::Where, where_rule);
    t.add(Prim::Cast, cast_rule);
    // Bitcast has no ONNX operator: its slot stays empty, so exporting it is an error.
    t.add(Prim::ReduceSum, reduce("ReduceSum"));
    t.add(Prim::ReduceProd, reduce("ReduceProd"));
    t.add(Prim::ReduceMax, reduce("ReduceMax"));
    t.add(Prim::ReduceMin, reduce("ReduceMin"));
    t.add(Prim::Reshape, reshape_rule);
    t.add(Prim::Transpose, transpose_rule);
    t.add(Prim::Expand, expand_rule);
    t.add(Prim::Pad, pad_rule);
    t.add(Prim::Shrink, shrink_rule);
    t.add(Prim::Flip, flip_rule);
    t.add(Prim::Stride, stride_rule);
    t.add(Prim::Window, window_rule);
    t.add(Prim::Gather, gather_rule);
    t.add(frontend::ControlKind::Scan, scan_rule);
    t.add(frontend::ControlKind::While, while_rule);
    t.add(frontend::ControlKind::Cond, cond_rule);
    return t;
  }();
  return table;
}

}  // namespace

std::vector<uint8_t> export_onnx_tensor(const Array& a, const std::string& name) {
  return formats::write_onnx_tensor(tensor_of(a, name));
}

std::vector<uint8_t> export_onnx(const Fn& f, const std::vector<Tree>& example_args, const ExportOptions& options) {
  if (options.opset < 18) fail(kOp, "got opset ", options.opset, ", expected 18 or later");
  const Jaxpr j = exporter::trace_for_export(kOp, f, example_args, options);
  OnnxEmitter m(j);
  m.g.name = options.name;
  exporter::BatchDependence batch;
  if (!options.batch_dim.empty()) {
    batch = exporter::batch_dependence(kOp, f, example_args, options, j);
    m.batch = &batch;
  }
  auto dims = [&](const Atom& a) { return m.batch && a.is_var() ? batch.var_dims[size_t(a.var)] : std::vector<exporter::Affine>{}; };
  for (size_t i = 0; i < j.invars.size(); i++) {
    const std::string name = "input_" + std::to_string(i);
    m.var_names[size_t(j.invars[i])] = name;
    m.g.inputs.push_back(value_info(name, j.vars[size_t(j.invars[i])], dims(Atom::of_var(j.invars[i])), options.batch_dim));
    const std::vector<exporter::Affine> d = dims(Atom::of_var(j.invars[i]));
    if (m.batch_input.empty() && !d.empty() && d[0] == exporter::Affine{1, 0}) m.batch_input = name;
  }
  // Outputs computed by an equation are named output_k where they are computed; an output
  // that is an input, a constant or a repeat goes through an Identity.
  std::vector<bool> produced(j.vars.size(), false), named(j.vars.size(), false);
  for (const Eqn& e : j.eqns)
    for (int o : e.out) produced[size_t(o)] = true;
  std::vector<std::pair<std::string, std::string>> identities;
  for (size_t k = 0; k < j.outs.size(); k++) {
    const Atom& a = j.outs[k];
    const std::string name = "output_" + std::to_string(k);
    if (a.is_var() && produced[size_t(a.var)] && !named[size_t(a.var)]) {
      m.var_names[size_t(a.var)] = name;
      named[size_t(a.var)] = true;
    } else {
      identities.push_back({"", name});
    }
    m.g.outputs.push_back(value_info(name, j.aval(a), dims(a), options.batch_dim));
  }
  m.emit_consts(m.batch ? &batch.const_dims : nullptr);
  m.emit_eqns();
  for (size_t k = 0, r = 0; k < j.outs.size(); k++) {
    const std::string name = "output_" + std::to_string(k);
    if (r < identities.size() && identities[r].second == name) {
      m.node("Identity", {m.name(j.outs[k])}, {}, name);
      r++;
    }
  }
  formats::OnnxModel model;
  model.ir_version = 8;
  model.opset_import = {{"", options.opset}};
  model.producer_name = "kiln";
  model.graph = std::move(m.g);
  return formats::write_onnx_model(model);
}

}  // namespace kiln
