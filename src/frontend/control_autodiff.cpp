// Reverse mode for the control flow primitives (control.h): recording in a jaxpr, partial
// evaluation (the known part of a loop runs now and stacks its residuals per iteration;
// the unknown part is a linear loop over them) and transpose (a scan in the other
// direction over the transposed body; a cond of the transposed branches).
#include "frontend/control.h"
#include "frontend/control_util.h"
#include "frontend/linearize.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

using namespace control_detail;

namespace {

// A known/unknown split of a body (call_partial_eval) where the outputs in force_unknown
// are unknown even when computable from known inputs: the known part passes them on as
// residuals and the unknown part returns them. Loops need it for a carry whose initial
// value is unknown, conds for an output that another branch computes from unknowns.
struct Split {
  CallRef known, unknown;  // known: known ins -> (known outs, residuals); unknown: (residuals, unknown ins) -> unknown outs
  std::vector<bool> out_known;
  size_t num_res = 0;
};

Split split_forced(const CallJaxpr& c, const std::vector<bool>& known, const std::vector<bool>& force_unknown) {
  auto s = call_partial_eval(c, known);
  const Jaxpr& j = *c.jaxpr;
  Jaxpr kj = *s->known->jaxpr, uj = *s->unknown->jaxpr;
  Split r;
  r.out_known = s->out_known;
  size_t nko = 0;
  for (bool b : s->out_known) nko += b;
  std::vector<Atom> kouts, extra;
  for (size_t i = 0, q = 0; i < j.outs.size(); i++) {
    if (!s->out_known[i]) continue;
    Atom a = kj.outs[q++];
    if (!force_unknown[i]) {
      kouts.push_back(a);
      continue;
    }
    r.out_known[i] = false;
    if (a.is_var()) extra.push_back(a);
  }
  kouts.insert(kouts.end(), kj.outs.begin() + long(nko), kj.outs.end());
  kouts.insert(kouts.end(), extra.begin(), extra.end());
  kj.outs = kouts;
  for (size_t k = 0; k < extra.size(); k++) uj.invars.insert(uj.invars.begin() + long(s->num_res + k), extra[k].var);
  uj.outs.clear();
  for (size_t i = 0; i < j.outs.size(); i++)
    if (!r.out_known[i]) uj.outs.push_back(j.outs[i]);
  r.num_res = s->num_res + extra.size();
  r.known = make_call(std::make_shared<Jaxpr>(std::move(kj)), c.device, "known(" + c.name + ")");
  r.unknown = make_call(std::make_shared<Jaxpr>(std::move(uj)), c.device, "unknown(" + c.name + ")");
  return r;
}

// A split op: the known op runs now; the unknown one takes (its leading inputs, residuals
// from the known op's last outputs, ...) as `res_at` says.
struct OpSplit {
  ControlRef known, unknown;
  std::vector<bool> in_known;   // per input of the original op, after the carry fixpoint
  std::vector<bool> out_known;  // per output
  size_t num_res = 0;
  size_t res_at = 0;  // the residuals go before this argument of the original op
  bool pass_known = false;  // the unknown op also takes the known arguments (remat recomputes)
};

OpSplit split_scan(const ControlOp& op, std::vector<bool> known) {
  const CallRef& body = op.bodies[0];
  const int nc = op.num_consts, nk = op.num_carry;
  // A carry is known when its initial value is and the body keeps it known.
  for (bool changed = true; changed;) {
    changed = false;
    auto s = call_partial_eval(*body, known);
    for (int i = 0; i < nk; i++)
      if (known[size_t(nc + i)] && !s->out_known[size_t(i)]) {
        known[size_t(nc + i)] = false;
        changed = true;
      }
  }
  std::vector<bool> force(outs_of(*body).size(), false);
  for (int i = 0; i < nk; i++) force[size_t(i)] = !known[size_t(nc + i)];
  Split sp = split_forced(*body, known, force);
  OpSplit r;
  r.in_known = known;
  r.out_known = sp.out_known;
  r.num_res = sp.num_res;
  int kc = 0, kk = 0;
  for (int i = 0; i < nc; i++) kc += known[size_t(i)];
  for (int i = 0; i < nk; i++) kk += known[size_t(nc + i)];
  // Residuals leave the known scan as per-iteration outputs and enter the unknown one as xs.
  r.known = make_scan(sp.known, kc, kk, op.length, op.reverse, op.unroll);
  const int nr = int(sp.num_res), uc = nc - kc, uk = nk - kk;
  const int nu = int(ins_of(*sp.unknown).size());
  std::vector<int> ins = cat(cat(range(nr, nr + uc + uk), range(0, nr)), range(nr + uc + uk, nu));
  r.unknown = make_scan(remap_call(sp.unknown, ins, range(0, int(outs_of(*sp.unknown).size()))), uc, uk, op.length,
                        op.reverse, op.unroll);
  r.res_at = size_t(nc + nk);  // before the first xs argument
  return r;
}

OpSplit split_cond(const ControlOp& op, const std::vector<bool>& known) {
  std::vector<bool> kops(known.begin() + 1, known.end());
  const size_t nout = op.out_avals().size();
  std::vector<bool> all_known(nout, true);
  for (auto& b : op.bodies) {
    auto s = call_partial_eval(*b, kops);
    for (size_t i = 0; i < nout; i++) all_known[i] = all_known[i] && s->out_known[i];
  }
  std::vector<bool> force(nout);
  for (size_t i = 0; i < nout; i++) force[i] = !all_known[i];
  std::vector<Split> sps;
  std::vector<std::vector<Aval>> res;  // residual types per branch
  size_t nko = 0;
  for (bool b : all_known) nko += b;
  for (auto& b : op.bodies) {
    sps.push_back(split_forced(*b, kops, force));
    std::vector<Aval> o = outs_of(*sps.back().known);
    res.emplace_back(o.begin() + long(nko), o.end());
  }
  // Each branch returns its own residuals and zeros for the other branches' (one signature).
  std::vector<CallRef> kb, ub;
  for (size_t b = 0; b < sps.size(); b++) {
    CallRef k = sps[b].known;
    kb.push_back(trace_derived(
        [k, res, b, nko](const std::vector<Array>& x) {
          std::vector<Array> r = bind_call(k, x);
          std::vector<Array> out(r.begin(), r.begin() + long(nko));
          const std::string& dev = x.empty() ? k->device : x[0].device();
          for (size_t c = 0; c < res.size(); c++)
            for (size_t i = 0; i < res[c].size(); i++)
              out.push_back(c == b ? r[nko + i] : ops::zeros(res[c][i], dev));
          return out;
        },
        ins_of(*k), k->device, k->name));
    std::vector<int> ins;
    std::vector<Aval> extra;
    for (size_t c = 0; c < res.size(); c++)
      for (size_t i = 0; i < res[c].size(); i++) {
        if (c == b) {
          ins.push_back(int(i));
        } else {
          ins.push_back(-1 - int(extra.size()));
          extra.push_back(res[c][i]);
        }
      }
    const int nu = int(ins_of(*sps[b].unknown).size());
    ins = cat(ins, range(int(res[b].size()), nu));
    ub.push_back(remap_call(sps[b].unknown, ins, range(0, int(outs_of(*sps[b].unknown).size())), extra));
  }
  OpSplit r;
  r.in_known = known;
  r.out_known = all_known;
  for (auto& v : res) r.num_res += v.size();
  r.known = make_cond(kb);
  r.unknown = make_cond(ub);
  r.res_at = 1;  // after the index
  return r;
}

std::shared_ptr<const OpSplit> op_split(const ControlRef& op, const std::vector<bool>& known) {
  return cached<OpSplit>(*op, "pe:" + mask_key(known), [&] {
    if (op->kind == ControlKind::Remat) {
      RematSplit rs = split_remat(*op, known);
      OpSplit r;
      r.known = rs.known;
      r.unknown = rs.unknown;
      r.in_known = known;
      r.out_known = rs.out_known;
      r.num_res = rs.num_res;
      r.pass_known = rs.pass_known;
      return std::make_shared<const OpSplit>(std::move(r));
    }
    return std::make_shared<const OpSplit>(op->kind == ControlKind::Scan ? split_scan(*op, known) : split_cond(*op, known));
  });
}

std::vector<Array> instantiate_all(const std::vector<Array>& cts, const std::vector<Aval>& avals,
                                   const std::string& dev) {
  std::vector<Array> r;
  for (size_t i = 0; i < cts.size(); i++) r.push_back(cts[i].valid() ? cts[i] : ops::zeros(avals[i], dev));
  return r;
}

}  // namespace

