// Pytree flattening, unflattening and mapping, and the accessors of kiln::Tree.
// Scalars flatten to weak float32 Arrays so every leaf of a flattened tree is an Array.
#include "frontend/pytree.h"

#include <variant>

namespace kiln {

struct Tree::Node {
  using Value = std::variant<std::monostate, Array, double, List, Dict>;
  Value v;
};

Tree::Tree(Array a) : n_(std::make_shared<const Node>(Node{Node::Value(std::in_place_type<Array>, std::move(a))})) {}
Tree::Tree(double x) : n_(std::make_shared<const Node>(Node{Node::Value(std::in_place_type<double>, x)})) {}
Tree::Tree(List l) : n_(std::make_shared<const Node>(Node{Node::Value(std::in_place_type<List>, std::move(l))})) {}
Tree::Tree(Dict d) : n_(std::make_shared<const Node>(Node{Node::Value(std::in_place_type<Dict>, std::move(d))})) {}
size_t Tree::index() const { return n_ ? n_->v.index() : 0; }

std::string Tree::kind() const {
  switch (index()) {
    case 0:
      return "None";
    case 1: {
      const Array& a = std::get<Array>(n_->v);
      if (!a.valid()) return "an empty Array handle";
      return "Array " + std::string(dtype_name(a.dtype())) + shape_str(a.shape());
    }
    case 2:
      return "scalar";
    case 3:
      return "list of " + std::to_string(list().size());
    default: {
      std::string s = "dict {";
      bool first = true;
      for (auto& [k, v] : dict()) {
        s += (first ? "" : ", ") + k;
        first = false;
      }
      return s + "}";
    }
  }
}

const Array& Tree::array() const {
  if (!is_array()) throw Error("Tree: expected an Array, got " + kind());
  return std::get<Array>(n_->v);
}
Array Tree::as_array() const {
  if (is_scalar()) return Array(std::get<double>(n_->v));
  return array();
}
double Tree::scalar() const {
  if (!is_scalar()) throw Error("Tree: expected a scalar, got " + kind());
  return std::get<double>(n_->v);
}
const Tree::List& Tree::list() const {
  if (!is_list()) throw Error("Tree: expected a list, got " + kind());
  return std::get<List>(n_->v);
}
const Tree::Dict& Tree::dict() const {
  if (!is_dict()) throw Error("Tree: expected a dict, got " + kind());
  return std::get<Dict>(n_->v);
}
const Tree& Tree::operator[](size_t i) const {
  const List& l = list();
  if (i >= l.size())
    throw Error("Tree: index " + std::to_string(i) + " is out of range for a " + kind());
  return l[i];
}
const Tree& Tree::operator[](const std::string& key) const {
  const Dict& d = dict();
  auto it = d.find(key);
  if (it == d.end()) throw Error("Tree: no key '" + key + "' in " + kind());
  return it->second;
}
size_t Tree::size() const { return is_list() ? list().size() : dict().size(); }

bool TreeDef::operator==(const TreeDef& o) const {
  return kind == o.kind && keys == o.keys && children == o.children;
}

std::string TreeDef::str() const {
  switch (kind) {
    case Kind::None:
      return "None";
    case Kind::Leaf:
      return "*";
    case Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < children.size(); i++) s += (i ? ", " : "") + children[i].str();
      return s + "]";
    }
    case Kind::Dict: {
      std::string s = "{";
      for (size_t i = 0; i < children.size(); i++)
        s += (i ? ", " : "") + keys[i] + ": " + children[i].str();
      return s + "}";
    }
  }
  return "?";
}

namespace {
TreeDef flatten_into(const Tree& t, std::vector<Array>& leaves) {
  TreeDef d;
  size_t before = leaves.size();
  if (t.is_none()) {
    d.kind = TreeDef::Kind::None;
  } else if (t.is_leaf()) {
    d.kind = TreeDef::Kind::Leaf;
    Array a = t.as_array();
    if (!a.valid()) throw Error("pytree: got an empty Array handle as a leaf, expected an array");
    leaves.push_back(a);
  } else if (t.is_list()) {
    d.kind = TreeDef::Kind::List;
    for (auto& c : t.list()) d.children.push_back(flatten_into(c, leaves));
  } else {
    d.kind = TreeDef::Kind::Dict;
    for (auto& [k, c] : t.dict()) {
      d.keys.push_back(k);
      d.children.push_back(flatten_into(c, leaves));
    }
  }
  d.num_leaves = leaves.size() - before;
  return d;
}

Tree build(const TreeDef& d, const std::vector<Array>& leaves, size_t& pos) {
  switch (d.kind) {
    case TreeDef::Kind::None:
      return Tree();
    case TreeDef::Kind::Leaf:
      return Tree(leaves[pos++]);
    case TreeDef::Kind::List: {
      Tree::List l;
      for (auto& c : d.children) l.push_back(build(c, leaves, pos));
      return Tree(std::move(l));
    }
    case TreeDef::Kind::Dict: {
      Tree::Dict m;
      for (size_t i = 0; i < d.children.size(); i++)
        m[d.keys[i]] = build(d.children[i], leaves, pos);
      return Tree(std::move(m));
    }
  }
  return Tree();
}
}  // namespace

std::pair<std::vector<Array>, TreeDef> tree_flatten(const Tree& t) {
  return with_name("tree_flatten", [&]() -> std::pair<std::vector<Array>, TreeDef> {
    std::vector<Array> leaves;
    TreeDef d = flatten_into(t, leaves);
    return {leaves, d};
  });
}

std::vector<Array> tree_leaves(const Tree& t) {
  return with_name("tree_leaves", [&]() -> std::vector<Array> { return tree_flatten(t).first; });
}

Tree tree_unflatten(const TreeDef& def, const std::vector<Array>& leaves) {
  return with_name("tree_unflatten", [&]() -> Tree {
    if (leaves.size() != def.num_leaves)
      throw Error("tree_unflatten: got " + std::to_string(leaves.size()) +
                  " leaves for the structure " + def.str() + ", expected " +
                  std::to_string(def.num_leaves));
    size_t pos = 0;
    return build(def, leaves, pos);
  });
}

Tree tree_map(const std::function<Array(const Array&)>& f, const Tree& t) {
  return with_name("tree_map", [&]() -> Tree {
    auto [leaves, def] = tree_flatten(t);
    for (auto& l : leaves) l = f(l);
    return tree_unflatten(def, leaves);
  });
}

Tree tree_map(const std::function<Array(const Array&, const Array&)>& f, const Tree& a,
              const Tree& b) {
  return with_name("tree_map", [&]() -> Tree {
    auto [la, da] = tree_flatten(a);
    auto [lb, db] = tree_flatten(b);
    if (!(da == db))
      throw Error("tree_map: the trees have different structures " + da.str() + " and " + db.str() +
                  ", expected equal ones");
    for (size_t i = 0; i < la.size(); i++) la[i] = f(la[i], lb[i]);
    return tree_unflatten(da, la);
  });
}

}  // namespace kiln
