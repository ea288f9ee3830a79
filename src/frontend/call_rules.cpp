// The call primitive's rules: evaluation (compile once per argument layout, then run),
// jvp (jvp of the jaxpr), batching (vmap of the jaxpr), partial evaluation (known/unknown
// split) and transpose (transpose of the linear jaxpr). Each derived jaxpr is traced once
// and cached on its parent call under a key naming the argument pattern.
#include <atomic>
#include <charconv>
#include <functional>

#include "frontend/call.h"
#include "frontend/control.h"
#include "frontend/jit_program.h"
#include "frontend/jvp.h"
#include "frontend/linearize.h"
#include "frontend/rule_ops.h"
#include "frontend/vmap.h"
#include "ir/debug.h"

namespace kiln::frontend {

namespace {

std::atomic<size_t> compiles{0};

std::string mask_key(const std::vector<bool>& m) {
  std::string s;
  for (bool b : m) s += b ? '1' : '0';
  return s;
}

std::vector<Aval> in_avals(const Jaxpr& j) {
  std::vector<Aval> r;
  for (int v : j.invars) r.push_back(j.vars[size_t(v)]);
  return r;
}

// The derived call under `key`, made (traced) on first use. Two threads may both make
// it; the first one stored wins, so every caller sees the same object.
CallRef cached(const CallJaxpr& c, const std::string& key, const std::function<CallRef()>& make) {
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.derived.find(key);
    if (it != c.derived.end()) return it->second;
  }
  CallRef r = make();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.derived.emplace(key, r).first->second;
}

using Body = std::function<std::vector<Array>(const std::vector<Array>&)>;

// Traces body on fresh inputs of these types into a new call. The inputs are new
// variables and the parent's constants are concrete, so the result is closed.
CallRef trace_call(const CallJaxpr& parent, const std::string& name, const std::vector<Aval>& avals,
                   const Body& body) {
  auto t = std::make_shared<JaxprTrace>();
  {
    TraceScope scope(t);
    std::vector<Array> in;
    for (auto& av : avals) in.push_back(t->new_arg(av, parent.device));
    for (auto& o : body(in)) {
      top_trace({o});  // throws if o escaped an inner transformation
      t->jaxpr->outs.push_back(t->atom_of(o));
    }
  }
  for (auto& c : t->jaxpr->consts)
    if (tracer_of(c)) throw Error("internal: a derived call of " + parent.name + " captured a traced array");
  return make_call(t->jaxpr, parent.device, name);
}

ArraysFn eval_fn(std::shared_ptr<const Jaxpr> j) {
  return [j](const std::vector<Array>& xs) { return eval_jaxpr(*j, xs); };
}

}  // namespace

CallRef make_call(std::shared_ptr<const Jaxpr> jaxpr, std::string device, std::string name) {
  auto c = std::make_shared<CallJaxpr>();
  c->jaxpr = std::move(jaxpr);
  c->device = std::move(device);
  c->name = std::move(name);
  return c;
}

size_t call_compile_count() { return compiles.load(); }

std::vector<Array> bind_call(const CallRef& c, const std::vector<Array>& args) {
  if (Trace* t = top_trace(args)) {
    std::vector<Array> raised;
    for (auto& a : args) raised.push_back(full_raise(*t, a));
    return t->process_call(c, raised);
  }
  return run_call(*c, args);
}

void append_decimal(std::string& key, int64_t n) {
  char digits[24];
  key.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
}

std::vector<Array> run_call(const CallJaxpr& c, const std::vector<Array>& args) {
  const Jaxpr& j = *c.jaxpr;
  const char* op = c.name.c_str();
  if (args.size() != j.invars.size())
    fail(op, "got ", args.size(), " arguments, expected ", j.invars.size());
  std::string device = args.empty() ? c.device : args[0].device();
  std::vector<BufferRef> bufs;
  bufs.reserve(args.size());
  std::string key = device;
  key.reserve(device.size() + 4 * args.size());
  for (size_t i = 0; i < args.size(); i++) {
    const Aval& want = j.vars[size_t(j.invars[i])];
    if (args[i].shape() != want.shape || args[i].dtype() != want.dtype)
      fail(op, "argument ", i, " is ", dtype_name(args[i].dtype()), shape_str(args[i].shape()),
           ", expected ", want.str(), " (the type it was traced with)");
    if (args[i].device() != device)
      fail(op, "got arguments on devices ", device, " and ", args[i].device(), ", expected one device");
    auto [b, off] = buffer_and_offset(args[i]);
    bufs.push_back(std::move(b));
    key += '@';
    append_decimal(key, off);
  }
  std::shared_ptr<const Program> prog;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.programs.find(key);
    if (it != c.programs.end()) prog = it->second;
  }
  if (!prog) {
    std::shared_ptr<const Jaxpr> simple;
    {
      std::lock_guard<std::mutex> lock(c.mu);
      simple = c.simplified;
    }
    if (!simple) simple = std::make_shared<Jaxpr>(simplify_jaxpr(j));
    std::vector<int64_t> offsets;
    for (size_t i = 0; i < args.size(); i++) offsets.push_back(buffer_and_offset(args[i]).second);
    auto p = std::make_shared<Program>(compile_program(*simple, device, offsets));
    compiles++;
    if (debug_level() >= 1)
      debug_print("jit: compiled " + std::to_string(simple->eqns.size()) + " equations into " +
                  std::to_string(p->steps.size()) + " kernel(s) for " + device);
    if (debug_level() >= 4) debug_print("jit program: " + jaxpr_text(*simple));
    if (debug_level() >= 3) debug_print("jit kernels:\n" + p->str());
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.simplified) c.simplified = simple;
    prog = c.programs.emplace(key, p).first->second;
  }
  return run_program(*prog, bufs);
}

