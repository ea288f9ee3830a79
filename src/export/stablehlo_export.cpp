// export_stablehlo: a traced jaxpr written as a StableHLO MLIR module (generic op syntax,
// which every MLIR parser reads without the dialects' custom printers), one rule per
// primitive in the table of hlo_rules(). CHLO ops (asin, erf, ...) are used where StableHLO
// has none, as jax's own lowering does; XLA legalizes them when it compiles.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <sstream>

#include "export/export_jaxpr.h"
#include "frontend/control.h"

namespace kiln {

using frontend::Atom;
using frontend::Aval;
using frontend::Eqn;
using frontend::Jaxpr;
using frontend::Prim;

namespace {

constexpr const char* kOp = "export_stablehlo";

const char* elem_type(DType d) {
  switch (d) {
    case DType::Bool: return "i1";
    case DType::Int32: return "i32";
    case DType::Uint32: return "ui32";
    case DType::Float16: return "f16";
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
  }
  return "?";
}

std::string tensor_type(const Shape& s, DType d) {
  std::string t = "tensor<";
  for (int64_t n : s) t += std::to_string(n) + "x";
  return t + elem_type(d) + ">";
}

std::string i64_array(const std::vector<int64_t>& v) {
  std::string s = "array<i64";
  for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : ": ") + std::to_string(v[i]);
  return s + ">";
}

std::string i64_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Element bytes as MLIR's hex dense form (exact; one element's bytes is a splat).
std::string hex_dense(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789ABCDEF";
  std::string s = "dense<\"0x";
  for (uint8_t b : bytes) s += digits[b >> 4], s += digits[b & 15];
  return s + "\">";
}

std::vector<uint8_t> scalar_bytes(DType d, double v) {
  std::vector<uint8_t> b(itemsize(d));
  const auto put = [&](auto x) { std::memcpy(b.data(), &x, sizeof(x)); };
  switch (d) {
    case DType::Bool: b[0] = v != 0; break;
    case DType::Int32: put(int32_t(v)); break;
    case DType::Uint32: put(uint32_t(v)); break;
    case DType::Float32: put(float(v)); break;
    case DType::Float64: put(v); break;
    case DType::Float16: fail(kOp, "float16 constants are not supported");
  }
  return b;
}

// A value being written: its SSA name and type.
struct Value {
  std::string name;
  Shape shape;
  DType dtype;
  std::string type() const { return tensor_type(shape, dtype); }
};

// The module's text being written. A control-flow body is written by a child emitter
// into its own text (a region of stablehlo.while/case), sharing the root's counter so
// that no name in a region shadows one of an enclosing region (MLIR rejects that).
struct HloEmitter {
  const Jaxpr& j;
  std::ostringstream body;
  std::vector<Value> vars, consts;
  int fresh_id = 0;
  int* counter = &fresh_id;

  explicit HloEmitter(const Jaxpr& jaxpr) : j(jaxpr), vars(jaxpr.vars.size()) {}
  HloEmitter(const Jaxpr& jaxpr, HloEmitter& parent) : j(jaxpr), vars(jaxpr.vars.size()), counter(parent.counter) {}
  std::string fresh() { return "%t" + std::to_string((*counter)++); }
  // Writes the jaxpr with its inputs bound to `ins`: constants, then equations; returns
  // its outputs.
  std::vector<Value> emit(const std::vector<Value>& ins);
  // An op of several results (`%t:n = ...`, read as %t#k) with regions.
  std::vector<Value> op_n(const std::string& name, const std::vector<Value>& operands, std::vector<Value> results,
                          const std::string& props, const std::vector<std::string>& regions) {
    const std::string r = fresh();
    body << "    " << r << ":" << results.size() << " = \"" << name << "\"(";
    for (size_t i = 0; i < operands.size(); i++) body << (i ? ", " : "") << operands[i].name;
    body << ")";
    if (!props.empty()) body << " <{" << props << "}>";
    body << " (";
    for (size_t i = 0; i < regions.size(); i++) body << (i ? ", " : "") << regions[i];
    body << ") : (";
    for (size_t i = 0; i < operands.size(); i++) body << (i ? ", " : "") << operands[i].type();
    body << ") -> (";
    for (size_t i = 0; i < results.size(); i++) {
      results[i].name = r + "#" + std::to_string(i);
      body << (i ? ", " : "") << results[i].type();
    }
    body << ")\n";
    return results;
  }
  const Value& in(const Eqn& e, size_t i) const {
    const Atom& a = e.in[i];
    return a.is_var() ? vars[size_t(a.var)] : consts[size_t(a.cst)];
  }
  Value out_like(const Eqn& e, DType d) const { return {"", j.vars[size_t(e.out[0])].shape, d}; }

