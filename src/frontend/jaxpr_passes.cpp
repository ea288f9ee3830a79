// Jaxpr passes that run before fusion (constant folding, identities, CSE, DCE) and the
// JAX-like printer behind make_jaxpr.
#include <map>
#include <sstream>

#include "backend/decode_attention.h"
#include "frontend/call.h"
#include "frontend/control.h"
#include "frontend/jit_program.h"

namespace kiln::frontend {

namespace {

// A constant that is a scalar fill (no buffers): its value, or nullopt.
std::optional<double> fill_value(const Array& c) {
  const ArrayImpl& a = *c.impl();
  if (a.tracer || !a.inputs.empty() || !a.exp.is_const()) return std::nullopt;
  return a.exp.value();
}

template <typename T>
void put_list(std::ostringstream& os, const std::vector<T>& v) {
  os << "(";
  for (size_t i = 0; i < v.size(); i++) os << (i ? "," : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
}

void put_ranges(std::ostringstream& os, const Ranges& r) {
  os << "(";
  for (size_t i = 0; i < r.size(); i++) os << (i ? "," : "") << "(" << r[i].first << "," << r[i].second << ")";
  os << ")";
}

const char* short_dtype(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "i32";
    case DType::Uint32: return "u32";
    case DType::Float16: return "f16";
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
  }
  return "?";
}

std::string aval_text(const Aval& a) {
  std::ostringstream os;
  os << short_dtype(a.dtype) << "[";
  for (size_t i = 0; i < a.shape.size(); i++) os << (i ? "," : "") << a.shape[i];
  os << "]";
  return os.str();
}

// The params a primitive reads, in JAX's bracket form ("" when it has none).
std::string params_text(Prim p, const Params& pr) {
  std::ostringstream os;
  std::vector<std::string> parts;
  auto field = [&](const char* name, auto fn) {
    std::ostringstream f;
    f << name << "=";
    fn(f);
    parts.push_back(f.str());
  };
  if (p == Prim::Cast || p == Prim::Bitcast) field("new_dtype", [&](auto& f) { f << short_dtype(pr.dtype); });
  if (p == Prim::Cast && pr.weak) field("weak_type", [&](auto& f) { f << "True"; });
  if (p == Prim::Reshape || p == Prim::Expand) field("shape", [&](auto& f) { put_list(f, pr.shape); });
  if (is_reduction(p) || p == Prim::Transpose || p == Prim::Flip || p == Prim::Gather)
    field(p == Prim::Transpose ? "permutation" : "axes", [&](auto& f) { put_list(f, pr.axes); });
  if (p == Prim::Pad) field("padding", [&](auto& f) { put_ranges(f, pr.ranges); });
  if (p == Prim::Shrink) field("ranges", [&](auto& f) { put_ranges(f, pr.ranges); });
  if (p == Prim::Stride) field("strides", [&](auto& f) { put_list(f, pr.strides); });
  if (p == Prim::QuantizedMatmul) {
    field("layout", [&](auto& f) { f << (pr.quant == QuantLayout::Nibble4 ? "nibble4" : "int8"); });
    field("rows", [&](auto& f) { f << pr.rows; });
  }
  if (p == Prim::DecodeAttention) {
    field("scale", [&](auto& f) { f << pr.scale; });
    field("sliding_window", [&](auto& f) { f << pr.sliding_window; });
  }
  if (p == Prim::Window) {
    field("window", [&](auto& f) { put_list(f, pr.window); });
    field("strides", [&](auto& f) { put_list(f, pr.strides); });
    field("dilation", [&](auto& f) { put_list(f, pr.dilation); });
  }
  if (parts.empty()) return "";
  os << "[";
  for (size_t i = 0; i < parts.size(); i++) os << (i ? " " : "") << parts[i];
  os << "]";
  return os.str();
}

// Every field, for CSE keys (two equations are equal when all of these are).
std::string params_key(const Params& pr) {
  std::ostringstream os;
  os << int(pr.dtype) << pr.weak << "|";
  put_list(os, pr.shape);
  put_list(os, pr.axes);
  put_ranges(os, pr.ranges);
  put_list(os, pr.window);
  put_list(os, pr.strides);
  put_list(os, pr.dilation);
  os << int(pr.quant) << "|" << pr.rows << "|" << float_bits(pr.scale) << "|" << pr.sliding_window;
  return os.str();
}

std::string var_name(int v) {
  std::string s;
  do {
    s.insert(s.begin(), char('a' + v % 26));
    v = v / 26 - 1;
  } while (v >= 0);
  return s;
}

}  // namespace

Jaxpr simplify_jaxpr(const Jaxpr& j) {
  Jaxpr out;
  out.vars = j.vars;
  out.invars = j.invars;
  // Constants: one per distinct array (tracing lifts a captured array once per use), and
  // one per distinct scalar fill.
  std::vector<int> cmap(j.consts.size());
  std::map<std::string, int> fills;
  for (size_t i = 0; i < j.consts.size(); i++) {
    const Array& c = j.consts[i];
    int found = -1;
    for (size_t k = 0; k < out.consts.size() && found < 0; k++)
      if (out.consts[k].is(c)) found = int(k);
    auto fv = fill_value(c);
    std::string key;
    if (found < 0 && fv) {
      const ArrayImpl& a = *c.impl();
      std::ostringstream os;
      os.precision(17);
      os << a.aval.str() << a.aval.weak << a.st.to_string() << "=" << *fv;
      key = os.str();
      if (auto it = fills.find(key); it != fills.end()) found = it->second;
    }
    if (found < 0) {
      found = out.add_const(c).cst;
      if (fv) fills[key] = found;
    }
    cmap[i] = found;
  }
  std::vector<Atom> sub(j.vars.size());
  for (size_t v = 0; v < sub.size(); v++) sub[v] = Atom::of_var(int(v));
  auto read = [&](const Atom& a) { return a.is_var() ? sub[size_t(a.var)] : Atom::of_const(cmap[size_t(a.cst)]); };
  std::map<std::string, int> seen;  // CSE: equation key -> its output var
  for (const Eqn& e0 : j.eqns) {
    Eqn e = e0;
    for (auto& a : e.in) a = read(a);
    if (e.custom || e.call || e.control || e.out.size() != 1) {
      out.eqns.push_back(e);
      continue;
    }
    const Aval& oav = j.vars[size_t(e.out[0])];
    bool all_const = true;
    for (auto& a : e.in) all_const = all_const && !a.is_var();
    if (all_const) {
      std::vector<Array> vals;
      for (auto& a : e.in) vals.push_back(out.consts[size_t(a.cst)]);
      sub[size_t(e.out[0])] = out.add_const(frontend::bind(e.prim, vals, e.params));
      continue;
    }
    // x*1, x+0, x-0 where x already has the output's type.
    if (e.prim == Prim::Mul || e.prim == Prim::Add || e.prim == Prim::Sub) {
      double unit = e.prim == Prim::Mul ? 1 : 0;
      int keep = -1;
      for (int k = 0; k < 2 && keep < 0; k++) {
        const Atom& c = e.in[size_t(k)];
        const Atom& x = e.in[size_t(1 - k)];
        if (c.is_var() || (e.prim == Prim::Sub && k == 0)) continue;
        auto fv = fill_value(out.consts[size_t(c.cst)]);
        const Aval& xav = out.aval(x);
        if (fv && *fv == unit && xav.shape == oav.shape && xav.dtype == oav.dtype && xav.weak == oav.weak)
          keep = 1 - k;
      }
      if (keep >= 0) {
        sub[size_t(e.out[0])] = e.in[size_t(keep)];
        continue;
      }
    }
    std::ostringstream key;
    key << int(e.prim) << ":" << params_key(e.params);
    for (auto& a : e.in) key << (a.is_var() ? " v" : " c") << (a.is_var() ? a.var : a.cst);
    auto [it, fresh] = seen.emplace(key.str(), e.out[0]);
    if (!fresh) {
      sub[size_t(e.out[0])] = Atom::of_var(it->second);
      continue;
    }
    out.eqns.push_back(std::move(e));
  }
  for (auto& a : j.outs) out.outs.push_back(read(a));
  // Dead code: keep only equations whose outputs are used, walking backwards.
  std::vector<char> live(out.vars.size(), 0);
  for (auto& a : out.outs)
    if (a.is_var()) live[size_t(a.var)] = 1;
  std::vector<Eqn> kept;
  for (auto it = out.eqns.rbegin(); it != out.eqns.rend(); ++it) {
    bool used = false;
    for (int o : it->out) used = used || live[size_t(o)];
    if (!used) continue;
    for (auto& a : it->in)
      if (a.is_var()) live[size_t(a.var)] = 1;
    kept.push_back(std::move(*it));
  }
  out.eqns.assign(kept.rbegin(), kept.rend());
  return out;
}

std::string jaxpr_text(const Jaxpr& j) {
  // JAX names variables in order of appearance: constants, inputs, then equations.
  std::vector<int> name(j.vars.size(), -1);
  std::vector<int> cname(j.consts.size(), -1);
  int next = 0;
  std::ostringstream os;
  auto lit = [&](const Atom& a) -> std::string {
    std::ostringstream s;
    s.precision(9);
    auto fv = fill_value(j.consts[size_t(a.cst)]);
    if (fv && j.aval(a).shape.empty()) {
      s << *fv << ":" << aval_text(j.aval(a));
      return s.str();
    }
    if (fv) {
      s << "full(" << *fv << "):" << aval_text(j.aval(a));
      return s.str();
    }
    return var_name(cname[size_t(a.cst)]);
  };
  os << "{ lambda ";
  bool first = true;
  for (size_t c = 0; c < j.consts.size(); c++) {
    if (fill_value(j.consts[c])) continue;
    cname[c] = next++;
    os << (first ? "" : " ") << var_name(cname[c]) << ":" << aval_text(j.consts[c].impl()->aval);
    first = false;
  }
  os << (first ? "; " : " ; ");
  for (size_t i = 0; i < j.invars.size(); i++) {
    int v = j.invars[i];
    name[size_t(v)] = next++;
    os << (i ? " " : "") << var_name(name[size_t(v)]) << ":" << aval_text(j.vars[size_t(v)]);
  }
  os << ". let\n";
  auto atom = [&](const Atom& a) {
    return a.is_var() ? var_name(name[size_t(a.var)]) : lit(a);
  };
  for (const Eqn& e : j.eqns) {
    os << "    ";
    for (size_t i = 0; i < e.out.size(); i++) {
      name[size_t(e.out[i])] = next++;
      os << (i ? " " : "") << var_name(name[size_t(e.out[i])]) << ":" << aval_text(j.vars[size_t(e.out[i])]);
    }
    os << " = "
       << (e.custom ? "custom_vjp_lin"
           : e.call    ? "pjit[name=" + e.call->name + "]"
           : e.control ? e.control->name() + "[" + std::to_string(e.control->bodies.size()) + " bodies]"
                    : std::string(prim_name(e.prim)) + params_text(e.prim, e.params));
    for (auto& a : e.in) os << " " << atom(a);
    os << "\n";
  }
  os << "  in (";
  for (size_t i = 0; i < j.outs.size(); i++) os << (i ? ", " : "") << atom(j.outs[i]);
  os << (j.outs.size() == 1 ? ",) }" : ") }");
  return os.str();
}

}  // namespace kiln::frontend