CallRef call_jvp(const CallJaxpr& c, const std::vector<bool>& has_tangent) {
  return cached(c, "jvp:" + mask_key(has_tangent), [&] {
    auto j = c.jaxpr;
    std::vector<Aval> avals = in_avals(*j), tav = avals;
    for (size_t i = 0; i < has_tangent.size(); i++)
      if (has_tangent[i]) avals.push_back(tav[i]);
    return trace_call(c, "jvp(" + c.name + ")", avals, [j, has_tangent](const std::vector<Array>& in) {
      const size_t n = j->invars.size();
      std::vector<Array> primals(in.begin(), in.begin() + long(n)), tangents(n);
      for (size_t i = 0, k = n; i < n; i++)
        if (has_tangent[i]) tangents[i] = in[k++];
      auto [outs, touts] = jvp_flat(eval_fn(j), primals, tangents);
      std::vector<Array> r = outs;
      for (size_t i = 0; i < outs.size(); i++)
        if (is_float(outs[i].dtype())) r.push_back(instantiate(touts[i], outs[i]));
      return r;
    });
  });
}

CallRef call_vmap(const CallJaxpr& c, const std::vector<bool>& batched, int64_t size) {
  return cached(c, "vmap:" + mask_key(batched) + ":" + std::to_string(size), [&] {
    auto j = c.jaxpr;
    std::vector<Aval> avals = in_avals(*j);
    std::vector<BatchDim> dims;
    for (size_t i = 0; i < avals.size(); i++) {
      dims.push_back(batched[i] ? BatchDim(0) : std::nullopt);
      if (batched[i]) avals[i].shape.insert(avals[i].shape.begin(), size);
    }
    return trace_call(c, "vmap(" + c.name + ")", avals, [j, dims, size](const std::vector<Array>& in) {
      auto [vals, od] = vmap_flat(eval_fn(j), in, dims, size);
      std::vector<Array> r;
      for (size_t i = 0; i < vals.size(); i++) r.push_back(move_batch_axis(vals[i], od[i], 0, size));
      return r;
    });
  });
}

std::shared_ptr<const CallSplit> call_partial_eval(const CallJaxpr& c, const std::vector<bool>& known) {
  const std::string key = mask_key(known);
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.splits.find(key);
    if (it != c.splits.end()) return it->second;
  }
  const Jaxpr& j = *c.jaxpr;
  // A variable is known when it is a known input or computed from known values only.
  std::vector<char> kv(j.vars.size(), 0);
  for (size_t i = 0; i < j.invars.size(); i++) kv[size_t(j.invars[i])] = known[i];
  auto is_known = [&](const Atom& a) { return !a.is_var() || kv[size_t(a.var)]; };
  Jaxpr kj, uj;
  kj.vars = uj.vars = j.vars;
  kj.consts = uj.consts = j.consts;
  // Residuals: known variables that unknown equations read. A known movement op (a view:
  // broadcast, transpose, reshape, ...) is recomputed in the unknown part from its input
  // instead, so the residual is the realized buffer and not a view that the unknown call
  // would have to copy (a matmul's broadcast operands would cost a kernel each).
  std::vector<char> is_res(j.vars.size(), 0), copied(j.vars.size(), 0);
  std::vector<int> res;
  std::vector<int> producer(j.vars.size(), -1);
  for (size_t i = 0; i < j.eqns.size(); i++)
    for (int o : j.eqns[i].out) producer[size_t(o)] = int(i);
  auto is_movement = [](const Eqn& e) {
    return !e.custom && !e.call && prim_info(e.prim).kind == PrimKind::Movement;
  };
  std::function<void(const Atom&)> need = [&](const Atom& a) {
    if (!a.is_var() || !kv[size_t(a.var)] || is_res[size_t(a.var)] || copied[size_t(a.var)]) return;
    int pi = producer[size_t(a.var)];
    if (pi >= 0 && is_movement(j.eqns[size_t(pi)])) {
      const Eqn& m = j.eqns[size_t(pi)];
      need(m.in[0]);
      uj.eqns.push_back(m);
      copied[size_t(a.var)] = 1;
      return;
    }
    is_res[size_t(a.var)] = 1;
    res.push_back(a.var);
  };
  for (const Eqn& e : j.eqns) {
    bool k = !e.custom, some = false;
    for (auto& a : e.in) {
      k = k && is_known(a);
      some = some || is_known(a);
    }
    if (e.control && !k && some) {
      // A loop or branch with known and unknown inputs splits in two (control.h).
      std::vector<bool> ink;
      for (auto& a : e.in) ink.push_back(is_known(a));
      ControlEqnSplit s = split_control_eqn(e, ink, kj, uj);
      kv.resize(kj.vars.size(), 1);
      is_res.resize(kj.vars.size(), 0);
      copied.resize(kj.vars.size(), 0);
      producer.resize(kj.vars.size(), -1);
      for (int o : s.known.out) kv[size_t(o)] = 1;
      for (int o : s.unknown.out) kv[size_t(o)] = 0;
      kj.eqns.push_back(s.known);
      for (auto& a : s.unknown.in) need(a);
      uj.eqns.push_back(s.unknown);
      continue;
    }
    for (int o : e.out) kv[size_t(o)] = k;
    if (k) {
      kj.eqns.push_back(e);
      continue;
    }
    for (auto& a : e.in) need(a);
    uj.eqns.push_back(e);
  }
  auto split = std::make_shared<CallSplit>();
  for (size_t i = 0; i < j.invars.size(); i++) (known[i] ? kj : uj).invars.push_back(j.invars[i]);
  for (auto& a : j.outs) {
    split->out_known.push_back(is_known(a));
    (is_known(a) ? kj : uj).outs.push_back(a);
  }
  for (int v : res) kj.outs.push_back(Atom::of_var(v));
  uj.invars.insert(uj.invars.begin(), res.begin(), res.end());
  split->num_res = res.size();
  split->known = make_call(std::make_shared<Jaxpr>(std::move(kj)), c.device, "known(" + c.name + ")");
  split->unknown = make_call(std::make_shared<Jaxpr>(std::move(uj)), c.device, "unknown(" + c.name + ")");
  std::lock_guard<std::mutex> lock(c.mu);
  return c.splits.emplace(key, split).first->second;
}