  // `"name"(operands) <{props}> (region) : (operand types) -> result type`.
  Value op(const std::string& name, const std::vector<Value>& operands, Value result, const std::string& props = "",
           const std::string& region = "") {
    result.name = fresh();
    body << "    " << result.name << " = \"" << name << "\"(";
    for (size_t i = 0; i < operands.size(); i++) body << (i ? ", " : "") << operands[i].name;
    body << ")";
    if (!props.empty()) body << " <{" << props << "}>";
    if (!region.empty()) body << " (" << region << ")";
    body << " : (";
    for (size_t i = 0; i < operands.size(); i++) body << (i ? ", " : "") << operands[i].type();
    body << ") -> " << result.type() << "\n";
    return result;
  }
  // Bool data is written as i8 and converted (x != 0): MLIR's hex form of i1 data has not
  // always been one byte per element.
  Value constant(const Shape& s, DType d, const std::vector<uint8_t>& bytes) {
    if (d != DType::Bool)
      return op("stablehlo.constant", {}, {"", s, d}, "value = " + hex_dense(bytes) + " : " + tensor_type(s, d));
    std::string i8 = tensor_type(s, DType::Bool);
    i8.replace(i8.size() - 3, 2, "i8");
    Value bytes_i8{fresh(), s, d};
    body << "    " << bytes_i8.name << " = \"stablehlo.constant\"() <{value = " << hex_dense(bytes) << " : " << i8
         << "}> : () -> " << i8 << "\n";
    Value result{fresh(), s, d};
    body << "    " << result.name << " = \"stablehlo.convert\"(" << bytes_i8.name << ") : (" << i8 << ") -> " << result.type() << "\n";
    return result;
  }
  Value splat(const Value& like, double v) { return constant(like.shape, like.dtype, scalar_bytes(like.dtype, v)); }
  Value unary(const std::string& name, const Value& a) { return op(name, {a}, {"", a.shape, a.dtype}); }
  Value binary(const std::string& name, const Value& a, const Value& b) { return op(name, {a, b}, {"", a.shape, a.dtype}); }
  Value compare(const char* dir, const Value& a, const Value& b) {
    return op("stablehlo.compare", {a, b}, {"", a.shape, DType::Bool},
              std::string("comparison_direction = #stablehlo<comparison_direction ") + dir + ">");
  }
  Value select(const Value& c, const Value& a, const Value& b) { return op("stablehlo.select", {c, a, b}, {"", a.shape, a.dtype}); }
  Value reshape(const Value& a, const Shape& s) { return op("stablehlo.reshape", {a}, {"", s, a.dtype}); }
};

using HloRule = std::function<Value(HloEmitter&, const Eqn&)>;
// A control-flow equation's rule gives all its outputs.
using HloControlRule = std::function<std::vector<Value>(HloEmitter&, const Eqn&)>;

HloRule same(const char* name) {
  return [name](HloEmitter& m, const Eqn& e) {
    std::vector<Value> in;
    for (size_t i = 0; i < e.in.size(); i++) in.push_back(m.in(e, i));
    return m.op(name, in, m.out_like(e, m.j.vars[size_t(e.out[0])].dtype));
  };
}

// Float ops that are the identity on integers (floor, ceil, round, trunc).
HloRule float_only(HloRule r) {
  return [r](HloEmitter& m, const Eqn& e) { return is_float(m.in(e, 0).dtype) ? r(m, e) : m.in(e, 0); };
}