std::vector<Array> control_record(JaxprTrace& t, const ControlRef& op, const std::vector<Array>& args) {
  Eqn e;
  e.control = op;
  bool any_var = false;
  std::vector<Array> vals;
  for (auto& a : args) {
    Atom at = tracer_in<JaxprTracer>(a, t)->atom;
    any_var = any_var || at.is_var();
    e.in.push_back(at);
    if (!at.is_var()) vals.push_back(t.jaxpr->consts[size_t(at.cst)]);
  }
  if (!any_var) return bind_control(op, vals);  // constants only: run one level down
  std::vector<Array> outs;
  const std::string dev = args.empty() ? op->bodies[0]->device : args[0].device();
  for (auto& av : op->out_avals()) {
    int v = t.jaxpr->add_var(av);
    e.out.push_back(v);
    outs.push_back(t.tracer_for(v, dev));
  }
  t.jaxpr->eqns.push_back(std::move(e));
  return outs;
}

std::vector<Array> control_partial_eval(JaxprTrace& t, const ControlRef& op, const std::vector<Array>& args) {
  std::vector<bool> known;
  std::vector<Atom> atoms;
  std::vector<Array> kv;
  bool all_known = true;
  for (auto& a : args) {
    Atom at = tracer_in<JaxprTracer>(a, t)->atom;
    atoms.push_back(at);
    known.push_back(!at.is_var());
    kv.push_back(at.is_var() ? Array() : t.jaxpr->consts[size_t(at.cst)]);
    all_known = all_known && known.back();
  }
  if (all_known) return bind_control(op, kv);
  if (op->kind == ControlKind::While)
    fail("while_loop", "reverse-mode differentiation (grad, vjp, linearize) of a while loop is not supported, as in "
         "JAX; use scan, or fori_loop with static bounds");
  if (op->kind == ControlKind::Cond && !known[0]) throw Error("internal: cond's index is an unknown (linear) value");
  auto sp = op_split(op, known);
  std::vector<Array> kargs, kout;
  for (size_t i = 0; i < args.size(); i++)
    if (sp->in_known[i] || (op->kind == ControlKind::Cond && i == 0)) kargs.push_back(kv[i]);
  if (!sp->known->out_avals().empty()) kout = bind_control(sp->known, kargs);
  const size_t nko = kout.size() - sp->num_res;
  Eqn e;
  e.control = sp->unknown;
  for (size_t i = 0; i <= args.size(); i++) {
    if (i == sp->res_at)
      for (size_t r = 0; r < sp->num_res; r++) e.in.push_back(t.jaxpr->add_const(kout[nko + r]));
    if (i == args.size()) break;
    if ((op->kind == ControlKind::Cond && i == 0) || !sp->in_known[i] || sp->pass_known)
      e.in.push_back(atoms[i].is_var() ? atoms[i] : t.jaxpr->add_const(kv[i]));
  }
  const std::string dev = args[0].device();
  std::vector<Aval> uav = sp->unknown->out_avals();
  std::vector<Array> outs;
  for (size_t i = 0, q = 0, u = 0; i < sp->out_known.size(); i++) {
    if (sp->out_known[i]) {
      outs.push_back(kout[q++]);
      continue;
    }
    int v = t.jaxpr->add_var(uav[u++]);
    e.out.push_back(v);
    outs.push_back(t.tracer_for(v, dev));
  }
  t.jaxpr->eqns.push_back(std::move(e));
  return outs;
}

