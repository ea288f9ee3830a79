// The public batching API over pytrees: vmap with in_axes/out_axes tree prefixes, and the
// jacobians (jacfwd = vmap of jvp, jacrev = vmap of the pullback) and hessian built on it.
#include "frontend/jvp.h"
#include "frontend/linearize.h"
#include "frontend/rule_ops.h"
#include "frontend/transforms.h"
#include "frontend/transforms_internal.h"
#include "frontend/vmap.h"

namespace kiln {

using frontend::BatchDim;
using namespace frontend::detail;

namespace {

// Spreads an axis spec (a tree prefix of `def` with int or None leaves) over def's leaves.
void spread_axes(const char* op, const char* what, const Tree& spec, const TreeDef& def,
                 std::vector<BatchDim>& out) {
  if (spec.is_none()) {
    out.insert(out.end(), def.num_leaves, std::nullopt);
    return;
  }
  if (spec.is_scalar()) {
    double a = spec.scalar();
    if (a != double(int(a))) fail(op, what, " got the axis ", a, ", expected an integer or None");
    out.insert(out.end(), def.num_leaves, BatchDim(int(a)));
    return;
  }
  if (spec.is_array()) fail(op, what, " leaves must be an int axis or None, got ", spec.kind());
  bool ok = spec.is_list() ? def.kind == TreeDef::Kind::List && spec.size() == def.children.size()
                           : def.kind == TreeDef::Kind::Dict && spec.size() == def.children.size();
  if (ok && spec.is_dict()) {
    size_t i = 0;
    for (auto& [k, v] : spec.dict()) ok = ok && def.keys[i++] == k;
  }
  if (!ok)
    fail(op, what, " must be a tree prefix of the values it describes: got ", spec.kind(),
         " for a value of structure ", def.str());
  if (spec.is_list()) {
    for (size_t i = 0; i < spec.size(); i++) spread_axes(op, what, spec[i], def.children[i], out);
  } else {
    size_t i = 0;
    for (auto& [k, v] : spec.dict()) spread_axes(op, what, v, def.children[i++], out);
  }
}

}  // namespace

Fn vmap(const Fn& f, Tree in_axes, Tree out_axes) {
  return [f, in_axes, out_axes](const std::vector<Tree>& args) -> Tree {
    const char* op = "vmap";
    Restricted r = restrict_all(op, f, args);
    std::vector<BatchDim> dims;
    if (in_axes.is_list()) {
      if (in_axes.size() != args.size())
        fail(op, "in_axes has ", in_axes.size(), " entries but the function was called with ",
             args.size(),
             " arguments, expected one entry per argument (or a single int/None for all)");
      for (size_t i = 0; i < args.size(); i++)
        spread_axes(op, "in_axes", in_axes[i], r.defs[i], dims);
    } else if (in_axes.is_dict()) {
      fail(op, "in_axes must be an int, None or a list with one entry per argument, got ",
           in_axes.kind());
    } else {
      for (auto& d : r.defs) spread_axes(op, "in_axes", in_axes, d, dims);
    }
    std::optional<int64_t> size;
    size_t size_leaf = 0;
    for (size_t i = 0; i < dims.size(); i++) {
      if (!dims[i]) continue;
      const Array& x = r.leaves[i];
      int a = *dims[i], nd = x.ndim();
      if (a < -nd || a >= nd)
        fail(op, "in_axes ", a, " is out of range for argument leaf ", i, " of shape ",
             shape_str(x.shape()), ", expected -", nd, " <= axis < ", nd);
      dims[i] = a < 0 ? a + nd : a;
      int64_t n = x.shape()[size_t(*dims[i])];
      if (size && *size != n)
        fail_as(ErrorKind::Type, op, "got inconsistent sizes for the mapped axis: leaf ", size_leaf, " has size ",
             *size, " and leaf ", i, " (shape ", shape_str(x.shape()), ", axis ", *dims[i],
             ") has size ", n, ", expected equal sizes");
      if (!size) {
        size = n;
        size_leaf = i;
      }
    }
    if (!size) fail(op, "needs at least one mapped argument, got in_axes None for every argument");
    auto [vals, bdims] = frontend::vmap_flat(r.fn, r.leaves, dims, *size);
    std::vector<BatchDim> outd;
    spread_axes(op, "out_axes", out_axes, *r.out_def, outd);
    for (size_t i = 0; i < vals.size(); i++) {
      if (!outd[i]) {
        if (bdims[i])
          fail(op, "out_axes is None for output leaf ", i,
               ", but that output depends on the mapped axis");
        continue;
      }
      int nd = vals[i].ndim() + (bdims[i] ? 0 : 1);
      int a = *outd[i];
      if (a < -nd || a >= nd)
        fail(op, "out_axes ", a, " is out of range for an output of rank ", nd);
      vals[i] = frontend::move_batch_axis(vals[i], bdims[i], a < 0 ? a + nd : a, *size);
    }
    return tree_unflatten(*r.out_def, vals);
  };
}

ArrayFn vmap(const ArrayFn& f, int in_axis, int out_axis) {
  Fn g = vmap([f](const std::vector<Tree>& a) { return Tree(f(a.at(0).as_array())); },
              Tree(in_axis), Tree(out_axis));
  return [g](const Array& x) { return g({x}).as_array(); };
}

namespace {

using frontend::ops::cast;
using frontend::ops::reshape;

// The n x n identity rows, reshaped to [n, shape...], of x's dtype: the basis of its space.
Array basis(const Array& x) {
  const int64_t n = x.size();
  Shape sq{n, n};
  Array eye = frontend::ops::binary(frontend::Prim::CmpEq, frontend::ops::iota(sq, 0, x.device()),
                                    frontend::ops::iota(sq, 1, x.device()));
  Shape s{n};
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return reshape(cast(eye, x.dtype(), false), s);
}

// Assembles blocks[o][i] (shape out_o + in_i) into the output tree of input trees.
Tree assemble(const Restricted& r, const std::vector<std::vector<Array>>& blocks, bool tuple) {
  std::vector<Array> per_out;
  std::vector<Tree> trees;
  for (auto& row : blocks) trees.push_back(pack_args(r, row, tuple));
  // The output structure with each leaf replaced by its tree of blocks.
  std::function<Tree(const TreeDef&, size_t&)> build = [&](const TreeDef& d, size_t& pos) -> Tree {
    switch (d.kind) {
      case TreeDef::Kind::None:
        return Tree();
      case TreeDef::Kind::Leaf:
        return trees[pos++];
      case TreeDef::Kind::List: {
        Tree::List l;
        for (auto& c : d.children) l.push_back(build(c, pos));
        return Tree(l);
      }
      case TreeDef::Kind::Dict: {
        Tree::Dict m;
        for (size_t i = 0; i < d.children.size(); i++) m[d.keys[i]] = build(d.children[i], pos);
        return Tree(m);
      }
    }
    return Tree();
  };
  size_t pos = 0;
  return build(*r.out_def, pos);
}

// [n, rest...] -> rest + in_shape with n = prod(in_shape), moving the basis axis last.
Array to_block(const Array& t, const Shape& lead, const Shape& trail, bool basis_first_is_trail) {
  Shape s = lead;
  s.insert(s.end(), trail.begin(), trail.end());
  if (!basis_first_is_trail) return reshape(t, s);
  // t: [prod(trail), lead...] -> [lead..., trail...]
  Array m = frontend::ops::moveaxis(t, 0, t.ndim() - 1);
  return reshape(m, s);
}

}  // namespace

Fn jacfwd(const Fn& f, Argnums argnums) {
  return [f, argnums](const std::vector<Tree>& args) -> Tree {
    std::vector<int> nums = normalize_argnums("jacfwd", argnums, args.size());
    Restricted r = restrict_args("jacfwd", f, args, nums);
    const size_t nin = r.leaves.size();
    std::vector<std::vector<Array>> cols(nin);  // cols[i][o]
    size_t nout = 0;
    for (size_t i = 0; i < nin; i++) {
      const Array& x = r.leaves[i];
      if (!is_float(x.dtype()))
        fail_as(ErrorKind::Type, "jacfwd", "requires floating-point inputs, got ", dtype_name(x.dtype()));
      auto push = [&r, i, nin](const std::vector<Array>& e) {
        std::vector<Array> ts(nin);
        ts[i] = e[0];
        auto [o, t] = frontend::jvp_flat(r.fn, r.leaves, ts);
        for (size_t k = 0; k < t.size(); k++) t[k] = frontend::instantiate(t[k], o[k]);
        return t;
      };
      auto [ts, dims] = frontend::vmap_flat(push, {basis(x)}, {BatchDim(0)}, x.size());
      nout = ts.size();
      for (size_t o = 0; o < ts.size(); o++) {
        Array t = frontend::move_batch_axis(ts[o], dims[o], 0, x.size());
        Shape os(t.shape().begin() + 1, t.shape().end());
        cols[i].push_back(to_block(t, os, x.shape(), true));
      }
    }
    if (nin == 0) {
      r.fn(r.leaves);
      nout = r.out_def->num_leaves;
    }
    std::vector<std::vector<Array>> blocks(nout, std::vector<Array>(nin));
    for (size_t i = 0; i < nin; i++)
      for (size_t o = 0; o < nout; o++) blocks[o][i] = cols[i][o];
    return assemble(r, blocks, argnums.tuple);
  };
}

Fn jacrev(const Fn& f, Argnums argnums) {
  return [f, argnums](const std::vector<Tree>& args) -> Tree {
    std::vector<int> nums = normalize_argnums("jacrev", argnums, args.size());
    Restricted r = restrict_args("jacrev", f, args, nums);
    for (auto& x : r.leaves)
      if (!is_float(x.dtype()))
        fail_as(ErrorKind::Type, "jacrev", "requires floating-point inputs, got ", dtype_name(x.dtype()));
    auto [outs, pull] = frontend::vjp_flat(r.fn, r.leaves);
    const size_t nout = outs.size(), nin = r.leaves.size();
    std::vector<std::vector<Array>> blocks(nout);
    for (size_t o = 0; o < nout; o++) {
      const Array& y = outs[o];
      if (!is_float(y.dtype()))
        fail("jacrev", "requires floating-point outputs, got ", dtype_name(y.dtype()));
      auto pb = [pull = pull, o, nout](const std::vector<Array>& e) {
        std::vector<Array> cts(nout);
        cts[o] = e[0];
        return pull(cts);
      };
      auto [gs, dims] = frontend::vmap_flat(pb, {basis(y)}, {BatchDim(0)}, y.size());
      for (size_t i = 0; i < nin; i++) {
        Array g = frontend::move_batch_axis(gs[i], dims[i], 0, y.size());
        blocks[o].push_back(to_block(g, y.shape(), r.leaves[i].shape(), false));
      }
    }
    return assemble(r, blocks, argnums.tuple);
  };
}

Fn hessian(const Fn& f, Argnums argnums) {
  // Errors name hessian, not the jacfwd/jacrev it is made of.
  Fn h = jacfwd(jacrev(f, argnums), argnums);
  return [h](const std::vector<Tree>& args) { return with_name("hessian", [&] { return h(args); }); };
}

namespace {
ArrayFn on_arrays(Fn (*t)(const Fn&, Argnums), const ArrayFn& f) {
  Fn g = t([f](const std::vector<Tree>& a) { return Tree(f(a.at(0).as_array())); }, 0);
  return [g](const Array& x) { return g({x}).as_array(); };
}
}  // namespace

ArrayFn jacfwd(const ArrayFn& f) { return on_arrays(jacfwd, f); }
ArrayFn jacrev(const ArrayFn& f) { return on_arrays(jacrev, f); }
ArrayFn hessian(const ArrayFn& f) { return on_arrays(hessian, f); }

}  // namespace kiln