HloRule compare(const char* dir) {
  return [dir](HloEmitter& m, const Eqn& e) { return m.compare(dir, m.in(e, 0), m.in(e, 1)); };
}

HloRule via(std::function<Value(HloEmitter&, const Value&)> f) {
  return [f](HloEmitter& m, const Eqn& e) { return f(m, m.in(e, 0)); };
}

Value trunc_of(HloEmitter& m, const Value& x) {
  return m.select(m.compare("LT", x, m.splat(x, 0)), m.unary("stablehlo.ceil", x), m.unary("stablehlo.floor", x));
}

// r where r and b have the same sign (or r is 0), else r + b: C's remainder made Python's.
Value floor_mod(HloEmitter& m, const Value& r, const Value& b) {
  const Value zero = m.splat(r, 0);
  const Value differ = m.binary("stablehlo.xor", m.compare("LT", r, zero), m.compare("LT", b, zero));
  const Value fix = m.binary("stablehlo.and", m.compare("NE", r, zero), differ);
  return m.select(fix, m.binary("stablehlo.add", r, b), r);
}

Value mod_rule(HloEmitter& m, const Eqn& e) {
  const Value a = m.in(e, 0), b = m.in(e, 1);
  const Value r = m.binary("stablehlo.remainder", a, b);
  return a.dtype == DType::Uint32 ? r : floor_mod(m, r, b);
}

Value idiv_rule(HloEmitter& m, const Eqn& e) {
  const Value a = m.in(e, 0), b = m.in(e, 1);
  const Value q = m.binary("stablehlo.divide", a, b);
  if (is_float(a.dtype)) return m.unary("stablehlo.floor", q);
  if (a.dtype == DType::Uint32) return q;
  const Value r = m.binary("stablehlo.remainder", a, b), zero = m.splat(r, 0);
  const Value differ = m.binary("stablehlo.xor", m.compare("LT", r, zero), m.compare("LT", b, zero));
  const Value fix = m.binary("stablehlo.and", m.compare("NE", r, zero), differ);
  return m.select(fix, m.binary("stablehlo.subtract", q, m.splat(q, 1)), q);
}

Value logaddexp_rule(HloEmitter& m, const Eqn& e) {
  const Value a = m.in(e, 0), b = m.in(e, 1);
  const Value diff = m.binary("stablehlo.subtract", a, b);
  const Value tail = m.unary("stablehlo.log_plus_one", m.unary("stablehlo.exponential", m.unary("stablehlo.negate", m.unary("stablehlo.abs", diff))));
  const Value v = m.binary("stablehlo.add", m.binary("stablehlo.maximum", a, b), tail);
  return m.select(m.compare("NE", diff, diff), m.binary("stablehlo.add", a, b), v);
}

Value shr_rule(HloEmitter& m, const Eqn& e) {
  const Value a = m.in(e, 0), b = m.in(e, 1);
  return m.binary(a.dtype == DType::Uint32 ? "stablehlo.shift_right_logical" : "stablehlo.shift_right_arithmetic", a, b);
}

Value where_rule(HloEmitter& m, const Eqn& e) {
  Value c = m.in(e, 0);
  if (c.dtype != DType::Bool) c = m.compare("NE", c, m.splat(c, 0));
  return m.select(c, m.in(e, 1), m.in(e, 2));
}

std::vector<int64_t> axes_of(const Eqn& e) { return {e.params.axes.begin(), e.params.axes.end()}; }

// reduce(x, init) over params.axes with a scalar body `body_op`.
HloRule reduce(const char* body_op, double init_float, double init_signed, double init_unsigned) {
  return [=](HloEmitter& m, const Eqn& e) {
    const Value x = m.in(e, 0);
    if (e.params.axes.empty()) return x;
    const double v = is_float(x.dtype) ? init_float : (x.dtype == DType::Uint32 || x.dtype == DType::Bool) ? init_unsigned : init_signed;
    const Value init = m.constant({}, x.dtype, scalar_bytes(x.dtype, v));
    const std::string t = tensor_type({}, x.dtype), a = m.fresh(), b = m.fresh(), r = m.fresh();
    std::string region = "{\n    ^bb0(" + a + ": " + t + ", " + b + ": " + t + "):\n      " + r + " = \"" + body_op + "\"(" + a +
                         ", " + b + ") : (" + t + ", " + t + ") -> " + t + "\n      \"stablehlo.return\"(" + r + ") : (" + t +
                         ") -> ()\n    }";
    return m.op("stablehlo.reduce", {x, init}, m.out_like(e, x.dtype), "dimensions = " + i64_array(axes_of(e)), region);
  };
}

