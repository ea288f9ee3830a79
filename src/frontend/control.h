// Control flow primitives (JAX's scan, while_loop and cond/switch): higher-order,
// multi-output primitives whose bodies are closed jaxprs (calls, call.h). Like the call
// primitive they have no rows in the single-output rule tables: an equation with
// `Eqn::control` set holds a ControlOp, each trace reaches the rules through
// Trace::process_control, and every rule lives in control_rules.cpp (eager and jit
// execution in control_run.cpp). docs/ARCHITECTURE.md, "Control flow".
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "frontend/call.h"

namespace kiln::frontend {

class JvpTrace;
class BatchTrace;
class JaxprTrace;

enum class ControlKind : uint8_t { Scan, While, Cond, Remat };

// What a rematerialized body (checkpoint) keeps for the backward pass (JAX's
// jax.checkpoint_policies): nothing (every intermediate is recomputed from the inputs), the
// results of contractions (kiln has no dot primitive: a reduce_sum of a product, which the
// lowering turns into a matmul kernel) or everything (a plain call).
enum class RematPolicy : uint8_t { NothingSaveable, DotsSaveable, EverythingSaveable };

// The operands and bodies of each kind:
// - Scan: inputs (consts[num_consts], carry[num_carry], xs...) -> (carry, ys...); bodies
//   {body: (consts, carry, x slices) -> (carry, y slices)}; xs and ys have a leading axis
//   of `length`, walked backwards when `reverse`.
// - While: inputs (cond consts[cond_consts], body consts[num_consts], carry[num_carry]) ->
//   carry; bodies {cond: (cond consts, carry) -> bool[], body: (body consts, carry) -> carry}.
// - Cond: inputs (index: int32[], operands...) -> outs; bodies are the branches, operands ->
//   outs, all of one signature; the index is clamped to the branches (JAX's switch).
// - Remat: inputs -> outs of its one body (JAX's checkpoint/remat, remat.cpp): it runs as a
//   call, but partial evaluation saves only what `policy` allows and the unknown part
//   recomputes the rest from the inputs in the backward pass.
struct ControlOp {
  ControlKind kind = ControlKind::Scan;
  std::vector<CallRef> bodies;
  int num_consts = 0, num_carry = 0, cond_consts = 0;
  int64_t length = 0;
  bool reverse = false;
  int unroll = 1;  // accepted as in JAX; kiln runs one body per step either way
  RematPolicy policy = RematPolicy::NothingSaveable;

  std::string name() const;  // "scan", "while", "cond", "checkpoint"
  std::vector<Aval> in_avals() const;
  std::vector<Aval> out_avals() const;
  // Derived ops (jvp, batched, split, transposed) and the scan's compiled step, cached
  // under a key naming the argument pattern, as the call primitive caches its own.
  mutable std::mutex mu;
  mutable std::map<std::string, std::shared_ptr<const void>> cache;
};
using ControlRef = std::shared_ptr<const ControlOp>;

// Constructors: check the bodies' signatures and throw kiln::Error naming the mismatch.
ControlRef make_scan(CallRef body, int num_consts, int num_carry, int64_t length, bool reverse, int unroll);
ControlRef make_while(CallRef cond, CallRef body, int cond_consts, int num_consts);
ControlRef make_cond(std::vector<CallRef> branches);
ControlRef make_remat(CallRef body, RematPolicy policy);

// A function traced once into a closed call (closure conversion): arrays the function
// closes over that are traced by an enclosing transformation become leading inputs of the
// call, and are returned in `captured` to be passed as arguments.
struct ClosedFn {
  CallRef call;
  std::vector<Array> captured;
};
ClosedFn trace_closed(const ArraysFn& f, const std::vector<Aval>& avals, const std::string& device,
                      const std::string& name);

// The primitives applied to flat lists of arrays (the library adds pytrees): each traces
// its bodies once (closure conversion), builds the op and binds it.
// scan: body(carry..., x slices...) -> (carry..., y slices...).
std::vector<Array> scan_flat(const ArraysFn& body, const std::vector<Array>& init, const std::vector<Array>& xs,
                             int64_t length, bool reverse, int unroll);
// while: cond(carry...) -> {bool[]}, body(carry...) -> carry.
std::vector<Array> while_flat(const ArraysFn& cond, const ArraysFn& body, const std::vector<Array>& init);
// cond/switch: branches[clamp(index)](operands...); index an int32 scalar.
std::vector<Array> cond_flat(const Array& index, const std::vector<ArraysFn>& branches,
                             const std::vector<Array>& operands);

// checkpoint: f(args...) as one remat op (closed over what f captures).
std::vector<Array> remat_flat(const ArraysFn& f, const std::vector<Array>& args, RematPolicy policy);

// Applies the op through the trace stack (the top trace's process_control), or runs it.
std::vector<Array> bind_control(const ControlRef& op, const std::vector<Array>& args);
// Runs the op on concrete arrays: each body is a compiled call run in a C++ loop.
std::vector<Array> run_control(const ControlOp& op, const std::vector<Array>& args);

// The rules, one per trace (control_rules.cpp).
std::vector<Array> control_jvp(JvpTrace& t, const ControlRef& op, const std::vector<Array>& args);
std::vector<Array> control_vmap(BatchTrace& t, const ControlRef& op, const std::vector<Array>& args);
// Records the op as an equation of t's jaxpr (jit's trace), or runs it on constants.
std::vector<Array> control_record(JaxprTrace& t, const ControlRef& op, const std::vector<Array>& args);
// Partial evaluation in linearize's trace: the known op runs now, the unknown (linear)
// one is recorded as an equation; while loops refuse, as in JAX.
std::vector<Array> control_partial_eval(JaxprTrace& t, const ControlRef& op, const std::vector<Array>& args);
// Partial evaluation of a control equation of a jaxpr being split (call_partial_eval) whose
// inputs are partly known: the known equation (known inputs -> known outputs, then new
// residual variables) and the unknown one (reading the residuals). New variables are
// added to both jaxprs, which share their variable numbering.
struct ControlEqnSplit {
  Eqn known, unknown;
  std::vector<bool> out_known;
};
ControlEqnSplit split_control_eqn(const Eqn& e, const std::vector<bool>& in_known, Jaxpr& kj, Jaxpr& uj);
// Transpose of a recorded linear op: inputs that are constants in `args` (invalid where
// linear), cotangents of the outputs (invalid = zero) -> cotangents of the linear inputs.
std::vector<Array> control_transpose(const ControlOp& op, const std::vector<Array>& args,
                                     const std::vector<Aval>& in_avals, const std::vector<Array>& cts);

// In a call being transposed (call_transpose), a control equation with constant and
// variable inputs that still computes primal values (a checkpoint, or a loop inside one,
// reaches transpose unsplit from a checkpoint's recomputed body): its known part runs now,
// its known outputs become constants of j (recorded in sub) and e becomes the unknown
// part. False, e untouched, when there is nothing known to run.
bool control_eval_known(Eqn& e, Jaxpr& j, std::vector<Atom>& sub);

// The remat op's partial evaluation (remat.cpp): the known op computes the known outputs
// and the residuals the policy saves; the unknown op takes (those residuals, then every
// input of the original op, known ones included) and recomputes what was not saved.
struct RematSplit {
  ControlRef known, unknown;
  std::vector<bool> out_known;
  size_t num_res = 0;
  bool pass_known = true;  // false under everything_saveable: a plain call split
};
RematSplit split_remat(const ControlOp& op, const std::vector<bool>& known);

}  // namespace kiln::frontend
