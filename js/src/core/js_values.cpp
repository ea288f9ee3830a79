// Conversions between emscripten::val and kiln values (see js_values.h). Every conversion
// checks the JS type and names what it got, so a wrong argument is a kiln::Error.
#include "js_values.h"

namespace kiln::js {

bool is_set(const val& v) { return !v.isUndefined() && !v.isNull(); }

static bool is_handle(const val& v) {
  return v.typeOf().as<std::string>() == "object" && v.instanceof(val::module_property("Handle"));
}

Array to_array(const val& v) {
  std::string type = v.typeOf().as<std::string>();
  if (type == "number") return Array(v.as<double>());
  if (type == "boolean") return Array(v.as<bool>());
  if (is_handle(v)) return v.as<Handle&>().a;
  fail("kiln", "got a JS ", type, " where an Array or a number was expected");
}

std::vector<Array> to_arrays(const val& list) {
  std::vector<Array> out;
  int n = list["length"].as<int>();
  out.reserve(n);
  for (int i = 0; i < n; i++) out.push_back(to_array(list[i]));
  return out;
}

Tree to_tree(const val& v) {
  if (!is_set(v)) return Tree();
  if (v.isArray()) {
    Tree::List l;
    int n = v["length"].as<int>();
    for (int i = 0; i < n; i++) l.push_back(to_tree(v[i]));
    return Tree(std::move(l));
  }
  if (v.isNumber()) return Tree(v.as<double>());
  return Tree(to_array(v));
}

val from_array(const Array& a) { return val(Handle{a}); }

val from_arrays(const std::vector<Array>& v) {
  val out = val::array();
  for (auto& a : v) out.call<void>("push", from_array(a));
  return out;
}

val from_tree(const Tree& t) {
  if (t.is_none()) return val::null();
  if (t.is_array()) return from_array(t.array());
  if (t.is_scalar()) return from_array(t.as_array());
  if (t.is_list()) {
    val out = val::array();
    for (auto& c : t.list()) out.call<void>("push", from_tree(c));
    return out;
  }
  val out = val::object();
  for (auto& [k, c] : t.dict()) out.set(k, from_tree(c));
  return out;
}

int get_int(const val& p, const char* key, int dflt) {
  val v = p[key];
  return is_set(v) ? v.as<int>() : dflt;
}
double get_num(const val& p, const char* key, double dflt) {
  val v = p[key];
  return is_set(v) ? v.as<double>() : dflt;
}
bool get_bool(const val& p, const char* key, bool dflt) {
  val v = p[key];
  return is_set(v) ? v.as<bool>() : dflt;
}
std::string get_str(const val& p, const char* key, const std::string& dflt) {
  val v = p[key];
  return is_set(v) ? v.as<std::string>() : dflt;
}
std::optional<int> get_opt_int(const val& p, const char* key) {
  val v = p[key];
  if (!is_set(v)) return std::nullopt;
  return v.as<int>();
}
std::vector<int> get_ints(const val& p, const char* key) {
  val v = p[key];
  std::vector<int> out;
  if (!is_set(v)) return out;
  int n = v["length"].as<int>();
  for (int i = 0; i < n; i++) out.push_back(v[i].as<int>());
  return out;
}
std::vector<int64_t> get_int64s(const val& p, const char* key) {
  std::vector<int64_t> out;
  for (int x : get_ints(p, key)) out.push_back(x);
  return out;
}
Axes get_axes(const val& p, const char* key) {
  val v = p[key];
  if (!is_set(v)) return Axes();
  if (v.isNumber()) return Axes(v.as<int>());
  return Axes(get_ints(p, key));
}
Shape get_shape(const val& p, const char* key) { return get_int64s(p, key); }
std::optional<DType> get_dtype(const val& p, const char* key) {
  val v = p[key];
  if (!is_set(v)) return std::nullopt;
  return dtype_from_name(v.as<std::string>());
}

val js_error(const std::string& message) { return val::global("Error").new_(val(message)); }

}  // namespace kiln::js
