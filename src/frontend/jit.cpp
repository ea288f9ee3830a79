// jit: the signature cache and tracing into a jaxpr (JaxprTrace, as linearize records);
// each signature's jaxpr becomes a call (call.h), compiled when eager, transformed when traced.
#include "frontend/jit.h"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "frontend/call.h"
#include "frontend/jit_program.h"
#include "frontend/linearize.h"
#include "frontend/transforms_internal.h"

namespace kiln {

using namespace frontend;

namespace {

bool any_traced(const std::vector<Array>& leaves) {
  for (auto& l : leaves)
    if (tracer_of(l)) return true;
  return false;
}

// The hashable text of a static argument (JAX requires static arguments to be hashable),
// appended to the key. Not through an ostringstream: this runs on every call (an ONNX
// session's static inputs are one), and each stream constructs a locale.
void static_key(const char* op, size_t argnum, const Tree& t, std::string& key) {
  if (t.is_none()) key += 'N';
  else if (t.is_scalar()) {
    char digits[32];  // %.17g: the double round-trips, so equal keys mean equal values
    key += 's';
    key.append(digits, size_t(std::snprintf(digits, sizeof digits, "%.17g", t.scalar())));
  } else if (t.is_list()) {
    key += '[';
    for (auto& c : t.list()) static_key(op, argnum, c, key), key += ',';
    key += ']';
  } else if (t.is_dict()) {
    key += '{';
    for (auto& [k, c] : t.dict()) key += k, key += ':', static_key(op, argnum, c, key), key += ',';
    key += '}';
  } else {
    fail(op, "static argument ", argnum, " holds ", t.kind(),
         ", expected a hashable value (a scalar, None, or a list/dict of them)");
  }
}

// Appends the signature of a dynamic argument to `key` and its leaves to `leaves`: the tree's
// structure in TreeDef::str()'s notation with each leaf's dtype, weak flag and shape in place
// of its "*". Appending to one string keeps this cheap; it runs on every call, and a model's
// weight dict has hundreds of leaves.
void dynamic_key(const Tree& t, std::vector<Array>& leaves, std::string& key) {
  if (t.is_none()) {
    key += "None";
  } else if (t.is_leaf()) {
    leaves.push_back(t.is_array() ? t.array() : t.as_array());
    const Array& a = leaves.back();
    if (!a.valid()) throw Error("pytree: got an empty Array handle as a leaf, expected an array");
    key += '*';
    append_decimal(key, int(a.dtype()));
    if (a.weak_type()) key += 'w';
    key += '[';
    for (int64_t d : a.shape()) append_decimal(key, d), key += ',';
    key += ']';
  } else if (t.is_list()) {
    key += '[';
    for (auto& c : t.list()) dynamic_key(c, leaves, key), key += ", ";
    key += ']';
  } else {
    key += '{';
    for (auto& [k, c] : t.dict()) key += k, key += ": ", dynamic_key(c, leaves, key), key += ", ";
    key += '}';
  }
}

std::vector<bool> static_mask(const char* op, const std::vector<int>& nums, size_t nargs) {
  std::vector<bool> m(nargs, false);
  for (int i : nums) {
    int k = i < 0 ? i + int(nargs) : i;
    if (k < 0 || k >= int(nargs))
      fail(op, "static_argnums ", i, " is out of range for a function called with ", nargs, " arguments");
    m[size_t(k)] = true;
  }
  return m;
}

struct Traced {
  std::shared_ptr<Jaxpr> jaxpr;
  TreeDef out_def;
  bool saw_custom_rule = false;
};

// Traces f with the dynamic arguments' leaves replaced by jaxpr inputs.
Traced trace(const char* op, const Fn& f, const std::vector<Tree>& args, const std::vector<bool>& is_static) {
  std::vector<Tree> dyn;
  for (size_t i = 0; i < args.size(); i++)
    if (!is_static[i]) dyn.push_back(args[i]);
  frontend::detail::FlatArgs flat = frontend::detail::flatten_args(dyn);
  auto t = std::make_shared<JaxprTrace>();
  Traced r;
  r.jaxpr = t->jaxpr;
  TraceScope scope(t);
  std::vector<Array> in;
  for (auto& l : flat.leaves) in.push_back(t->new_arg({l.shape(), l.dtype(), l.weak_type()}, l.device()));
  std::vector<Tree> trees = frontend::detail::unflatten_args(flat.defs, in), full = args;
  for (size_t i = 0, k = 0; i < args.size(); i++)
    if (!is_static[i]) full[i] = trees[k++];
  Tree out = f(full);
  std::vector<Array> outs;
  try {
    std::tie(outs, r.out_def) = tree_flatten(out);
  } catch (const Error&) {
    fail(op, "the function returned ", out.kind(), " containing an empty Array handle, expected arrays");
  }
  for (auto& o : outs) {
    top_trace({o});  // throws if o escaped an inner transformation
    t->jaxpr->outs.push_back(t->atom_of(o));
  }
  r.saw_custom_rule = t->saw_custom_rule;
  return r;
}

bool has_traced_consts(const Jaxpr& j) {
  for (auto& c : j.consts)
    if (tracer_of(c)) return true;
  return false;
}

// One traced signature: the call (which caches its compiled programs per argument layout
// and its transformed jaxprs) and the output structure.
struct Entry {
  CallRef call;
  TreeDef out_def;
  bool custom_rules = false;  // f uses custom_jvp/vjp: transformations must see f itself
};

// A jitted function's cache, shared by the copies of its Fn.
struct JitState {
  Fn f;
  std::vector<int> static_argnums;
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const Entry>> cache;
};

// Eager arguments run the call's compiled program; traced ones (inside grad, vmap, jvp)
// bind the call primitive, whose rules derive compiled calls from the same trace; inside
// another jit's trace the call is inlined (JaxprTrace::process_call).
Tree call_jitted(JitState& s, const std::vector<Tree>& args) {
  const char* op = "jit";
  std::vector<bool> is_static = static_mask(op, s.static_argnums, args.size());
  std::string key;
  std::vector<Array> leaves;
  for (size_t i = 0; i < args.size(); i++) {
    if (is_static[i]) {
      key += 'S';
      static_key(op, i, args[i], key);
      continue;
    }
    key += 'D';
    dynamic_key(args[i], leaves, key);
  }
  const std::string device = leaves.empty() ? default_device() : leaves[0].device();
  for (auto& l : leaves)
    if (l.device() != device)
      fail(op, "got arguments on devices ", device, " and ", l.device(), ", expected one device");
  key += '#' + device;
  std::shared_ptr<const Entry> c;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.cache.find(key);
    if (it != s.cache.end()) c = it->second;
  }
  if (!c) {
    Traced t = trace(op, s.f, args, is_static);
    if (has_traced_consts(*t.jaxpr)) {
      // f closes over values of an enclosing transformation: evaluate the trace through
      // bind so that transformation sees it (not cached: the tracers are per call).
      return tree_unflatten(t.out_def, eval_jaxpr(*t.jaxpr, leaves));
    }
    auto e = std::make_shared<Entry>();
    e->call = make_call(t.jaxpr, device, "jit");
    e->out_def = t.out_def;
    e->custom_rules = t.saw_custom_rule;
    std::lock_guard<std::mutex> lock(s.mu);
    c = s.cache.emplace(key, e).first->second;
  }
  // The dynamic arguments' leaves (static arguments are hashable values, never arrays).
  if (c->custom_rules && any_traced(leaves)) return s.f(args);
  return tree_unflatten(c->out_def, bind_call(c->call, leaves));
}

}  // namespace