ControlEqnSplit split_control_eqn(const Eqn& e, const std::vector<bool>& in_known, Jaxpr& kj, Jaxpr& uj) {
  const ControlRef& op = e.control;
  if (op->kind == ControlKind::While)
    fail("while_loop", "reverse-mode differentiation (grad, vjp, linearize) of a while loop is not supported, as in "
         "JAX; use scan, or fori_loop with static bounds");
  if (op->kind == ControlKind::Cond && !in_known[0]) throw Error("internal: cond's index is an unknown (linear) value");
  auto sp = op_split(op, in_known);
  ControlEqnSplit r;
  r.out_known = sp->out_known;
  r.known.control = sp->known;
  r.unknown.control = sp->unknown;
  for (size_t i = 0; i < e.in.size(); i++)
    if (sp->in_known[i] || (op->kind == ControlKind::Cond && i == 0)) r.known.in.push_back(e.in[i]);
  for (size_t i = 0; i < sp->out_known.size(); i++)
    (sp->out_known[i] ? r.known.out : r.unknown.out).push_back(e.out[i]);
  std::vector<Aval> kav = sp->known->out_avals();
  std::vector<int> res;
  for (size_t k = kav.size() - sp->num_res; k < kav.size(); k++) {
    int v = kj.add_var(kav[k]);
    if (uj.add_var(kav[k]) != v) throw Error("internal: split jaxprs with different variables");
    res.push_back(v);
    r.known.out.push_back(v);
  }
  for (size_t i = 0; i <= e.in.size(); i++) {
    if (i == sp->res_at)
      for (int v : res) r.unknown.in.push_back(Atom::of_var(v));
    if (i == e.in.size()) break;
    if ((op->kind == ControlKind::Cond && i == 0) || !sp->in_known[i] || sp->pass_known)
      r.unknown.in.push_back(e.in[i]);
  }
  return r;
}

