// The control flow primitives' rules (control.h): construction with signature checks,
// closure conversion, jvp, batching (a batched predicate selects between branches, or runs
// a while loop until every lane is done), partial evaluation and transpose. Each rule maps
// the op's bodies through the call primitive's own rules (call_jvp, call_vmap,
// call_partial_eval, call_transpose), so derived bodies are traced once and cached.
#include "frontend/control.h"
#include "frontend/control_util.h"

#include "frontend/jvp.h"
#include "frontend/linearize.h"
#include "frontend/rule_ops.h"
#include "frontend/vmap.h"

namespace kiln::frontend {

namespace control_detail {

std::vector<Array> select_branch(const Array& idx, const std::vector<std::vector<Array>>& outs) {
  std::vector<Array> r = outs.back();
  for (int b = int(outs.size()) - 2; b >= 0; b--) {
    Array le = ops::binary(Prim::CmpLe, idx, ops::filled(idx.shape(), DType::Int32, b, idx.device()));
    for (size_t i = 0; i < r.size(); i++) {
      Shape s1(r[i].shape().size(), 1);
      if (idx.ndim() == 1) s1[0] = idx.shape()[0];
      r[i] = ops::where(ops::expand(ops::reshape(le, s1), r[i].shape()), outs[size_t(b)][i], r[i]);
    }
  }
  return r;
}

}  // namespace control_detail

using namespace control_detail;

namespace {

// ---- jvp ------------------------------------------------------------------------------

void unpack_jvp(JvpTrace& t, const std::vector<Array>& args, std::vector<Array>& p, std::vector<Array>& tan) {
  for (auto& a : args) {
    auto* tr = tracer_in<JvpTracer>(a, t);
    p.push_back(tr ? tr->primal : a);
    tan.push_back(tr ? tr->tangent : Array());
  }
}

// The jvp call of `body` (inputs (primals, defined tangents), outputs (outputs, float
// output tangents)) with its inputs regrouped: each group of primal inputs is followed by
// the tangents defined for it, and each group of outputs by its tangents.
CallRef grouped_jvp(const CallRef& body, const std::vector<bool>& has, const std::vector<int>& in_groups,
                    const std::vector<int>& out_groups) {
  CallRef jb = call_jvp(*body, has);
  const int n = int(has.size());
  std::vector<Aval> outs = outs_of(*body);
  std::vector<int> ins, os;
  int start = 0, t = n;
  for (int g : in_groups) {
    std::vector<int> tans;
    for (int i = start; i < start + g; i++) {
      ins.push_back(i);
      if (has[size_t(i)]) tans.push_back(t++);
    }
    ins = cat(ins, tans);
    start += g;
  }
  start = 0, t = int(outs.size());
  for (int g : out_groups) {
    std::vector<int> tans;
    for (int i = start; i < start + g; i++) {
      os.push_back(i);
      if (is_float(outs[size_t(i)].dtype)) tans.push_back(t++);
    }
    os = cat(os, tans);
    start += g;
  }
  return remap_call(jb, ins, os);
}

// Splits a jvp op's grouped results (each group's outputs then their tangents) into
// tracers of t.
std::vector<Array> ungroup(JvpTrace& t, const std::vector<Array>& r, const std::vector<Aval>& outs,
                           const std::vector<int>& groups) {
  std::vector<Array> res;
  size_t k = 0, start = 0;
  for (int g : groups) {
    size_t tk = k + size_t(g);
    for (size_t i = start; i < start + size_t(g); i++) {
      Array p = r[k++];
      res.push_back(t.make(p, is_float(outs[i].dtype) ? r[tk++] : Array()));
    }
    k = tk;
    start += size_t(g);
  }
  return res;
}

}  // namespace

std::string ControlOp::name() const {
  switch (kind) {
    case ControlKind::Scan: return "scan";
    case ControlKind::While: return "while";
    case ControlKind::Cond: return "cond";
    case ControlKind::Remat: return "checkpoint";
  }
  return "?";
}

std::vector<Aval> ControlOp::in_avals() const {
  if (kind == ControlKind::Remat) return ins_of(*bodies[0]);
  if (kind == ControlKind::Cond) {
    std::vector<Aval> r{{{}, DType::Int32, false}};
    for (auto& a : ins_of(*bodies[0])) r.push_back(a);
    return r;
  }
  if (kind == ControlKind::While) {
    std::vector<Aval> r = slice(ins_of(*bodies[0]), 0, size_t(cond_consts));
    for (auto& a : ins_of(*bodies[1])) r.push_back(a);
    return r;
  }
  std::vector<Aval> r = ins_of(*bodies[0]);
  for (size_t i = size_t(num_consts + num_carry); i < r.size(); i++) r[i] = with_leading(r[i], length);
  return r;
}

std::vector<Aval> ControlOp::out_avals() const {
  if (kind == ControlKind::Cond || kind == ControlKind::Remat) return outs_of(*bodies[0]);
  const CallJaxpr& body = *bodies.back();
  std::vector<Aval> ins = ins_of(body), outs = outs_of(body);
  std::vector<Aval> r = slice(ins, size_t(num_consts), size_t(num_carry));
  for (size_t i = size_t(num_carry); i < outs.size(); i++) r.push_back(with_leading(outs[i], length));
  return r;
}

ControlRef make_scan(CallRef body, int num_consts, int num_carry, int64_t length, bool reverse, int unroll) {
  std::vector<Aval> ins = ins_of(*body), outs = outs_of(*body);
  if (length < 0) fail("scan", "got length ", length, ", expected a length >= 0");
  if (unroll < 1) fail("scan", "got unroll ", unroll, ", expected unroll >= 1");
  if (outs.size() < size_t(num_carry))
    fail("scan", "the body returned ", outs.size(), " carry and output leaves, expected at least the ", num_carry,
         " leaves of the carry");
  for (int i = 0; i < num_carry; i++) {
    const Aval &in = ins[size_t(num_consts + i)], &out = outs[size_t(i)];
    if (!same_type(in, out))
      fail("scan", "the body's carry output ", i, " is ", out.str(), ", expected ", in.str(),
           " (the type of the initial carry): the carry must keep its shape and dtype");
  }
  auto op = std::make_shared<ControlOp>();
  op->kind = ControlKind::Scan;
  op->bodies = {std::move(body)};
  op->num_consts = num_consts;
  op->num_carry = num_carry;
  op->length = length;
  op->reverse = reverse;
  op->unroll = unroll;
  return op;
}

ControlRef make_while(CallRef cond, CallRef body, int cond_consts, int num_consts) {
  std::vector<Aval> couts = outs_of(*cond), bins = ins_of(*body), bouts = outs_of(*body);
  if (couts.size() != 1 || couts[0].dtype != DType::Bool || !couts[0].shape.empty())
    fail("while_loop", "the condition must return one bool scalar, got ",
         couts.size() == 1 ? couts[0].str() : std::to_string(couts.size()) + " values");
  const int nk = int(bins.size()) - num_consts;
  if (int(bouts.size()) != nk)
    fail("while_loop", "the body returned ", bouts.size(), " leaves, expected the ", nk, " leaves of the carry");
  for (int i = 0; i < nk; i++)
    if (!same_type(bins[size_t(num_consts + i)], bouts[size_t(i)]))
      fail("while_loop", "the body's carry output ", i, " is ", bouts[size_t(i)].str(), ", expected ",
           bins[size_t(num_consts + i)].str(), " (the type of the initial carry)");
  auto op = std::make_shared<ControlOp>();
  op->kind = ControlKind::While;
  op->bodies = {std::move(cond), std::move(body)};
  op->cond_consts = cond_consts;
  op->num_consts = num_consts;
  op->num_carry = nk;
  return op;
}

ControlRef make_cond(std::vector<CallRef> branches) {
  if (branches.empty()) fail("switch", "expected at least one branch");
  std::vector<Aval> want = outs_of(*branches[0]);
  for (size_t b = 1; b < branches.size(); b++) {
    std::vector<Aval> got = outs_of(*branches[b]);
    if (got.size() != want.size())
      fail("cond", "branch ", b, " returned ", got.size(), " leaves and branch 0 ", want.size(),
           ", expected branches of one output type");
    for (size_t i = 0; i < got.size(); i++)
      if (!same_type(got[i], want[i]))
        fail("cond", "branch ", b, " returned ", got[i].str(), " for output ", i, " and branch 0 ", want[i].str(),
             ", expected branches of one output type");
  }
  auto op = std::make_shared<ControlOp>();
  op->kind = ControlKind::Cond;
  op->bodies = std::move(branches);
  return op;
}

ClosedFn trace_closed(const ArraysFn& f, const std::vector<Aval>& avals, const std::string& device,
                      const std::string& name) {
  auto t = std::make_shared<JaxprTrace>();
  {
    TraceScope scope(t);
    std::vector<Array> in;
    for (auto& av : avals) in.push_back(t->new_arg(av, device));
    for (auto& o : f(in)) {
      top_trace({o});  // throws if o escaped an inner transformation
      t->jaxpr->outs.push_back(t->atom_of(o));
    }
  }
  // Closure conversion: constants that are tracers of enclosing transformations become
  // leading inputs, the concrete ones stay constants (renumbered).
  Jaxpr& j = *t->jaxpr;
  ClosedFn r;
  std::vector<Atom> sub(j.consts.size());
  std::vector<Array> consts;
  std::vector<int> captured_vars;
  for (size_t i = 0; i < j.consts.size(); i++) {
    const Array& c = j.consts[i];
    if (tracer_of(c)) {
      int v = j.add_var({c.shape(), c.dtype(), c.weak_type()});
      captured_vars.push_back(v);
      r.captured.push_back(c);
      sub[i] = Atom::of_var(v);
    } else {
      sub[i] = Atom::of_const(int(consts.size()));
      consts.push_back(c);
    }
  }
  auto fix = [&](Atom& a) {
    if (!a.is_var()) a = sub[size_t(a.cst)];
  };
  for (auto& e : j.eqns)
    for (auto& a : e.in) fix(a);
  for (auto& a : j.outs) fix(a);
  j.consts = std::move(consts);
  j.invars.insert(j.invars.begin(), captured_vars.begin(), captured_vars.end());
  r.call = make_call(t->jaxpr, device, name);
  return r;
}

std::vector<Array> bind_control(const ControlRef& op, const std::vector<Array>& args) {
  if (Trace* t = top_trace(args)) {
    std::vector<Array> raised;
    for (auto& a : args) raised.push_back(full_raise(*t, a));
    return t->process_control(op, raised);
  }
  return run_control(*op, args);
}

// ---- jvp ------------------------------------------------------------------------------

std::vector<Array> control_jvp(JvpTrace& t, const ControlRef& op, const std::vector<Array>& args) {
  std::vector<Array> p, tan;
  unpack_jvp(t, args, p, tan);
  bool any = false;
  for (auto& x : tan) any = any || x.valid();
  if (!any) return bind_control(op, p);
  std::vector<Aval> outs = op->out_avals();
  if (op->kind == ControlKind::Remat) {
    // The body's jvp, rematerialized with the same policy: (primals, defined tangents).
    std::vector<bool> has;
    std::vector<Array> in = p;
    for (auto& x : tan) {
      has.push_back(x.valid());
      if (x.valid()) in.push_back(x);
    }
    auto jop = cached<ControlOp>(*op, "jvp:" + mask_key(has),
                                 [&] { return make_remat(call_jvp(*op->bodies[0], has), op->policy); });
    return ungroup(t, bind_control(jop, in), outs, {int(outs.size())});
  }
  if (op->kind == ControlKind::Cond) {
    // Each branch's jvp: (operands, defined tangents) -> (outputs, float tangents).
    std::vector<bool> has;
    std::vector<Array> in = p;
    for (size_t i = 1; i < tan.size(); i++) {
      has.push_back(tan[i].valid());
      if (tan[i].valid()) in.push_back(tan[i]);
    }
    auto jop = cached<ControlOp>(*op, "jvp:" + mask_key(has), [&] {
      std::vector<CallRef> bs;
      for (auto& b : op->bodies) bs.push_back(call_jvp(*b, has));
      return make_cond(std::move(bs));
    });
    return ungroup(t, bind_control(jop, in), outs, {int(outs.size())});
  }
  // Loops: every float carry gets a tangent (zeros where none came in), so the carry's
  // tangents are the same on every iteration.
  const bool scan = op->kind == ControlKind::Scan;
  const int nc0 = scan ? 0 : op->cond_consts, nc = op->num_consts, nk = op->num_carry;
  const int nx = int(p.size()) - nc0 - nc - nk;
  std::vector<bool> has;
  for (int i = nc0; i < int(p.size()); i++) {
    bool carry = i >= nc0 + nc && i < nc0 + nc + nk;
    has.push_back(carry ? is_float(p[size_t(i)].dtype()) : tan[size_t(i)].valid());
  }
  auto jop = cached<ControlOp>(*op, "jvp:" + mask_key(has), [&] {
    const CallRef& body = op->bodies.back();
    const int ny = int(outs_of(*body).size()) - nk;
    CallRef jb = grouped_jvp(body, has, {nc, nk, nx}, {nk, ny});
    int nct = 0, nkt = 0;
    for (int i = 0; i < nc; i++) nct += has[size_t(i)];
    for (int i = 0; i < nk; i++) nkt += has[size_t(nc + i)];
    if (scan) return make_scan(jb, nc + nct, nk + nkt, op->length, op->reverse, op->unroll);
    // The condition ignores the tangents of the carry.
    const CallRef& cond = op->bodies[0];
    std::vector<Aval> kt;
    for (int i = 0; i < nk; i++)
      if (has[size_t(nc + i)]) kt.push_back(ins_of(*cond)[size_t(nc0 + i)]);
    std::vector<int> cins = range(0, nc0 + nk);
    for (int i = 0; i < int(kt.size()); i++) cins.push_back(-1 - i);
    CallRef jc = remap_call(cond, cins, {0}, kt);
    return make_while(jc, jb, nc0, nc + nct);
  });
  std::vector<Array> in(p.begin(), p.begin() + nc0);
  int start = nc0;
  for (int g : {nc, nk, nx}) {
    std::vector<Array> ts;
    for (int i = start; i < start + g; i++) {
      in.push_back(p[size_t(i)]);
      if (has[size_t(i - nc0)]) ts.push_back(instantiate(tan[size_t(i)], p[size_t(i)]));
    }
    in.insert(in.end(), ts.begin(), ts.end());
    start += g;
  }
  return ungroup(t, bind_control(jop, in), outs, {nk, int(outs.size()) - nk});
}

// ---- batching -------------------------------------------------------------------------

std::vector<Array> control_vmap(BatchTrace& t, const ControlRef& op, const std::vector<Array>& args) {
  const int64_t n = t.size;
  std::vector<Array> vals;
  std::vector<BatchDim> dims;
  bool any = false;
  for (auto& a : args) {
    auto* tr = tracer_in<BatchTracer>(a, t);
    vals.push_back(tr ? tr->val : a);
    dims.push_back(tr ? tr->dim : std::nullopt);
    any = any || dims.back().has_value();
  }
  if (!any) return bind_control(op, vals);
  auto front = [&](size_t i) { return dims[i] ? move_batch_axis(vals[i], dims[i], 0, n) : vals[i]; };
  std::vector<Array> r;
  if (op->kind == ControlKind::Remat) {
    std::vector<bool> mask;
    std::vector<Array> in;
    for (size_t i = 0; i < vals.size(); i++) {
      mask.push_back(dims[i].has_value());
      in.push_back(front(i));
    }
    auto vop = cached<ControlOp>(*op, "vmap:" + mask_key(mask) + ":" + std::to_string(n),
                                 [&] { return make_remat(call_vmap(*op->bodies[0], mask, n), op->policy); });
    for (auto& o : bind_control(vop, in)) r.push_back(t.make(o, 0));
    return r;
  }
  if (op->kind == ControlKind::Cond) {
    std::vector<bool> mask;
    std::vector<Array> ops;
    bool any_op = false;
    for (size_t i = 1; i < vals.size(); i++) {
      mask.push_back(dims[i].has_value());
      any_op = any_op || mask.back();
      ops.push_back(front(i));
    }
    auto vbranch = [&](const CallRef& b) { return any_op ? call_vmap(*b, mask, n) : b; };
    if (!dims[0]) {
      auto vop = cached<ControlOp>(*op, "vmap:" + mask_key(mask) + ":" + std::to_string(n), [&] {
        std::vector<CallRef> bs;
        for (auto& b : op->bodies) bs.push_back(vbranch(b));
        return make_cond(std::move(bs));
      });
      r = bind_control(vop, join({{vals[0]}, ops}));
    } else {
      // A batched index: every branch runs and each lane selects its own (index clamped).
      std::vector<std::vector<Array>> outs;
      for (const CallRef& b : op->bodies) {
        outs.push_back(bind_call(vbranch(b), ops));
        if (!any_op)
          for (auto& o : outs.back()) o = move_batch_axis(o, std::nullopt, 0, n);
      }
      r = select_branch(front(0), outs);
    }
    std::vector<Array> res;
    for (auto& o : r) res.push_back(t.make(o, 0));
    return res;
  }
  // Loops: once anything is batched, every carry is (so its batch axis is the same on
  // every iteration); xs keep the scanned axis in front and carry the batch axis second.
  const bool scan = op->kind == ControlKind::Scan;
  const int nc0 = scan ? 0 : op->cond_consts, nc = op->num_consts, nk = op->num_carry;
  std::vector<bool> mask;
  std::vector<Array> in;
  for (size_t i = 0; i < vals.size(); i++) {
    bool carry = int(i) >= nc0 + nc && int(i) < nc0 + nc + nk;
    bool xs = int(i) >= nc0 + nc + nk;
    mask.push_back(carry || dims[i].has_value());
    in.push_back(xs ? (dims[i] ? move_batch_axis(vals[i], dims[i], 1, n) : vals[i])
                    : (mask.back() ? move_batch_axis(vals[i], dims[i], 0, n) : vals[i]));
  }
  auto vop = cached<ControlOp>(*op, "vmap:" + mask_key(mask) + ":" + std::to_string(n), [&] {
    if (scan) return make_scan(call_vmap(*op->bodies[0], mask, n), nc, nk, op->length, op->reverse, op->unroll);
    // The predicate is batched: the loop runs while any lane's is true, and lanes whose
    // predicate is false keep their carry (JAX's batched while).
    std::vector<bool> cmask = slice(mask, 0, size_t(nc0)), bmask = slice(mask, size_t(nc0), size_t(nc + nk));
    for (int i = 0; i < nk; i++) cmask.push_back(true);
    CallRef vc = call_vmap(*op->bodies[0], cmask, n), vb = call_vmap(*op->bodies[1], bmask, n);
    std::vector<Aval> cav = ins_of(*vc), bav = ins_of(*vb);
    CallRef any_cond = trace_derived(
        [vc](const std::vector<Array>& x) {
          Array p = ops::cast(bind_call(vc, x)[0], DType::Int32, false);
          return std::vector<Array>{ops::cast(ops::reduce(Prim::ReduceMax, p, {0}), DType::Bool, false)};
        },
        cav, vc->device, "any(" + vc->name + ")");
    std::vector<Aval> av = slice(cav, 0, size_t(nc0));
    for (auto& a : bav) av.push_back(a);
    CallRef masked = trace_derived(
        [vc, vb, nc0, nc, nk, n](const std::vector<Array>& x) {
          std::vector<Array> carry = slice(x, size_t(nc0 + nc), size_t(nk));
          Array p = bind_call(vc, join({slice(x, 0, size_t(nc0)), carry}))[0];
          std::vector<Array> next = bind_call(vb, slice(x, size_t(nc0), size_t(nc + nk)));
          for (int i = 0; i < nk; i++) {
            Shape s1(carry[size_t(i)].shape().size(), 1);
            s1[0] = n;
            next[size_t(i)] = ops::where(ops::expand(ops::reshape(p, s1), carry[size_t(i)].shape()), next[size_t(i)],
                                         carry[size_t(i)]);
          }
          return next;
        },
        av, vb->device, "masked(" + vb->name + ")");
    return make_while(any_cond, masked, nc0, nc0 + nc);
  });
  if (!scan) in.insert(in.begin() + nc0, in.begin(), in.begin() + nc0);  // cond consts read by the body too
  r = bind_control(vop, in);
  std::vector<Array> res;
  for (size_t i = 0; i < r.size(); i++) res.push_back(t.make(r[i], int(i) < nk ? 0 : 1));
  return res;
}

// ---- construction from functions -------------------------------------------------------

namespace {

Aval aval_of(const Array& x) { return {x.shape(), x.dtype(), x.weak_type()}; }

std::string device_of(const std::vector<Array>& xs) { return xs.empty() ? default_device() : xs[0].device(); }

}  // namespace

std::vector<Array> scan_flat(const ArraysFn& body, const std::vector<Array>& init, const std::vector<Array>& xs,
                             int64_t length, bool reverse, int unroll) {
  std::vector<Aval> av;
  for (auto& c : init) av.push_back(aval_of(c));
  for (size_t i = 0; i < xs.size(); i++) {
    if (xs[i].ndim() == 0 || xs[i].shape(0) != length)
      fail("scan", "xs leaf ", i, " has shape ", shape_str(xs[i].shape()), ", expected a leading axis of length ",
           length, " (the scan's length)");
    Aval a = aval_of(xs[i]);
    a.shape.erase(a.shape.begin());
    av.push_back(a);
  }
  std::string dev = device_of(join({init, xs}));
  ClosedFn f = trace_closed(body, av, dev, "scan_body");
  auto op = make_scan(f.call, int(f.captured.size()), int(init.size()), length, reverse, unroll);
  return bind_control(op, join({f.captured, init, xs}));
}

std::vector<Array> while_flat(const ArraysFn& cond, const ArraysFn& body, const std::vector<Array>& init) {
  std::vector<Aval> av;
  for (auto& c : init) av.push_back(aval_of(c));
  std::string dev = device_of(init);
  ClosedFn c = trace_closed(cond, av, dev, "while_cond"), b = trace_closed(body, av, dev, "while_body");
  auto op = make_while(c.call, b.call, int(c.captured.size()), int(b.captured.size()));
  return bind_control(op, join({c.captured, b.captured, init}));
}

std::vector<Array> cond_flat(const Array& index, const std::vector<ArraysFn>& branches,
                             const std::vector<Array>& operands) {
  if (index.ndim() != 0 || index.dtype() != DType::Int32)
    fail("switch", "the index is ", dtype_name(index.dtype()), shape_str(index.shape()), ", expected an int32 scalar");
  std::vector<Aval> av;
  for (auto& o : operands) av.push_back(aval_of(o));
  std::string dev = device_of(operands.empty() ? std::vector<Array>{index} : operands);
  std::vector<ClosedFn> fs;
  std::vector<Array> captured;
  std::vector<Aval> cav;
  for (size_t b = 0; b < branches.size(); b++) {
    fs.push_back(trace_closed(branches[b], av, dev, "branch" + std::to_string(b)));
    for (auto& c : fs.back().captured) {
      captured.push_back(c);
      cav.push_back(aval_of(c));
    }
  }
  // Every branch takes every branch's captured arrays (ignoring the others'), then the operands.
  std::vector<CallRef> calls;
  const int nop = int(operands.size());
  for (size_t b = 0, at = 0; b < fs.size(); b++) {
    const int own = int(fs[b].captured.size());
    std::vector<int> ins;
    std::vector<Aval> extra;
    for (size_t k = 0; k < cav.size(); k++) {
      if (k >= at && k < at + size_t(own)) {
        ins.push_back(int(k - at));
      } else {
        ins.push_back(-1 - int(extra.size()));
        extra.push_back(cav[k]);
      }
    }
    ins = cat(ins, range(own, own + nop));
    calls.push_back(remap_call(fs[b].call, ins, range(0, int(outs_of(*fs[b].call).size())), extra));
    at += size_t(own);
  }
  return bind_control(make_cond(std::move(calls)), join({{index}, captured, operands}));
}

}  // namespace kiln::frontend