std::string ClosedJaxpr::str() const { return jaxpr_text(*jaxpr); }

ClosedJaxpr make_jaxpr(const Fn& f, const std::vector<Tree>& args, const std::vector<int>& static_argnums) {
  return with_name("make_jaxpr", [&]() -> ClosedJaxpr {
    Traced t = trace("make_jaxpr", f, args, static_mask("make_jaxpr", static_argnums, args.size()));
    return {t.jaxpr};
  });
}

ClosedJaxpr make_jaxpr(const ArrayFn& f, const Array& x) {
  return with_name("make_jaxpr", [&]() -> ClosedJaxpr { return make_jaxpr([f](const std::vector<Tree>& a) { return Tree(f(a.at(0).as_array())); }, {Tree(x)}); });
}

Fn jit(const Fn& f, const std::vector<int>& static_argnums) {
  auto s = std::make_shared<JitState>();
  s->f = f;
  s->static_argnums = static_argnums;
  return [s](const std::vector<Tree>& args) { return with_name("jit", [&] { return call_jitted(*s, args); }); };
}

ArrayFn jit(const ArrayFn& f) {
  Fn g = jit([f](const std::vector<Tree>& a) { return Tree(f(a.at(0).as_array())); });
  return [g](const Array& x) { return g({x}).as_array(); };
}

}  // namespace kiln
