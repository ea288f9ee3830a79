// What both exporters start from: the function traced once into a flat jaxpr (calls of
// nested jits inlined, simplified as jit does), with checks shared by the targets.
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "export/export.h"
#include "frontend/control.h"
#include "frontend/jaxpr.h"

namespace kiln::exporter {

// make_jaxpr of f, every call equation inlined (recursively) and simplify_jaxpr applied
// (constant folding, CSE, DCE). Custom-rule equations (custom_vjp's linear map) throw.
frontend::Jaxpr trace_for_export(const char* op, const Fn& f, const std::vector<Tree>& args,
                                 const ExportOptions& options);

// A size that depends on the batch size: a * batch + c (a = 0: static).
struct Affine {
  int64_t a = 0, c = 0;
  bool operator==(const Affine&) const = default;
};
// How the sizes of a jaxpr traced at the example's batch size depend on it: per variable
// its dims, per equation its Params::shape and Params::ranges entries (empty where they
// are the same at every batch size).
struct BatchDependence {
  std::vector<std::vector<Affine>> var_dims;
  std::vector<std::vector<Affine>> const_dims;  // only splat constants may depend on it
  std::vector<std::vector<Affine>> shapes;
  std::vector<std::vector<std::pair<Affine, Affine>>> ranges;
};
// Traces f once more with axis 0 of every array argument one larger and compares with `j`
// (traced at the example): equal but for sizes, each size affine in the batch. Throws
// kiln::Error naming what differs otherwise.
BatchDependence batch_dependence(const char* op, const Fn& f, const std::vector<Tree>& args, const ExportOptions& options,
                                 const frontend::Jaxpr& j);

// True when every element of `a` is the same (full(), zeros(), a broadcast scalar): the
// targets write these as one value broadcast, not as every element.
bool is_splat(const Array& a);

// How both targets write Window (x -> [o..., k...], element x[o*stride + k*dilation]),
// which neither has: each axis that windows or strides is one gather of constant indices
// [o, k] at its current position (splitting it in two); the other axes get a unit k axis
// appended; one transpose puts every o before every k.
struct WindowGather {
  size_t position;               // the axis's position when it is gathered
  int64_t o, k;                  // the index tensor's shape
  std::vector<int64_t> indices;  // o*stride + k*dilation, row-major
};
struct WindowPlan {
  std::vector<WindowGather> gathers;  // in order
  std::vector<int64_t> unit_axes;     // positions of the appended unit axes (after the gathers)
  std::vector<int64_t> perm;          // the final transpose
};
WindowPlan plan_window(const Shape& in, const Shape& out, const frontend::Params& params);

// A rule table of one target: one slot per primitive, empty where the target has no rule
// (the error then names the primitive and the target), and one per control-flow kind
// (scan, while, cond), whose rules write every output of their multi-output equation.
template <class Rule, class ControlRule = Rule>
struct ExportRules {
  std::vector<Rule> rules = std::vector<Rule>(frontend::kNumPrims);
  std::array<ControlRule, 3> control;
  void add(frontend::Prim p, Rule r) { rules[size_t(p)] = r; }
  void add(frontend::ControlKind k, ControlRule r) { control[size_t(k)] = r; }
  const Rule& get(const char* op, frontend::Prim p) const {
    const Rule& r = rules[size_t(p)];
    if (!r) fail(op, "cannot export primitive ", frontend::prim_name(p), ": the target has no equivalent");
    return r;
  }
  const ControlRule& get(const char* op, const frontend::ControlOp& c) const {
    const ControlRule& r = control[size_t(c.kind)];
    if (!r) fail(op, "cannot export control flow (", c.name(), "): the target has no rule for it");
    return r;
  }
};

}  // namespace kiln::exporter