// take(x, indices) along `axis` (indices of any rank, in range): stablehlo.gather with the
// index dims placed where the axis was, as jax lowers jnp.take.
Value take(HloEmitter& m, const Value& x, const Value& idx, size_t axis) {
  Shape ishape = idx.shape;
  ishape.push_back(1);
  const Value i = m.reshape(idx, ishape);
  const size_t r = idx.shape.size(), n = x.shape.size();
  Shape out(x.shape.begin(), x.shape.begin() + long(axis));
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + long(axis) + 1, x.shape.end());
  std::vector<int64_t> offset_dims, slice_sizes(x.shape.begin(), x.shape.end());
  for (size_t d = 0; d < axis; d++) offset_dims.push_back(int64_t(d));
  for (size_t d = axis + 1; d < n; d++) offset_dims.push_back(int64_t(d - 1 + r));
  slice_sizes[axis] = 1;
  const std::string props = "dimension_numbers = #stablehlo.gather<offset_dims = " + i64_list(offset_dims) +
                            ", collapsed_slice_dims = [" + std::to_string(axis) + "], start_index_map = [" +
                            std::to_string(axis) + "], index_vector_dim = " + std::to_string(r) +
                            ">, indices_are_sorted = false, slice_sizes = " + i64_array(slice_sizes);
  return m.op("stablehlo.gather", {x, i}, {"", out, x.dtype}, props);
}

// Negative indices wrapped once; gather clamps the rest into the axis (XLA's semantics),
// which is kiln's clamp.
Value gather_rule(HloEmitter& m, const Eqn& e) {
  const Value x = m.in(e, 0);
  Value i = m.in(e, 1);
  const size_t axis = size_t(e.params.axes[0]);
  if (i.dtype != DType::Uint32)
    i = m.select(m.compare("LT", i, m.splat(i, 0)), m.binary("stablehlo.add", i, m.splat(i, double(x.shape[axis]))), i);
  return take(m, x, i, axis);
}

// Window: takes of constant indices, a reshape for the unit axes, one transpose
// (exporter::plan_window).
Value window_rule(HloEmitter& m, const Eqn& e) {
  Value x = m.in(e, 0);
  const exporter::WindowPlan plan = exporter::plan_window(x.shape, m.j.vars[size_t(e.out[0])].shape, e.params);
  for (const exporter::WindowGather& g : plan.gathers) {
    std::vector<uint8_t> bytes;
    for (int64_t v : g.indices) {
      const std::vector<uint8_t> b = scalar_bytes(DType::Int32, double(v));
      bytes.insert(bytes.end(), b.begin(), b.end());
    }
    x = take(m, x, m.constant({g.o, g.k}, DType::Int32, bytes), g.position);
  }
  if (!plan.unit_axes.empty()) {
    Shape s = x.shape;
    s.resize(s.size() + plan.unit_axes.size(), 1);
    x = m.reshape(x, s);
  }
  return m.op("stablehlo.transpose", {x}, m.out_like(e, x.dtype), "permutation = " + i64_array(plan.perm));
}

Value slice(HloEmitter& m, const Eqn& e, std::vector<int64_t> start, std::vector<int64_t> limit, std::vector<int64_t> strides) {
  const Value x = m.in(e, 0);
  return m.op("stablehlo.slice", {x}, m.out_like(e, x.dtype),
              "start_indices = " + i64_array(start) + ", limit_indices = " + i64_array(limit) + ", strides = " + i64_array(strides));
}

Value shrink_rule(HloEmitter& m, const Eqn& e) {
  std::vector<int64_t> start, limit;
  for (auto& r : e.params.ranges) start.push_back(r.first), limit.push_back(r.second);
  return slice(m, e, start, limit, std::vector<int64_t>(start.size(), 1));
}

