// The public differentiation API over pytrees: jvp, linearize, vjp, grad, value_and_grad,
// stop_gradient, custom_jvp and custom_vjp, on top of jvp_flat, linearize_flat, vjp_flat.
#include "frontend/transforms.h"

#include "frontend/jaxpr.h"
#include "frontend/jvp.h"
#include "frontend/linearize.h"
#include "frontend/rule_ops.h"
#include "frontend/transforms_internal.h"

namespace kiln {

using frontend::ArraysFn;
using namespace frontend::detail;

namespace frontend::detail {

FlatArgs flatten_args(const std::vector<Tree>& args) {
  FlatArgs r;
  for (auto& a : args) {
    auto [leaves, def] = tree_flatten(a);
    r.leaves.insert(r.leaves.end(), leaves.begin(), leaves.end());
    r.defs.push_back(def);
  }
  return r;
}

std::vector<Tree> unflatten_args(const std::vector<TreeDef>& defs,
                                 const std::vector<Array>& leaves) {
  std::vector<Tree> out;
  size_t pos = 0;
  for (auto& d : defs) {
    out.push_back(tree_unflatten(d, std::vector<Array>(leaves.begin() + long(pos),
                                                       leaves.begin() + long(pos + d.num_leaves))));
    pos += d.num_leaves;
  }
  return out;
}

std::vector<int> normalize_argnums(const char* op, const Argnums& a, size_t nargs) {
  std::vector<int> r;
  if (a.nums.empty())
    fail(op, "got an empty argnums, expected at least one argument to differentiate");
  for (int i : a.nums) {
    int k = i < 0 ? i + int(nargs) : i;
    if (k < 0 || k >= int(nargs))
      fail(op, "argnums ", i, " is out of range for a function called with ", nargs, " argument",
           nargs == 1 ? "" : "s", ", expected -", nargs, " <= argnums < ", nargs);
    r.push_back(k);
  }
  return r;
}

Restricted restrict_args(const char* op, const Fn& f, const std::vector<Tree>& args,
                         const std::vector<int>& argnums) {
  Restricted r;
  r.out_def = std::make_shared<TreeDef>();
  for (int i : argnums) {
    auto [leaves, def] = tree_flatten(args[size_t(i)]);
    r.offsets.push_back(r.leaves.size());
    r.leaves.insert(r.leaves.end(), leaves.begin(), leaves.end());
    r.defs.push_back(def);
  }
  auto out_def = r.out_def;
  auto defs = r.defs;
  std::string name = op;
  r.fn = [f, args, argnums, defs, out_def, name](const std::vector<Array>& leaves) {
    std::vector<Tree> full = args;
    std::vector<Tree> chosen = unflatten_args(defs, leaves);
    for (size_t k = 0; k < argnums.size(); k++) full[size_t(argnums[k])] = chosen[k];
    Tree out = f(full);
    std::vector<Array> flat;
    try {
      std::tie(flat, *out_def) = tree_flatten(out);
    } catch (const Error&) {
      fail(name, "the function returned ", out.kind(),
           " containing an empty Array handle, expected arrays");
    }
    return flat;
  };
  return r;
}

Restricted restrict_all(const char* op, const Fn& f, const std::vector<Tree>& args) {
  std::vector<int> all;
  for (size_t i = 0; i < args.size(); i++) all.push_back(int(i));
  return restrict_args(op, f, args, all);
}

Tree pack_args(const Restricted& r, const std::vector<Array>& leaves, bool tuple) {
  std::vector<Tree> trees = unflatten_args(r.defs, leaves);
  if (!tuple) return trees[0];
  return Tree(Tree::List(trees.begin(), trees.end()));
}

Array zeros_of(const Array& like) { return frontend::instantiate(Array(), like); }

}  // namespace frontend::detail

namespace {

Fn from_array_fn(const ArrayFn& f) {
  return [f](const std::vector<Tree>& args) { return Tree(f(args.at(0).as_array())); };
}

void check_tangent(const char* op, size_t i, const Array& p, const Array& t) {
  if (p.shape() != t.shape() || (is_float(p.dtype()) && p.dtype() != t.dtype()))
    fail(op, "primal and tangent leaves ", i, " do not match: got primal ", dtype_name(p.dtype()),
         shape_str(p.shape()), " and tangent ", dtype_name(t.dtype()), shape_str(t.shape()),
         ", expected equal shapes and dtypes");
}

}  // namespace

std::pair<Tree, Tree> jvp(const Fn& f, const std::vector<Tree>& primals,
                          const std::vector<Tree>& tangents) {
  return with_name("jvp", [&]() -> std::pair<Tree, Tree> {
    if (primals.size() != tangents.size())
      fail("jvp", "got ", primals.size(), " primals and ", tangents.size(),
           " tangents, expected equal numbers");
    FlatArgs p = flatten_args(primals), t = flatten_args(tangents);
    for (size_t i = 0; i < p.defs.size(); i++)
      if (!(p.defs[i] == t.defs[i]))
        fail("jvp", "primal and tangent argument ", i, " have different structures ", p.defs[i].str(),
             " and ", t.defs[i].str());
    for (size_t i = 0; i < p.leaves.size(); i++) check_tangent("jvp", i, p.leaves[i], t.leaves[i]);
    Restricted r = restrict_all("jvp", f, primals);
    auto [outs, touts] = frontend::jvp_flat(r.fn, p.leaves, t.leaves);
    for (size_t i = 0; i < outs.size(); i++) touts[i] = frontend::instantiate(touts[i], outs[i]);
    return {tree_unflatten(*r.out_def, outs), tree_unflatten(*r.out_def, touts)};
  });
}

std::pair<Array, Array> jvp(const ArrayFn& f, const Array& x, const Array& t) {
  return with_name("jvp", [&]() -> std::pair<Array, Array> {
    auto [o, to] = jvp(from_array_fn(f), {x}, {t});
    return {o.as_array(), to.as_array()};
  });
}

std::pair<Tree, Fn> linearize(const Fn& f, const std::vector<Tree>& primals) {
  return with_name("linearize", [&]() -> std::pair<Tree, Fn> {
    Restricted r = restrict_all("linearize", f, primals);
    frontend::Linearized lin = frontend::linearize_flat(r.fn, r.leaves);
    auto jaxpr = lin.jaxpr;
    auto out_def = r.out_def;
    auto defs = r.defs;
    std::vector<Array> ps = r.leaves;
    Fn lin_fn = [jaxpr, out_def, defs, ps](const std::vector<Tree>& tangents) {
      FlatArgs t = flatten_args(tangents);
      if (t.leaves.size() != ps.size())
        fail("linearize", "the linear function got ", t.leaves.size(), " tangent leaves, expected ",
             ps.size());
      for (size_t i = 0; i < ps.size(); i++) check_tangent("linearize", i, ps[i], t.leaves[i]);
      return tree_unflatten(*out_def, frontend::eval_jaxpr(*jaxpr, t.leaves));
    };
    return {tree_unflatten(*r.out_def, lin.outs), lin_fn};
  });
}

std::pair<Array, ArrayFn> linearize(const ArrayFn& f, const Array& x) {
  return with_name("linearize", [&]() -> std::pair<Array, ArrayFn> {
    auto [o, l] = linearize(from_array_fn(f), {x});
    return {o.as_array(), [l = l](const Array& t) { return l({t}).as_array(); }};
  });
}

namespace {

// The output of f split into (differentiated leaves, aux tree) when has_aux.
struct AuxSplit {
  TreeDef out_def;  // the differentiated part
  TreeDef aux_def;
  size_t n_out = 0;
};

TreeDef check_aux(const char* op, const TreeDef& def, AuxSplit& s) {
  if (def.kind != TreeDef::Kind::List || def.children.size() != 2)
    fail(op, "has_aux requires the function to return Tree::List{output, aux}, got ", def.str());
  s.out_def = def.children[0];
  s.aux_def = def.children[1];
  s.n_out = s.out_def.num_leaves;
  return s.out_def;
}

}  // namespace

VjpResult vjp(const Fn& f, const std::vector<Tree>& primals, bool has_aux) {
  return with_name("vjp", [&]() -> VjpResult {
    const char* op = "vjp";
    Restricted r = restrict_all(op, f, primals);
    auto [outs, pull] = frontend::vjp_flat(r.fn, r.leaves);
    AuxSplit s;
    TreeDef out_def = *r.out_def;
    if (has_aux)
      out_def = check_aux(op, *r.out_def, s);
    else
      s.n_out = outs.size();
    VjpResult res;
    std::vector<Array> main(outs.begin(), outs.begin() + long(s.n_out));
    res.out = tree_unflatten(out_def, main);
    if (has_aux)
      res.aux =
          tree_unflatten(s.aux_def, std::vector<Array>(outs.begin() + long(s.n_out), outs.end()));
    auto defs = r.defs;
    size_t total = outs.size();
    res.pullback = [pull = pull, out_def, defs, main, total](const Tree& ct) {
      auto [cts, def] = tree_flatten(ct);
      if (!(def == out_def))
        fail("vjp", "the cotangent has structure ", def.str(), ", expected the output's ",
             out_def.str());
      for (size_t i = 0; i < cts.size(); i++)
        if (cts[i].shape() != main[i].shape())
          fail("vjp", "cotangent leaf ", i, " has shape ", shape_str(cts[i].shape()),
               ", expected the output's ", shape_str(main[i].shape()));
      cts.resize(total);  // aux outputs get zero cotangents
      return unflatten_args(defs, pull(cts));
    };
    return res;
  });
}

std::pair<Array, ArrayFn> vjp(const ArrayFn& f, const Array& x) {
  return with_name("vjp", [&]() -> std::pair<Array, ArrayFn> {
    VjpResult r = vjp(from_array_fn(f), {x});
    auto pb = r.pullback;
    return {r.out.as_array(), [pb](const Array& ct) { return pb(Tree(ct))[0].as_array(); }};
  });
}

namespace {

// value, gradient of the chosen arguments, aux: the core of grad and value_and_grad.
struct GradOut {
  Tree value, grads, aux;
};

GradOut grad_core(const char* op, const Fn& f, const Argnums& argnums, bool has_aux,
                  const std::vector<Tree>& args) {
  std::vector<int> nums = normalize_argnums(op, argnums, args.size());
  Restricted r = restrict_args(op, f, args, nums);
  for (size_t k = 0; k < nums.size(); k++)
    for (size_t i = 0; i < r.defs[k].num_leaves; i++) {
      const Array& x = r.leaves[r.offsets[k] + i];
      if (!is_float(x.dtype()))
        fail_as(ErrorKind::Type, op, "requires floating-point inputs, got ", dtype_name(x.dtype()),
             shape_str(x.shape()), " in argument ", nums[k],
             " (use vjp, or cast the input to a float dtype)");
    }
  auto [outs, pull] = frontend::vjp_flat(r.fn, r.leaves);
  AuxSplit s;
  TreeDef out_def = *r.out_def;
  if (has_aux) out_def = check_aux(op, *r.out_def, s);
  if (out_def.kind != TreeDef::Kind::Leaf)
    fail(op, "requires the function to return a scalar array, got ", out_def.str(),
         " (use vjp or jacrev)");
  const Array& y = outs[0];
  if (y.ndim() != 0)
    fail_as(ErrorKind::Type, op, "requires a scalar output, got an array of shape ", shape_str(y.shape()),
         " (use vjp or jacrev)");
  if (!is_float(y.dtype()))
    fail(op, "requires a floating-point output, got ", dtype_name(y.dtype()));
  std::vector<Array> cts(outs.size());
  cts[0] = frontend::ops::full_like(y, 1);
  GradOut g;
  g.grads = pack_args(r, pull(cts), argnums.tuple);
  g.value = Tree(y);
  if (has_aux) g.aux = tree_unflatten(s.aux_def, std::vector<Array>(outs.begin() + 1, outs.end()));
  return g;
}

}  // namespace

Fn grad(const Fn& f, Argnums argnums, bool has_aux) {
  return [f, argnums, has_aux](const std::vector<Tree>& args) -> Tree {
    GradOut g = grad_core("grad", f, argnums, has_aux, args);
    if (has_aux) return Tree(Tree::List{g.grads, g.aux});
    return g.grads;
  };
}

ArrayFn grad(const ArrayFn& f) {
  Fn g = grad(from_array_fn(f));
  return [g](const Array& x) { return g({x}).as_array(); };
}

Fn value_and_grad(const Fn& f, Argnums argnums, bool has_aux) {
  return [f, argnums, has_aux](const std::vector<Tree>& args) -> Tree {
    GradOut g = grad_core("value_and_grad", f, argnums, has_aux, args);
    Tree v = has_aux ? Tree(Tree::List{g.value, g.aux}) : g.value;
    return Tree(Tree::List{v, g.grads});
  };
}

std::function<std::pair<Array, Array>(const Array&)> value_and_grad(const ArrayFn& f) {
  Fn g = value_and_grad(from_array_fn(f));
  return [g](const Array& x) {
    Tree r = g({x});
    return std::pair{r[0].as_array(), r[1].as_array()};
  };
}

Array stop_gradient(const Array& x) {
  return with_name("stop_gradient", [&]() -> Array {
    if (!frontend::tracer_of(x)) return x;
    frontend::CustomJvp c;
    c.fun = [](const std::vector<Array>& a) { return a; };
    c.jvp = [](const std::vector<Array>& p, const std::vector<Array>&) {
      return std::pair{p, std::vector<Array>(p.size())};
    };
    return frontend::bind_custom_jvp(c, {x})[0];
  });
}

Tree stop_gradient(const Tree& x) {
  return with_name("stop_gradient", [&]() -> Tree { return tree_map([](const Array& a) { return stop_gradient(a); }, x); });
}

Fn custom_jvp(const Fn& f, const CustomJvpRule& rule) {
  return [f, rule](const std::vector<Tree>& args) -> Tree {
    Restricted r = restrict_all("custom_jvp", f, args);
    auto out_def = r.out_def;
    auto defs = r.defs;
    frontend::CustomJvp c;
    c.fun = r.fn;
    c.jvp = [rule, defs, out_def](const std::vector<Array>& ps, const std::vector<Array>& ts) {
      auto [o, t] = rule(unflatten_args(defs, ps), unflatten_args(defs, ts));
      auto [ol, od] = tree_flatten(o);
      auto [tl, td] = tree_flatten(t);
      if (!(od == td))
        fail("custom_jvp", "the rule returned outputs ", od.str(), " and tangents ", td.str(),
             ", expected equal structures");
      *out_def = od;
      return std::pair{ol, tl};
    };
    std::vector<Array> outs = frontend::bind_custom_jvp(c, r.leaves);
    return tree_unflatten(*out_def, outs);
  };
}

ArrayFn custom_jvp(const ArrayFn& f,
                   const std::function<std::pair<Array, Array>(const Array&, const Array&)>& rule) {
  Fn g =
      custom_jvp(from_array_fn(f), [rule](const std::vector<Tree>& p, const std::vector<Tree>& t) {
        auto [o, to] = rule(p[0].as_array(), t[0].as_array());
        return std::pair{Tree(o), Tree(to)};
      });
  return [g](const Array& x) { return g({x}).as_array(); };
}

Fn custom_vjp(const Fn& f, const CustomFwd& fwd, const CustomBwd& bwd) {
  return [f, fwd, bwd](const std::vector<Tree>& args) -> Tree {
    Restricted r = restrict_all("custom_vjp", f, args);
    auto out_def = r.out_def;
    auto defs = r.defs;
    auto res_def = std::make_shared<TreeDef>();
    // Only the arguments' types: capturing the (possibly traced) arguments themselves would
    // make a cycle through the linear Jaxpr that stores this rule.
    std::vector<std::pair<frontend::Aval, std::string>> arg_types;
    for (auto& l : r.leaves) arg_types.push_back({l.impl()->aval, l.device()});
    frontend::CustomVjp c;
    c.fun = r.fn;
    c.fwd = [fwd, defs, out_def, res_def](const std::vector<Array>& xs) {
      auto [o, res] = fwd(unflatten_args(defs, xs));
      auto [ol, od] = tree_flatten(o);
      auto [rl, rd] = tree_flatten(res);
      *out_def = od;
      *res_def = rd;
      return std::pair{ol, rl};
    };
    c.bwd = [bwd, defs, out_def, res_def, arg_types](const std::vector<Array>& res,
                                                     const std::vector<Array>& cts) {
      std::vector<Tree> g = bwd(tree_unflatten(*res_def, res), tree_unflatten(*out_def, cts));
      if (g.size() != defs.size())
        fail("custom_vjp", "bwd returned ", g.size(), " cotangents, expected one per argument (",
             defs.size(), ")");
      std::vector<Array> flat;
      size_t pos = 0;
      for (size_t i = 0; i < g.size(); i++) {
        if (g[i].is_none()) {
          // Zeros typed like this call's arguments (per example under vmap: their avals).
          for (size_t k = 0; k < defs[i].num_leaves; k++)
            flat.push_back(
                frontend::ops::zeros(arg_types[pos + k].first, arg_types[pos + k].second));
        } else {
          auto [gl, gd] = tree_flatten(g[i]);
          if (!(gd == defs[i]))
            fail("custom_vjp", "bwd returned a cotangent of structure ", gd.str(), " for argument ",
                 i, " of structure ", defs[i].str());
          flat.insert(flat.end(), gl.begin(), gl.end());
        }
        pos += defs[i].num_leaves;
      }
      return flat;
    };
    std::vector<Array> outs = frontend::bind_custom_vjp(c, r.leaves);
    return tree_unflatten(*out_def, outs);
  };
}

ArrayFn custom_vjp(const ArrayFn& f, const std::function<std::pair<Array, Tree>(const Array&)>& fwd,
                   const std::function<Array(const Tree&, const Array&)>& bwd) {
  Fn g = custom_vjp(
      from_array_fn(f),
      [fwd](const std::vector<Tree>& a) {
        auto [o, res] = fwd(a[0].as_array());
        return std::pair{Tree(o), res};
      },
      [bwd](const Tree& res, const Tree& ct) {
        return std::vector<Tree>{Tree(bwd(res, ct.as_array()))};
      });
  return [g](const Array& x) { return g({x}).as_array(); };
}

}  // namespace kiln
