// Conversions between emscripten::val and kiln values (see js_values.h). Every conversion
// checks the JS type and names what it got, so a wrong argument is a kiln::Error.
#include "js_values.h"

#include <climits>
#include <cmath>

#include "backend/backend.h"

namespace kiln::js {

bool is_set(const val& v) { return !v.isUndefined() && !v.isNull(); }

namespace {
std::string& op_name() {
  static std::string name = "kiln";
  return name;
}
}  // namespace

const std::string& current_op() { return op_name(); }
OpName::OpName(std::string name) : saved(op_name()) { op_name() = std::move(name); }
OpName::~OpName() { op_name() = saved; }

std::string js_describe(const val& v) {
  std::string type = v.typeOf().as<std::string>();
  if (v.isNull()) return "null";
  if (v.isUndefined()) return "undefined";
  if (type == "number" || type == "boolean") return "the " + type + " " + val::global("String")(v).as<std::string>();
  if (type == "string") return "the string '" + v.as<std::string>() + "'";
  if (js_is_array(v)) return "an array";
  return "a JS " + type;
}

double js_number(const val& v, const std::string& what) {
  if (!v.isNumber()) fail(current_op(), what, " got ", js_describe(v), ", expected a number");
  return v.as<double>();
}
int64_t js_int64(const val& v, const std::string& what) {
  double d = v.isNumber() ? v.as<double>() : NAN;
  if (!(std::floor(d) == d && std::fabs(d) <= 9007199254740992.0))
    fail(current_op(), what, " got ", js_describe(v), ", expected an integer");
  return int64_t(d);
}
int js_int(const val& v, const std::string& what) {
  int64_t i = js_int64(v, what);
  if (i < INT32_MIN || i > INT32_MAX) fail(current_op(), what, " got ", i, ", expected an integer in int32 range");
  return int(i);
}
bool js_bool(const val& v, const std::string& what) {
  if (v.isTrue() || v.isFalse()) return v.isTrue();
  fail(current_op(), what, " got ", js_describe(v), ", expected a boolean");
}
std::string js_string(const val& v, const std::string& what) {
  if (!v.isString()) fail(current_op(), what, " got ", js_describe(v), ", expected a string");
  return v.as<std::string>();
}
int js_length(const val& v, const std::string& what) {
  if (!js_is_array(v)) fail(current_op(), what, " got ", js_describe(v), ", expected an array");
  // A JS array's length is an integer below 2^32; only its int32 range needs checking. (No
  // message built here: this runs for every argument list of every call.)
  const double n = v[js_key_length()].as<double>();
  if (n > double(INT32_MAX)) fail(current_op(), what, " has ", n, " elements, expected at most ", INT32_MAX);
  return int(n);
}

const val& js_class(JsClass c) {
  // Looked up once: a global or module lookup is a round trip into JS on every call.
  // Bindings run on the thread that loaded the core (emval handles are per thread).
  static const val classes[] = {val::global("Uint8Array"), val::module_property("Handle")};
  return classes[int(c)];
}

bool js_is_array(const val& v) {
  // Array.isArray itself, not instanceof: an array made in another realm (an iframe, a vm
  // context) is an array too.
  static const val is_array = val::global("Array")["isArray"];
  return is_array(v).as<bool>();
}

const val& js_key_length() {
  // v["length"] would make a JS string from the C string (UTF-8 decoding) on every use.
  static const val key("length");
  return key;
}

static bool is_handle(const val& v) { return v.instanceof(js_class(JsClass::Handle)); }

Array to_array(const val& v) {
  if (v.isNumber()) return Array(v.as<double>());
  if (v.isTrue() || v.isFalse()) return Array(v.isTrue());
  if (is_handle(v)) return v.as<Handle&>().a;
  fail(current_op(), "got ", js_describe(v), " where an Array or a number was expected");
}

std::vector<Array> to_arrays(const val& list) {
  std::vector<Array> out;
  int n = js_length(list, "the array arguments");
  out.reserve(n);
  for (int i = 0; i < n; i++) out.push_back(to_array(list[i]));
  return out;
}

Tree to_tree(const val& v) {
  if (!is_set(v)) return Tree();
  if (js_is_array(v)) {
    Tree::List l;
    int n = js_length(v, "a tree's list");
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

namespace {
std::string option(const char* key) { return std::string("option '") + key + "'"; }
}  // namespace

int get_int(const val& p, const char* key, int dflt) {
  val v = p[key];
  return is_set(v) ? js_int(v, option(key)) : dflt;
}
double get_num(const val& p, const char* key, double dflt) {
  val v = p[key];
  return is_set(v) ? js_number(v, option(key)) : dflt;
}
bool get_bool(const val& p, const char* key, bool dflt) {
  val v = p[key];
  return is_set(v) ? js_bool(v, option(key)) : dflt;
}
std::string get_str(const val& p, const char* key, const std::string& dflt) {
  val v = p[key];
  return is_set(v) ? js_string(v, option(key)) : dflt;
}
std::optional<int> get_opt_int(const val& p, const char* key) {
  val v = p[key];
  if (!is_set(v)) return std::nullopt;
  return js_int(v, option(key));
}
std::vector<int> get_ints(const val& p, const char* key) {
  val v = p[key];
  std::vector<int> out;
  if (!is_set(v)) return out;
  int n = js_length(v, option(key));
  for (int i = 0; i < n; i++) out.push_back(js_int(v[i], option(key) + "[" + std::to_string(i) + "]"));
  return out;
}
std::vector<int64_t> get_int64s(const val& p, const char* key) {
  val v = p[key];
  std::vector<int64_t> out;
  if (!is_set(v)) return out;
  int n = js_length(v, option(key));
  for (int i = 0; i < n; i++) out.push_back(js_int64(v[i], option(key) + "[" + std::to_string(i) + "]"));
  return out;
}
Axes get_axes(const val& p, const char* key) {
  val v = p[key];
  if (!is_set(v)) return Axes();
  if (v.isNumber()) return Axes(js_int(v, option(key)));
  return Axes(get_ints(p, key));
}
Shape get_shape(const val& p, const char* key) {
  if (!is_set(p[key])) fail(current_op(), option(key), " is missing, expected an array of sizes");
  return get_int64s(p, key);
}
std::optional<DType> get_dtype(const val& p, const char* key) {
  val v = p[key];
  if (!is_set(v)) return std::nullopt;
  std::string name = js_string(v, option(key));
  try {
    return dtype_from_name(name);
  } catch (const Error&) {
    fail(current_op(), option(key), " got unknown dtype '", name, "', expected one of bool, int32, uint32, float16, float32, float64");
  }
}
DType need_dtype(const val& p, const char* key) {
  std::optional<DType> d = get_dtype(p, key);
  if (!d) fail(current_op(), option(key), " is missing, expected a dtype");
  return *d;
}

val js_error(const std::string& message) { return val::global("Error").new_(val(message)); }

val js_error(const std::exception& e) {
  const char* cls = "Error";
  if (const auto* k = dynamic_cast<const Error*>(&e)) {
    if (k->kind() == ErrorKind::Type) cls = "TypeError";
    if (k->kind() == ErrorKind::Range) cls = "RangeError";
  }
  return val::global(cls).new_(val(std::string(e.what())));
}

OnDevice::OnDevice(const std::string& device) : saved(default_device()) {
  if (!device.empty()) set_default_device(device);
}
OnDevice::~OnDevice() { set_default_device(saved); }

std::string current_device() { return default_device(); }

val js_text(const std::string& utf8) {
  // A copy first: the threaded core's memory is a SharedArrayBuffer, which TextDecoder refuses.
  val bytes = js_class(JsClass::Uint8Array).new_(
      emscripten::typed_memory_view(utf8.size(), reinterpret_cast<const uint8_t*>(utf8.data())));
  return val::global("TextDecoder").new_(std::string("utf-8")).call<val>("decode", bytes);
}

val strings_to_js(const std::vector<std::string>& strings) {
  val out = val::array();
  for (const std::string& s : strings) out.call<void>("push", val(s));
  return out;
}

std::vector<uint8_t> bytes_of_js(const val& bytes, const char* what) {
  if (!bytes.instanceof(js_class(JsClass::Uint8Array)))
    fail(current_op(), what, " got ", js_describe(bytes), ", expected a Uint8Array");
  std::vector<uint8_t> buf(static_cast<size_t>(bytes["length"].as<double>()));
  val(emscripten::typed_memory_view(buf.size(), buf.data())).call<void>("set", bytes);
  return buf;
}

}  // namespace kiln::js