CallRef call_transpose(const CallJaxpr& c, const std::vector<bool>& linear, const std::vector<bool>& has_ct) {
  return cached(c, "T:" + mask_key(linear) + ":" + mask_key(has_ct), [&] {
    auto j = c.jaxpr;
    std::vector<Aval> avals;
    for (size_t i = 0; i < j->invars.size(); i++)
      if (!linear[i]) avals.push_back(j->vars[size_t(j->invars[i])]);
    for (size_t i = 0; i < j->outs.size(); i++)
      if (has_ct[i]) avals.push_back(j->aval(j->outs[i]));
    return trace_call(c, "transpose(" + c.name + ")", avals, [j, linear, has_ct](const std::vector<Array>& in) {
      // The non-linear inputs become constants of a copy of the jaxpr, which is then
      // linear in its remaining inputs and transposes equation by equation.
      Jaxpr lj = *j;
      std::vector<Atom> sub(lj.vars.size());
      for (size_t v = 0; v < sub.size(); v++) sub[v] = Atom::of_var(int(v));
      size_t k = 0;
      lj.invars.clear();
      for (size_t i = 0; i < j->invars.size(); i++) {
        if (linear[i]) lj.invars.push_back(j->invars[i]);
        else sub[size_t(j->invars[i])] = lj.add_const(in[k++]);
      }
      auto read = [&](Atom& a) {
        if (a.is_var()) a = sub[size_t(a.var)];
      };
      // Equations of constants only (views of residuals that partial evaluation moved
      // into this call, and a checkpoint's recomputed primal values) are evaluated now, so
      // what remains is linear.
      std::vector<Eqn> linear_eqns;
      for (auto& e : lj.eqns) {
        bool all_const = !e.custom;
        for (auto& a : e.in) {
          read(a);
          all_const = all_const && !a.is_var();
        }
        if (!all_const && e.control && control_eval_known(e, lj, sub)) {
          linear_eqns.push_back(e);
          continue;
        }
        if (!all_const) {
          linear_eqns.push_back(e);
          continue;
        }
        std::vector<Array> vals;
        for (auto& a : e.in) vals.push_back(lj.consts[size_t(a.cst)]);
        std::vector<Array> r = e.call      ? bind_call(e.call, vals)
                               : e.control ? bind_control(e.control, vals)
                                           : std::vector<Array>{frontend::bind(e.prim, vals, e.params)};
        for (size_t o = 0; o < e.out.size(); o++) sub[size_t(e.out[o])] = lj.add_const(r[o]);
      }
      lj.eqns = std::move(linear_eqns);
      for (auto& a : lj.outs) read(a);
      std::vector<Array> cts(lj.outs.size());
      for (size_t i = 0; i < cts.size(); i++)
        if (has_ct[i]) cts[i] = in[k++];
      std::vector<Array> g = transpose_jaxpr(lj, cts);
      for (size_t i = 0; i < g.size(); i++)
        if (!g[i].valid()) g[i] = ops::zeros(lj.vars[size_t(lj.invars[i])], in.empty() ? default_device() : in[0].device());
      return g;
    });
  });
}

}  // namespace kiln::frontend