Value stride_rule(HloEmitter& m, const Eqn& e) {
  const Shape& s = m.in(e, 0).shape;
  return slice(m, e, std::vector<int64_t>(s.size(), 0), {s.begin(), s.end()}, {e.params.strides.begin(), e.params.strides.end()});
}

Value pad_rule(HloEmitter& m, const Eqn& e) {
  const Value x = m.in(e, 0);
  std::vector<int64_t> lo, hi;
  for (auto& r : e.params.ranges) lo.push_back(r.first), hi.push_back(r.second);
  const Value zero = m.constant({}, x.dtype, scalar_bytes(x.dtype, 0));
  return m.op("stablehlo.pad", {x, zero}, m.out_like(e, x.dtype),
              "edge_padding_low = " + i64_array(lo) + ", edge_padding_high = " + i64_array(hi) +
                  ", interior_padding = " + i64_array(std::vector<int64_t>(lo.size(), 0)));
}

HloRule with_props(const char* name, std::function<std::string(const Eqn&)> props) {
  return [=](HloEmitter& m, const Eqn& e) {
    const Value x = m.in(e, 0);
    return m.op(name, {x}, m.out_like(e, x.dtype), props(e));
  };
}

void add_elementwise(exporter::ExportRules<HloRule, HloControlRule>& t) {
  for (auto [p, op] : std::initializer_list<std::pair<Prim, const char*>>{
           {Prim::Neg, "stablehlo.negate"}, {Prim::Sqrt, "stablehlo.sqrt"}, {Prim::Exp, "stablehlo.exponential"},
           {Prim::Expm1, "stablehlo.exponential_minus_one"}, {Prim::Log, "stablehlo.log"},
           {Prim::Log1p, "stablehlo.log_plus_one"}, {Prim::Sin, "stablehlo.sine"}, {Prim::Cos, "stablehlo.cosine"},
           {Prim::Tan, "stablehlo.tan"}, {Prim::Asin, "chlo.asin"}, {Prim::Acos, "chlo.acos"}, {Prim::Sinh, "chlo.sinh"},
           {Prim::Cosh, "chlo.cosh"}, {Prim::Tanh, "stablehlo.tanh"}, {Prim::Asinh, "chlo.asinh"},
           {Prim::Acosh, "chlo.acosh"}, {Prim::Atanh, "chlo.atanh"}, {Prim::Erf, "chlo.erf"}, {Prim::Not, "stablehlo.not"},
           {Prim::Add, "stablehlo.add"}, {Prim::Sub, "stablehlo.subtract"}, {Prim::Mul, "stablehlo.multiply"},
           {Prim::Div, "stablehlo.divide"}, {Prim::Pow, "stablehlo.power"}, {Prim::Atan2, "stablehlo.atan2"},
           {Prim::Max, "stablehlo.maximum"}, {Prim::Min, "stablehlo.minimum"}, {Prim::And, "stablehlo.and"},
           {Prim::Or, "stablehlo.or"}, {Prim::Xor, "stablehlo.xor"}, {Prim::Shl, "stablehlo.shift_left"},
           {Prim::Cast, "stablehlo.convert"}, {Prim::Bitcast, "stablehlo.bitcast_convert"}})
    t.add(p, same(op));
  t.add(Prim::Floor, float_only(same("stablehlo.floor")));
  t.add(Prim::Ceil, float_only(same("stablehlo.ceil")));
  t.add(Prim::Round, float_only(same("stablehlo.round_nearest_even")));
  t.add(Prim::Trunc, float_only(via(trunc_of)));
  t.add(Prim::Recip, via([](HloEmitter& m, const Value& x) { return m.binary("stablehlo.divide", m.splat(x, 1), x); }));
  t.add(Prim::Exp2, via([](HloEmitter& m, const Value& x) { return m.binary("stablehlo.power", m.splat(x, 2), x); }));
  t.add(Prim::Log2, via([](HloEmitter& m, const Value& x) {
          return m.binary("stablehlo.divide", m.unary("stablehlo.log", x), m.splat(x, std::numbers::ln2));
        }));
  t.add(Prim::Atan, via([](HloEmitter& m, const Value& x) { return m.binary("stablehlo.atan2", x, m.splat(x, 1)); }));
  t.add(Prim::IsNan, via([](HloEmitter& m, const Value& x) { return m.compare("NE", x, x); }));
  t.add(Prim::Idiv, idiv_rule);
  t.add(Prim::Mod, mod_rule);
  t.add(Prim::Logaddexp, logaddexp_rule);
  t.add(Prim::CmpLt, compare("LT"));
  t.add(Prim::CmpLe, compare("LE"));
  t.add(Prim::CmpEq, compare("EQ"));
  t.add(Prim::CmpNe, compare("NE"));
  t.add(Prim::Shr, shr_rule);
  t.add(Prim::Where, where_rule);
}


