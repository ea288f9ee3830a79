// Jaxpr construction helpers, evaluation through bind, and the text form used in tests
// and error messages.
#include "frontend/jaxpr.h"

#include <sstream>

#include "frontend/call.h"
#include "frontend/control.h"

namespace kiln::frontend {

int Jaxpr::add_var(const Aval& a) {
  vars.push_back(a);
  return int(vars.size() - 1);
}

Atom Jaxpr::add_const(const Array& x) {
  consts.push_back(x);
  return Atom::of_const(int(consts.size() - 1));
}

const Aval& Jaxpr::aval(const Atom& a) const {
  if (a.is_var()) return vars[size_t(a.var)];
  return consts[size_t(a.cst)].impl()->aval;
}

namespace {
std::string var_name(int v) {
  std::string s;
  do {
    s.insert(s.begin(), char('a' + v % 26));
    v = v / 26 - 1;
  } while (v >= 0);
  return s;
}
std::string atom_str(const Jaxpr& j, const Atom& a) {
  if (a.is_var()) return var_name(a.var);
  return "const" + std::to_string(a.cst) + ":" + j.aval(a).str();
}
}  // namespace

std::string Jaxpr::str() const {
  std::ostringstream os;
  os << "{ lambda ";
  for (size_t i = 0; i < invars.size(); i++)
    os << (i ? " " : "") << var_name(invars[i]) << ":" << vars[size_t(invars[i])].str();
  os << ". let\n";
  for (auto& e : eqns) {
    os << "    ";
    for (size_t i = 0; i < e.out.size(); i++)
      os << (i ? " " : "") << var_name(e.out[i]) << ":" << vars[size_t(e.out[i])].str();
    os << " = " << (e.custom ? "custom_vjp_lin" : e.call ? e.call->name : e.control ? e.control->name() : std::string(prim_name(e.prim)));
    for (auto& a : e.in) os << " " << atom_str(*this, a);
    os << "\n";
  }
  os << "  in (";
  for (size_t i = 0; i < outs.size(); i++) os << (i ? ", " : "") << atom_str(*this, outs[i]);
  os << ") }";
  return os.str();
}

std::vector<Array> eval_jaxpr(const Jaxpr& j, const std::vector<Array>& args) {
  if (args.size() != j.invars.size())
    fail("eval_jaxpr", "got ", args.size(), " arguments, expected ", j.invars.size());
  std::vector<Array> env(j.vars.size());
  for (size_t i = 0; i < args.size(); i++) env[size_t(j.invars[i])] = args[i];
  auto read = [&](const Atom& a) {
    return a.is_var() ? env[size_t(a.var)] : j.consts[size_t(a.cst)];
  };
  for (auto& e : j.eqns) {
    if (e.custom)
      throw Error(
          "jvp: cannot apply forward-mode differentiation to a custom_vjp function (its "
          "linearization is only transposable), expected reverse mode (vjp, grad, jacrev)");
    std::vector<Array> in;
    for (auto& a : e.in) in.push_back(read(a));
    if (e.call || e.control) {
      std::vector<Array> outs = e.call ? bind_call(e.call, in) : bind_control(e.control, in);
      for (size_t i = 0; i < e.out.size(); i++) env[size_t(e.out[i])] = outs[i];
      continue;
    }
    env[size_t(e.out[0])] = frontend::bind(e.prim, in, e.params);
  }
  std::vector<Array> out;
  for (auto& a : j.outs) out.push_back(read(a));
  return out;
}

}  // namespace kiln::frontend