bool control_eval_known(Eqn& e, Jaxpr& j, std::vector<Atom>& sub) {
  std::vector<bool> known;
  std::vector<Array> kv;
  bool some = false, all = true;
  for (auto& a : e.in) {
    known.push_back(!a.is_var());
    kv.push_back(a.is_var() ? Array() : j.consts[size_t(a.cst)]);
    some = some || known.back();
    all = all && known.back();
  }
  if (!some || all || e.control->kind == ControlKind::While) return false;
  auto sp = op_split(e.control, known);
  bool any_known_out = false;
  for (bool b : sp->out_known) any_known_out = any_known_out || b;
  // A loop or branch whose outputs all depend on variables is linear as it stands (its
  // constant inputs are residuals); a checkpoint's body still computes primal values.
  if (!any_known_out && e.control->kind != ControlKind::Remat) return false;
  std::vector<Array> kargs, kout;
  for (size_t i = 0; i < e.in.size(); i++)
    if (sp->in_known[i] || (e.control->kind == ControlKind::Cond && i == 0)) kargs.push_back(kv[i]);
  if (!sp->known->out_avals().empty()) kout = bind_control(sp->known, kargs);
  const size_t nko = kout.size() - sp->num_res;
  Eqn u;
  u.control = sp->unknown;
  for (size_t i = 0; i <= e.in.size(); i++) {
    if (i == sp->res_at)
      for (size_t r = 0; r < sp->num_res; r++) u.in.push_back(j.add_const(kout[nko + r]));
    if (i == e.in.size()) break;
    if ((e.control->kind == ControlKind::Cond && i == 0) || !sp->in_known[i] || sp->pass_known) u.in.push_back(e.in[i]);
  }
  for (size_t i = 0, q = 0; i < sp->out_known.size(); i++) {
    if (sp->out_known[i]) sub[size_t(e.out[i])] = j.add_const(kout[q++]);
    else u.out.push_back(e.out[i]);
  }
  e = std::move(u);
  return true;
}