// ---- control flow ------------------------------------------------------------------------

const exporter::ExportRules<HloRule, HloControlRule>& hlo_rules();

std::vector<Value> HloEmitter::emit(const std::vector<Value>& ins) {
  for (size_t i = 0; i < j.invars.size(); i++) vars[size_t(j.invars[i])] = ins[i];
  for (const Array& c : j.consts) {
    std::vector<uint8_t> bytes = c.bytes();
    if (exporter::is_splat(c)) bytes.resize(itemsize(c.dtype()));  // one element: MLIR's splat
    consts.push_back(constant(c.shape(), c.dtype(), bytes));
  }
  const auto& rules = hlo_rules();
  for (const Eqn& e : j.eqns) {
    if (!e.control) {
      vars[size_t(e.out[0])] = rules.get(kOp, e.prim)(*this, e);
      continue;
    }
    const std::vector<Value> outs = rules.get(kOp, *e.control)(*this, e);
    for (size_t k = 0; k < outs.size(); k++) vars[size_t(e.out[k])] = outs[k];
  }
  std::vector<Value> outs;
  for (const Atom& a : j.outs) outs.push_back(a.is_var() ? vars[size_t(a.var)] : consts[size_t(a.cst)]);
  return outs;
}

// A region: block arguments of the types of `args` (fresh names written into `args`), the
// text `fill` writes with them, then stablehlo.return of what it returns.
std::string region(HloEmitter& parent, const Jaxpr& j, std::vector<Value>& args,
                   const std::function<std::vector<Value>(HloEmitter&)>& fill) {
  HloEmitter r(j, parent);
  std::string head = "{\n    ^bb0(";
  for (size_t i = 0; i < args.size(); i++) {
    args[i].name = r.fresh();
    head += (i ? ", " : "") + args[i].name + ": " + args[i].type();
  }
  head += "):\n";
  if (args.empty()) head = "{\n";
  const std::vector<Value> rets = fill(r);
  std::string ret = "    \"stablehlo.return\"(", types;
  for (size_t i = 0; i < rets.size(); i++) ret += (i ? ", " : "") + rets[i].name, types += (i ? ", " : "") + rets[i].type();
  return head + r.body.str() + ret + ") : (" + types + ") -> ()\n  }";
}

std::vector<Value> ins_of(HloEmitter& m, const Eqn& e, size_t from, size_t to) {
  std::vector<Value> v;
  for (size_t i = from; i < to; i++) v.push_back(m.in(e, i));
  return v;
}

Value i32(HloEmitter& m, int64_t v) { return m.constant({}, DType::Int32, scalar_bytes(DType::Int32, double(v))); }

