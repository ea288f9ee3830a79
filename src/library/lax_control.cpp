// kiln::lax control flow over pytrees: flattens carries, xs and operands, checks that the
// bodies keep the carry's structure, and calls the flat primitives (frontend/control.h).
#include "library/lax_control.h"

#include <memory>

#include "frontend/control.h"
#include "frontend/rule_ops.h"

namespace kiln::lax {


namespace {

std::string device_of(const std::vector<Array>& xs) { return xs.empty() ? default_device() : xs[0].device(); }

std::vector<Array> flat_checked(const char* op, const char* what, const Tree& t, const TreeDef& want) {
  auto [leaves, def] = tree_flatten(t);
  if (!(def == want))
    fail(op, "the body returned a ", what, " of structure ", def.str(), ", expected ", want.str(),
         " (the structure of the initial carry)");
  return leaves;
}

Array int_scalar(const Array& x, const char* op) {
  if (x.ndim() != 0) fail(op, "got a bound of shape ", shape_str(x.shape()), ", expected a scalar");
  if (!is_int(x.dtype()) && x.dtype() != DType::Bool)
    fail(op, "got a bound of dtype ", dtype_name(x.dtype()), ", expected an integer");
  return x.dtype() == DType::Int32 ? x : frontend::ops::cast(x, DType::Int32, false);
}

}  // namespace

std::pair<Tree, Tree> scan(const ScanFn& f, const Tree& init, const Tree& xs, std::optional<int64_t> length,
                           bool reverse, int unroll) {
  auto [carry, cdef] = tree_flatten(init);
  auto [xl, xdef] = tree_flatten(xs);
  int64_t n = -1;
  if (length) n = *length;
  for (auto& x : xl) {
    if (x.ndim() == 0) fail("scan", "got a scalar in xs, expected arrays with a leading axis to scan over");
    if (n < 0) n = x.shape(0);
    else if (x.shape(0) != n)
      fail("scan", "xs has leading axes of lengths ", n, " and ", x.shape(0), ", expected one length");
  }
  if (n < 0) fail("scan", "got no xs and no length, expected one of them");
  auto ydef = std::make_shared<TreeDef>();
  const size_t nk = carry.size();
  TreeDef cd = cdef, xd = xdef;
  ArraysFn body = [&f, nk, cd, xd, ydef](const std::vector<Array>& in) {
    Tree c = tree_unflatten(cd, std::vector<Array>(in.begin(), in.begin() + long(nk)));
    Tree x = tree_unflatten(xd, std::vector<Array>(in.begin() + long(nk), in.end()));
    auto [c2, y] = f(c, x);
    std::vector<Array> out = flat_checked("scan", "carry", c2, cd);
    auto [yl, yd] = tree_flatten(y);
    *ydef = yd;
    out.insert(out.end(), yl.begin(), yl.end());
    return out;
  };
  std::vector<Array> r = frontend::scan_flat(body, carry, xl, n, reverse, unroll);
  return {tree_unflatten(cdef, std::vector<Array>(r.begin(), r.begin() + long(nk))),
          tree_unflatten(*ydef, std::vector<Array>(r.begin() + long(nk), r.end()))};
}

Tree while_loop(const std::function<Array(const Tree&)>& cond, const std::function<Tree(const Tree&)>& body,
                const Tree& init) {
  auto [carry, cdef] = tree_flatten(init);
  TreeDef cd = cdef;
  ArraysFn c = [&cond, cd](const std::vector<Array>& in) { return std::vector<Array>{cond(tree_unflatten(cd, in))}; };
  ArraysFn b = [&body, cd](const std::vector<Array>& in) {
    return flat_checked("while_loop", "carry", body(tree_unflatten(cd, in)), cd);
  };
  return tree_unflatten(cdef, frontend::while_flat(c, b, carry));
}

Tree fori_loop(int64_t lower, int64_t upper, const ForiFn& body, const Tree& init) {
  const std::string dev = device_of(tree_leaves(init));
  Tree start = Tree(Tree::List{frontend::ops::filled({}, DType::Int32, double(lower), dev), init});
  auto step = [&body, dev](const Tree& c, const Tree&) {
    const Array& i = c[0].array();
    Tree next = Tree(Tree::List{frontend::ops::add(i, frontend::ops::filled({}, DType::Int32, 1, dev)), body(i, c[1])});
    return std::pair<Tree, Tree>{next, Tree()};
  };
  return scan(step, start, Tree(), std::max<int64_t>(upper - lower, 0)).first[1];
}

Tree fori_loop(const Array& lower, const Array& upper, const ForiFn& body, const Tree& init) {
  Array lo = int_scalar(lower, "fori_loop"), hi = int_scalar(upper, "fori_loop");
  Tree start = Tree(Tree::List{lo, hi, init});
  auto c = [](const Tree& s) { return frontend::ops::binary(frontend::Prim::CmpLt, s[0].array(), s[1].array()); };
  auto b = [&body](const Tree& s) {
    const Array& i = s[0].array();
    Array one = frontend::ops::filled({}, DType::Int32, 1, i.device());
    return Tree(Tree::List{frontend::ops::add(i, one), s[1], body(i, s[2])});
  };
  return while_loop(c, b, start)[2];
}

Tree switch_(const Array& index, const std::vector<BranchFn>& branches, const std::vector<Tree>& operands) {
  if (branches.empty()) fail("switch", "expected at least one branch");
  Array idx = int_scalar(index, "switch");
  auto [ops, odef] = tree_flatten(Tree(Tree::List(operands)));
  auto outdef = std::make_shared<std::optional<TreeDef>>();
  std::vector<ArraysFn> fs;
  TreeDef od = odef;
  for (size_t b = 0; b < branches.size(); b++)
    fs.push_back([&branches, b, od, outdef](const std::vector<Array>& in) {
      auto [leaves, def] = tree_flatten(branches[b](tree_unflatten(od, in).list()));
      if (*outdef && !(**outdef == def))
        fail("cond", "branch ", b, " returned a tree of structure ", def.str(), " and branch 0 ", (*outdef)->str(),
             ", expected branches of one output structure");
      *outdef = def;
      return leaves;
    });
  return tree_unflatten(**outdef, frontend::cond_flat(idx, fs, ops));
}

Tree cond(const Array& pred, const BranchFn& true_fn, const BranchFn& false_fn, const std::vector<Tree>& operands) {
  if (pred.ndim() != 0) fail("cond", "the predicate has shape ", shape_str(pred.shape()), ", expected a scalar");
  Array p = pred.dtype() == DType::Bool ? pred : frontend::ops::binary(frontend::Prim::CmpNe, pred, frontend::ops::full_like(pred, 0));
  return switch_(frontend::ops::cast(p, DType::Int32, false), {false_fn, true_fn}, operands);
}

Tree map(const std::function<Tree(const Tree&)>& f, const Tree& xs) {
  auto step = [&f](const Tree&, const Tree& x) { return std::pair<Tree, Tree>{Tree(), f(x)}; };
  return with_name("map", [&] { return scan(step, Tree(), xs).second; });
}

std::vector<Array> scan_flat(const ArraysFn& body, const std::vector<Array>& init, const std::vector<Array>& xs,
                             int64_t length, bool reverse, int unroll) {
  return frontend::scan_flat(body, init, xs, length, reverse, unroll);
}
std::vector<Array> while_flat(const ArraysFn& cond, const ArraysFn& body, const std::vector<Array>& init) {
  return frontend::while_flat(cond, body, init);
}
std::vector<Array> switch_flat(const Array& index, const std::vector<ArraysFn>& branches,
                               const std::vector<Array>& operands) {
  return frontend::cond_flat(int_scalar(index, "switch"), branches, operands);
}

}  // namespace kiln::lax
