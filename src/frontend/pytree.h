// kiln::Tree: the pytree type of the transformations: nested lists (tuples) and string-keyed
// dicts whose leaves are Arrays or scalars, with flatten, unflatten and map.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "frontend/array.h"

namespace kiln {

// A value of the transformations: None, an Array, a scalar, a list/tuple (one kind: C++
// has no separate tuple) or a dict (keys sorted, as JAX flattens dicts). Scalars are
// leaves that flatten to weak float32 Arrays, as Python floats do in JAX.
class Tree {
 public:
  using List = std::vector<Tree>;  // a list (or tuple) node
  using Dict = std::map<std::string, Tree>;  // a dict node, keys sorted

  Tree() = default;  // None
  Tree(std::nullopt_t) {}  // None
  Tree(Array a);   // an Array leaf
  Tree(double x);  // a scalar leaf (weak float32 when flattened)
  Tree(float x) : Tree(double(x)) {}  // a scalar leaf
  Tree(int x) : Tree(double(x)) {}    // a scalar leaf
  Tree(List l);    // a list node
  Tree(Dict d);    // a dict node

  bool is_none() const { return index() == 0; }  // None
  bool is_array() const { return index() == 1; }  // an Array leaf
  bool is_scalar() const { return index() == 2; }  // a scalar leaf
  bool is_leaf() const { return is_array() || is_scalar(); }  // an Array or scalar leaf
  bool is_list() const { return index() == 3; }  // a list node
  bool is_dict() const { return index() == 4; }  // a dict node

  // Accessors throw kiln::Error naming what the tree holds instead.
  const Array& array() const;  // the Array leaf
  Array as_array() const;      // an Array or scalar leaf, as an Array
  double scalar() const;
  const List& list() const;
  const Dict& dict() const;
  const Tree& operator[](size_t i) const;
  const Tree& operator[](const std::string& key) const;
  size_t size() const;  // children of a list or dict

  std::string kind() const;  // "None", "Array float32[2,3]", "scalar", "list of 2", "dict {a, b}"

 private:
  // A tree is one immutable node shared by its copies (null: None), so copying a tree is O(1):
  // a jitted LLM step gets its ~300-leaf weight dict by value on every call, and a deep copy
  // cost ~2 ms per token in Wasm.
  struct Node;
  std::shared_ptr<const Node> n_;
  size_t index() const;  // 0 None, 1 Array, 2 scalar, 3 list, 4 dict
};

// The structure of a tree without its leaves.
struct TreeDef {
  // The node's kind (and the field holding it).
  enum class Kind { None, Leaf, List, Dict } kind = Kind::None;
  std::vector<TreeDef> children;
  std::vector<std::string> keys;  // Dict only, sorted
  size_t num_leaves = 0;
  bool operator==(const TreeDef& o) const;  // same structure (kinds, keys, arity)
  std::string str() const;  // e.g. "[*, {a: *, b: None}]"
};

// Leaves in order (list order, sorted dict keys); None contributes no leaves (as JAX).
std::pair<std::vector<Array>, TreeDef> tree_flatten(const Tree& t);
std::vector<Array> tree_leaves(const Tree& t);
Tree tree_unflatten(const TreeDef& def, const std::vector<Array>& leaves);
Tree tree_map(const std::function<Array(const Array&)>& f, const Tree& t);
// f over the leaves of trees of the same structure; throws kiln::Error if they differ.
Tree tree_map(const std::function<Array(const Array&, const Array&)>& f, const Tree& a,
              const Tree& b);

}  // namespace kiln