// scan -> stablehlo.while over (counter, carry, ys): the condition is counter < length;
// the body reads x slices with dynamic_slice at the counter (length-1-counter when
// reversed) and writes y slices into the ys with dynamic_update_slice, as jax lowers scan.
std::vector<Value> scan_rule(HloEmitter& m, const Eqn& e) {
  const frontend::ControlOp& op = *e.control;
  const Jaxpr& body = *op.bodies[0]->jaxpr;
  const size_t nc = size_t(op.num_consts), nk = size_t(op.num_carry), nx = e.in.size() - nc - nk;
  const std::vector<Value> consts = ins_of(m, e, 0, nc), xs = ins_of(m, e, nc + nk, e.in.size());
  std::vector<Value> init = {i32(m, 0)};
  for (size_t i = nc; i < nc + nk; i++) init.push_back(m.in(e, i));
  for (size_t k = nk; k < e.out.size(); k++) {
    const Aval& y = m.j.vars[size_t(e.out[k])];
    init.push_back(m.constant(y.shape, y.dtype, scalar_bytes(y.dtype, 0)));
  }
  std::vector<Value> cond_args = init, body_args = init;
  const std::string cond = region(m, body, cond_args, [&](HloEmitter& r) {
    return std::vector<Value>{r.compare("LT", cond_args[0], i32(r, op.length))};
  });
  const std::string step = region(m, body, body_args, [&](HloEmitter& r) {
    const Value& i = body_args[0];
    const Value at = op.reverse ? r.binary("stablehlo.subtract", i32(r, op.length - 1), i) : i;
    std::vector<Value> ins = consts;
    ins.insert(ins.end(), body_args.begin() + 1, body_args.begin() + 1 + long(nk));
    for (size_t x = 0; x < nx; x++) {
      Shape sizes = xs[x].shape;
      sizes[0] = 1;
      std::vector<Value> idx = {xs[x], at};
      for (size_t d = 1; d < sizes.size(); d++) idx.push_back(i32(r, 0));
      const Value slice = r.op("stablehlo.dynamic_slice", idx, {"", sizes, xs[x].dtype}, "slice_sizes = " + i64_array(sizes));
      ins.push_back(r.reshape(slice, Shape(sizes.begin() + 1, sizes.end())));
    }
    const std::vector<Value> outs = r.emit(ins);
    std::vector<Value> next = {r.binary("stablehlo.add", i, i32(r, 1))};
    next.insert(next.end(), outs.begin(), outs.begin() + long(nk));
    for (size_t k = nk; k < outs.size(); k++) {
      const Value& ys = body_args[1 + k];
      Shape one = outs[k].shape;
      one.insert(one.begin(), 1);
      std::vector<Value> idx = {ys, r.reshape(outs[k], one), at};
      for (size_t d = 1; d < one.size(); d++) idx.push_back(i32(r, 0));
      next.push_back(r.op("stablehlo.dynamic_update_slice", idx, {"", ys.shape, ys.dtype}));
    }
    return next;
  });
  std::vector<Value> res = m.op_n("stablehlo.while", init, init, "", {cond, step});
  res.erase(res.begin());
  return res;
}

// while -> stablehlo.while: the cond body is the condition region, the body the other.
std::vector<Value> while_rule(HloEmitter& m, const Eqn& e) {
  const frontend::ControlOp& op = *e.control;
  const size_t ncc = size_t(op.cond_consts), nc = size_t(op.num_consts);
  const std::vector<Value> cond_consts = ins_of(m, e, 0, ncc), body_consts = ins_of(m, e, ncc, ncc + nc);
  const std::vector<Value> init = ins_of(m, e, ncc + nc, e.in.size());
  auto run = [](HloEmitter& r, std::vector<Value> ins, const std::vector<Value>& carry) {
    ins.insert(ins.end(), carry.begin(), carry.end());
    return r.emit(ins);
  };
  std::vector<Value> cond_args = init, body_args = init;
  const std::string cond = region(m, *op.bodies[0]->jaxpr, cond_args, [&](HloEmitter& r) { return run(r, cond_consts, cond_args); });
  const std::string step = region(m, *op.bodies[1]->jaxpr, body_args, [&](HloEmitter& r) { return run(r, body_consts, body_args); });
  return m.op_n("stablehlo.while", init, init, "", {cond, step});
}

