// Jaxpr: a small first-order IR of primitive applications over typed variables. linearize
// records tangent computations into one (then transposes it for vjp); jit will reuse it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "frontend/trace.h"

namespace kiln::frontend {

// An operand: a variable (var >= 0) or a constant (index into Jaxpr::consts).
struct Atom {
  int var = -1;
  int cst = -1;
  bool is_var() const { return var >= 0; }
  static Atom of_var(int v) { return {v, -1}; }
  static Atom of_const(int c) { return {-1, c}; }
};

// One equation: outs = prim(in...). A custom_vjp's linear map is an equation with
// `custom` set: its outputs are opaque and only its transpose (custom->bwd) is known.
// A call (call.h) is an equation with `call` set: outs = call's jaxpr applied to in.
// A control flow op (control.h) is an equation with `control` set.
struct Eqn {
  Prim prim = Prim::Neg;
  Params params;
  std::vector<Atom> in;
  std::vector<int> out;
  std::shared_ptr<const CustomVjp> custom;
  std::vector<Array> residuals;  // custom only: bwd's first argument
  std::shared_ptr<const CallJaxpr> call;
  std::shared_ptr<const ControlOp> control;  // scan, while or cond (control.h)
};

struct Jaxpr {
  std::vector<Aval> vars;  // the type of each variable, by id
  std::vector<int> invars;
  std::vector<Array> consts;
  std::vector<Eqn> eqns;
  std::vector<Atom> outs;

  int add_var(const Aval& a);
  Atom add_const(const Array& x);
  const Aval& aval(const Atom& a) const;
  // Text form, one equation per line, e.g. "c:float32[3] = mul a b".
  std::string str() const;
};

// Evaluates the jaxpr on arguments (through bind, so it composes with transformations).
std::vector<Array> eval_jaxpr(const Jaxpr& j, const std::vector<Array>& args);

}  // namespace kiln::frontend