std::vector<Array> control_transpose(const ControlOp& op, const std::vector<Array>& args,
                                     const std::vector<Aval>& in_avals, const std::vector<Array>& cts0) {
  if (op.kind == ControlKind::While) throw Error("internal: a while loop reached transpose");
  const std::string dev = default_device();
  std::vector<Array> cts = instantiate_all(cts0, op.out_avals(), dev);
  std::vector<Array> in_ct(args.size());
  if (op.kind == ControlKind::Remat) {
    // The transposed body recomputes the primal values it needs from its constant inputs
    // (call_transpose evaluates them first); it stays a remat op, opaque to jit's CSE.
    std::vector<bool> lin;
    std::vector<Array> in;
    for (auto& a : args) {
      lin.push_back(!a.valid());
      if (a.valid()) in.push_back(a);
    }
    in.insert(in.end(), cts.begin(), cts.end());
    auto top = cached<ControlOp>(op, "T:" + mask_key(lin), [&] {
      return make_remat(call_transpose(*op.bodies[0], lin, std::vector<bool>(cts.size(), true)), op.policy);
    });
    std::vector<Array> r = bind_control(top, in);
    for (size_t i = 0, k = 0; i < args.size(); i++)
      if (lin[i]) in_ct[i] = r[k++];
    return in_ct;
  }
  if (op.kind == ControlKind::Cond) {
    std::vector<bool> lin;
    std::vector<Array> in{args[0]};
    for (size_t i = 1; i < args.size(); i++) {
      lin.push_back(!args[i].valid());
      if (args[i].valid()) in.push_back(args[i]);
    }
    in.insert(in.end(), cts.begin(), cts.end());
    auto top = cached<ControlOp>(op, "T:" + mask_key(lin), [&] {
      std::vector<CallRef> bs;
      for (auto& b : op.bodies) bs.push_back(call_transpose(*b, lin, std::vector<bool>(cts.size(), true)));
      return make_cond(bs);
    });
    std::vector<Array> r = bind_control(top, in);
    for (size_t i = 1, k = 0; i < args.size(); i++)
      if (lin[i - 1]) in_ct[i] = r[k++];
    return in_ct;
  }
  // Scan: the carries are linear; consts and xs are linear unless given (residuals).
  const int nc = op.num_consts, nk = op.num_carry, nx = int(args.size()) - nc - nk;
  const int ny = int(cts.size()) - nk;
  std::vector<bool> lin;
  for (int i = 0; i < int(args.size()); i++) lin.push_back((i >= nc && i < nc + nk) || !args[size_t(i)].valid());
  auto top = cached<ControlOp>(op, "T:" + mask_key(lin), [&] {
    const CallRef& body = op.bodies[0];
    CallRef bt = call_transpose(*body, lin, std::vector<bool>(size_t(nk + ny), true));
    std::vector<Aval> bin = ins_of(*body), av, lc, lx, nlcs, nlxs;
    for (int i = 0; i < nc + nk + nx; i++) {
      bool c = i < nc, x = i >= nc + nk;
      if (c) (lin[size_t(i)] ? lc : nlcs).push_back(bin[size_t(i)]);
      if (x) (lin[size_t(i)] ? lx : nlxs).push_back(bin[size_t(i)]);
    }
    // Transposed body: consts (non-linear consts), carry (accumulated cotangents of the
    // linear consts, cotangents of the carry), xs (non-linear xs, cotangents of the ys).
    av = nlcs;
    av.insert(av.end(), lc.begin(), lc.end());
    for (int i = 0; i < nk; i++) av.push_back(bin[size_t(nc + i)]);
    av.insert(av.end(), nlxs.begin(), nlxs.end());
    std::vector<Aval> bout = outs_of(*body);
    av.insert(av.end(), bout.begin() + nk, bout.end());  // the ys' cotangents
    const size_t a = nlcs.size(), b = lc.size(), xk = nlxs.size();
    CallRef tb = trace_derived(
        [bt, a, b, nk, xk, ny](const std::vector<Array>& x) {
          std::vector<Array> in = slice(x, 0, a);
          std::vector<Array> acc = slice(x, a, b), ctk = slice(x, a + b, size_t(nk));
          std::vector<Array> nx_i = slice(x, a + b + size_t(nk), xk), cty = slice(x, a + b + size_t(nk) + xk, size_t(ny));
          std::vector<Array> r = bind_call(bt, join({in, nx_i, ctk, cty}));
          std::vector<Array> out;
          for (size_t i = 0; i < b; i++) out.push_back(ops::add(acc[i], r[i]));
          for (size_t i = b; i < r.size(); i++) out.push_back(r[i]);
          return out;
        },
        av, body->device, "transpose(" + body->name + ")");
    return make_scan(tb, int(a), int(b) + nk, op.length, !op.reverse, op.unroll);
  });
  std::vector<Array> in;
  for (int i = 0; i < nc; i++)
    if (!lin[size_t(i)]) in.push_back(args[size_t(i)]);
  for (int i = 0; i < nc; i++)
    if (lin[size_t(i)]) in.push_back(ops::zeros(in_avals[size_t(i)], dev));
  for (int i = 0; i < nk; i++) in.push_back(cts[size_t(i)]);
  for (int i = nc + nk; i < nc + nk + nx; i++)
    if (!lin[size_t(i)]) in.push_back(args[size_t(i)]);
  for (int i = 0; i < ny; i++) in.push_back(cts[size_t(nk + i)]);
  std::vector<Array> r = bind_control(top, in);
  size_t k = 0;
  for (int i = 0; i < nc; i++)
    if (lin[size_t(i)]) in_ct[size_t(i)] = r[k++];
  for (int i = 0; i < nk; i++) in_ct[size_t(nc + i)] = r[k++];
  for (int i = nc + nk; i < nc + nk + nx; i++)
    if (lin[size_t(i)]) in_ct[size_t(i)] = r[k++];
  return in_ct;
}

}  // namespace kiln::frontend