// cond/switch -> stablehlo.case on the index clamped to [0, branches-1] (XLA would run the
// last branch for any index out of range, JAX's switch clamps: below 0 is branch 0).
std::vector<Value> cond_rule(HloEmitter& m, const Eqn& e) {
  const frontend::ControlOp& op = *e.control;
  const std::vector<Value> operands = ins_of(m, e, 1, e.in.size());
  const Value index = m.op("stablehlo.clamp", {i32(m, 0), m.in(e, 0), i32(m, int64_t(op.bodies.size()) - 1)}, {"", {}, DType::Int32});
  std::vector<std::string> branches;
  for (const frontend::CallRef& b : op.bodies) {
    std::vector<Value> none;
    branches.push_back(region(m, *b->jaxpr, none, [&](HloEmitter& r) { return r.emit(operands); }));
  }
  std::vector<Value> results;
  for (int o : e.out) results.push_back({"", m.j.vars[size_t(o)].shape, m.j.vars[size_t(o)].dtype});
  return m.op_n("stablehlo.case", {index}, results, "", branches);
}

const exporter::ExportRules<HloRule, HloControlRule>& hlo_rules() {
  static const exporter::ExportRules<HloRule, HloControlRule> table = [] {
    exporter::ExportRules<HloRule, HloControlRule> t;
    add_elementwise(t);
    constexpr double inf = std::numeric_limits<double>::infinity();
    t.add(Prim::ReduceSum, reduce("stablehlo.add", 0, 0, 0));
    t.add(Prim::ReduceProd, reduce("stablehlo.multiply", 1, 1, 1));
    t.add(Prim::ReduceMax, reduce("stablehlo.maximum", -inf, -2147483648.0, 0));
    t.add(Prim::ReduceMin, reduce("stablehlo.minimum", inf, 2147483647.0, 4294967295.0));
    t.add(Prim::Reshape, [](HloEmitter& m, const Eqn& e) { return m.reshape(m.in(e, 0), e.params.shape); });
    t.add(Prim::Transpose, with_props("stablehlo.transpose", [](const Eqn& e) { return "permutation = " + i64_array(axes_of(e)); }));
    t.add(Prim::Expand, with_props("stablehlo.broadcast_in_dim", [](const Eqn& e) {
            std::vector<int64_t> dims(e.params.shape.size());
            for (size_t i = 0; i < dims.size(); i++) dims[i] = int64_t(i);
            return "broadcast_dimensions = " + i64_array(dims);
          }));
    t.add(Prim::Flip, with_props("stablehlo.reverse", [](const Eqn& e) { return "dimensions = " + i64_array(axes_of(e)); }));
    t.add(Prim::Pad, pad_rule);
    t.add(Prim::Shrink, shrink_rule);
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

std::string export_stablehlo(const Fn& f, const std::vector<Tree>& example_args, const ExportOptions& options) {
  if (!options.batch_dim.empty())
    fail(kOp, "a symbolic batch_dim is not supported for StableHLO (export once per batch size)");
  const Jaxpr j = exporter::trace_for_export(kOp, f, example_args, options);
  HloEmitter m(j);
  std::ostringstream head;
  head << "module @" << options.name << " {\n  func.func public @main(";
  for (size_t i = 0; i < j.invars.size(); i++) {
    const Aval& a = j.vars[size_t(j.invars[i])];
    m.vars[size_t(j.invars[i])] = {"%arg" + std::to_string(i), a.shape, a.dtype};
    head << (i ? ", " : "") << "%arg" << i << ": " << tensor_type(a.shape, a.dtype);
  }
  head << ") -> (";
  for (size_t k = 0; k < j.outs.size(); k++) head << (k ? ", " : "") << tensor_type(j.aval(j.outs[k]).shape, j.aval(j.outs[k]).dtype);
  head << ") {\n";
  std::vector<Value> args;
  for (int v : j.invars) args.push_back(m.vars[size_t(v)]);
  const std::vector<Value> outs = m.emit(args);
  std::ostringstream ret;
  ret << "    return";
  for (size_t k = 0; k < outs.size(); k++) ret << (k ? ", " : " ") << outs[k].name;
  ret << " : ";
  for (size_t k = 0; k < j.outs.size(); k++) ret << (k ? ", " : "") << tensor_type(j.aval(j.outs[k]).shape, j.aval(j.outs[k]).dtype);
  return head.str() + m.body.str() + ret.str() + "\n  }\n}\n";
}

}  // namespace kiln
