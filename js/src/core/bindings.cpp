// The embind module of the npm package: Handle (one kiln::Array), array creation and
// readback, call_op, devices, and the transformations over JS functions (Func).
#include <emscripten/bind.h>

#include "backend/backend.h"
#include "backend/wasm/wasm_backend.h"
#include "formats/raw_array.h"
#include "js_values.h"
#include "kiln/export.h"
#include "op_table.h"

namespace kiln::js {
namespace {

using emscripten::typed_memory_view;

val shape_of(const Handle& h) {
  val out = val::array();
  for (int64_t d : h.a.shape()) out.call<void>("push", double(d));
  return out;
}
std::string dtype_of(const Handle& h) { return dtype_name(h.a.dtype()); }
bool weak_of(const Handle& h) { return h.a.weak_type(); }
std::string device_of(const Handle& h) { return h.a.device(); }
std::string str_of(const Handle& h) { return h.a.to_string(); }
// "float32[2,3]": what Array.toString shows, and what dispose() keeps for the message of a
// later use (UseAfterFreeError). One call instead of dtype() and shape(), which builds a JS
// array element by element: dispose runs for every feed and output of every call.
std::string describe_of(const Handle& h) {
  std::string s = dtype_name(h.a.dtype());
  s += '[';
  const Shape& shape = h.a.shape();
  for (size_t i = 0; i < shape.size(); i++) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

// The elements as a fresh Uint8Array (little-endian, C order), or an Error.
val bytes_of(const Handle& h) {
  try {
    std::vector<uint8_t> b = h.a.bytes();
    return js_class(JsClass::Uint8Array).new_(typed_memory_view(b.size(), b.data()));
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// An array from raw bytes (a Uint8Array view of a typed array) on `device`.
val from_bytes(const val& bytes, const val& shape, const std::string& dtype, const std::string& device) {
  try {
    OpName op("array");
    if (!bytes.instanceof(js_class(JsClass::Uint8Array))) fail("array", "got ", js_describe(bytes), ", expected a Uint8Array");
    Shape s;
    const int nd = js_length(shape, "shape");
    for (int i = 0; i < nd; i++) s.push_back(js_int64(shape[i], "shape"));
    const double n = bytes[js_key_length()].as<double>();
    if (n > double(max_array_bytes())) fail("array", "got ", n, " bytes, expected at most ", max_array_bytes());
    std::vector<uint8_t> buf(static_cast<size_t>(n));
    val(typed_memory_view(buf.size(), buf.data())).call<void>("set", bytes);
    // The bytes must hold exactly the shape's elements: numpy::array reads prod(shape)
    // elements, so a larger shape (np.array(typed, {shape})) would read past the buffer.
    const formats::RawArray raw = formats::check_raw_array("array", buf.size(), s, dtype);
    OnDevice on(device);
    return from_array(numpy::array(buf.data(), raw.shape, raw.dtype));
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// A weakly typed scalar (a JS number), as jax-js's np.array(3): float32 unless dtype given.
val weak_scalar(double v, const std::string& dtype, const std::string& device) {
  try {
    OnDevice on(device);
    Array a = Array(v);
    if (!dtype.empty() && dtype != "float32") a = lax::convert_element_type(a, dtype_from_name(dtype));
    return from_array(a);
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

val devices_list() {
  val out = val::array();
  for (auto& d : available_devices()) out.call<void>("push", d);
  return out;
}
val set_device(const std::string& d) {
  try {
    set_default_device(d);
    return val(d);
  } catch (const std::exception& e) {
    return js_error(e);
  }
}
std::string get_device() { return default_device(); }

// ---- functions ----------------------------------------------------------------------------

// A kiln function that JS can call with a tree of Handles (see to_tree) and delete.
struct Func {
  Fn f;
  val call(const val& args) const {
    try {
      Tree t = to_tree(args);
      if (!t.is_list()) fail("kiln", "a function takes a list of arguments, got ", t.kind());
      return from_tree(f(t.list()));
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
};

// A JS function as a kiln Fn. The JS side never throws into C++ (it returns its Error,
// which the wrapper keeps and rethrows), so traces unwind through C++ destructors.
Fn from_js(val jsfn) {
  return [jsfn](const std::vector<Tree>& args) -> Tree {
    Tree::List l(args.begin(), args.end());
    val r = jsfn(from_tree(Tree(std::move(l))));
    // `done` releases the JS references to the outputs once C++ holds them.
    struct Done {
      val f;
      ~Done() {
        if (is_set(f)) f();
      }
    } done{jsfn["done"]};
    if (r.instanceof(val::global("Error"))) fail(current_op(), "the JS function threw: ", val::global("String")(r["message"]).as<std::string>());
    return to_tree(r);
  };
}

Argnums argnums_of(const val& opts) {
  val a = opts["argnums"];
  if (js_is_array(a)) {
    std::vector<int> v;
    for (int i = 0; i < js_length(a, "argnums"); i++) v.push_back(js_int(a[i], "argnums"));
    return Argnums(v);
  }
  return Argnums(is_set(a) ? js_int(a, "argnums") : 0);
}

// Custom rules written in JS (js/src/transforms.ts, customJvp/customVjp): each returns a
// list of trees, split here into the pair or list the C++ rule types want.
std::vector<Tree> rule_lists(const Fn& r, const std::vector<Tree>& args, size_t n, const char* what) {
  Tree out = r(args);
  if (!out.is_list() || (n && out.list().size() != n)) fail(current_op(), what, " returned ", out.kind(), ", expected a list");
  return out.list();
}
CustomJvpRule jvp_rule_from_js(val fn) {
  Fn r = from_js(fn);
  return [r](const std::vector<Tree>& primals, const std::vector<Tree>& tangents) {
    std::vector<Tree> args(primals);
    args.insert(args.end(), tangents.begin(), tangents.end());
    auto l = rule_lists(r, args, 2, "the jvp rule");
    return std::pair<Tree, Tree>(l[0], l[1]);
  };
}
CustomFwd fwd_from_js(val fn) {
  Fn r = from_js(fn);
  return [r](const std::vector<Tree>& args) {
    auto l = rule_lists(r, args, 2, "fwd");
    return std::pair<Tree, Tree>(l[0], l[1]);
  };
}
CustomBwd bwd_from_js(val fn) {
  Fn r = from_js(fn);
  return [r](const Tree& res, const Tree& ct) { return rule_lists(r, {res, ct}, 0, "bwd"); };
}

CheckpointPolicy policy_of(const val& opts) {
  val p = opts["policy"];
  if (!is_set(p)) return CheckpointPolicy::NothingSaveable;
  const std::string s = p.isString() ? p.as<std::string>() : "";
  if (s == "nothing_saveable") return CheckpointPolicy::NothingSaveable;
  if (s == "dots_saveable") return CheckpointPolicy::DotsSaveable;
  if (s == "everything_saveable") return CheckpointPolicy::EverythingSaveable;
  fail("checkpoint", "got policy '", s, "', expected nothing_saveable, dots_saveable or everything_saveable");
}

// kind: grad, value_and_grad, vmap, jit, jacfwd, jacrev, hessian, custom_jvp, custom_vjp, checkpoint. Returns a Func or an Error.
val transform(const std::string& kind, val jsfn, const val& opts) {
  try {
    OpName op(kind);
    Fn f = from_js(jsfn);
    Fn g;
    if (kind == "grad") g = grad(f, argnums_of(opts), get_bool(opts, "hasAux", false));
    else if (kind == "value_and_grad") g = value_and_grad(f, argnums_of(opts), get_bool(opts, "hasAux", false));
    else if (kind == "vmap") g = vmap(f, to_tree(opts["inAxes"]), to_tree(opts["outAxes"]));
    else if (kind == "jit") g = jit(f);
    else if (kind == "jacfwd") g = jacfwd(f, argnums_of(opts));
    else if (kind == "jacrev") g = jacrev(f, argnums_of(opts));
    else if (kind == "hessian") g = hessian(f, argnums_of(opts));
    else if (kind == "custom_jvp") g = custom_jvp(f, jvp_rule_from_js(opts["jvp"]));
    else if (kind == "custom_vjp") g = custom_vjp(f, fwd_from_js(opts["fwd"]), bwd_from_js(opts["bwd"]));
    else if (kind == "checkpoint") g = checkpoint(f, policy_of(opts));
    else fail("kiln", "no transformation named '", kind, "'");
    return val(Func{g});
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

std::vector<Tree> tree_args(const val& v) {
  Tree t = to_tree(v);
  if (!t.is_list()) fail("kiln", "expected a list of arguments, got ", t.kind());
  return t.list();
}

// [outputs, output tangents].
val jvp_js(val jsfn, const val& primals, const val& tangents) {
  try {
    auto [out, tan] = jvp(from_js(jsfn), tree_args(primals), tree_args(tangents));
    val r = val::array();
    r.call<void>("push", from_tree(out));
    r.call<void>("push", from_tree(tan));
    return r;
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// [outputs, pullback Func, aux]. The pullback takes [cotangent] and returns one tree per argument.
val vjp_js(val jsfn, const val& primals, bool has_aux) {
  try {
    VjpResult res = vjp(from_js(jsfn), tree_args(primals), has_aux);
    auto pb = res.pullback;
    Fn pull = [pb](const std::vector<Tree>& ct) -> Tree {
      if (ct.size() != 1) fail("vjp", "the pullback takes one cotangent, got ", ct.size());
      std::vector<Tree> g = pb(ct[0]);
      return Tree(Tree::List(g.begin(), g.end()));
    };
    val r = val::array();
    r.call<void>("push", from_tree(res.out));
    r.call<void>("push", val(Func{pull}));
    r.call<void>("push", from_tree(res.aux));
    return r;
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// [outputs, linear Func]: the Func takes one tangent tree per argument.
val linearize_js(val jsfn, const val& primals) {
  try {
    auto [out, lin] = linearize(from_js(jsfn), tree_args(primals));
    val r = val::array();
    r.call<void>("push", from_tree(out));
    r.call<void>("push", val(Func{lin}));
    return r;
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

val make_jaxpr_js(val jsfn, const val& args) {
  try {
    return val(make_jaxpr(from_js(jsfn), tree_args(args)).str());
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// jsfn traced on args and exported (kiln/export.h): the ONNX model as a Uint8Array, or the
// StableHLO module as a string; an Error names what cannot be exported.
val export_onnx_js(val jsfn, const val& args, int opset) {
  try {
    ExportOptions options;
    options.opset = opset;
    std::vector<uint8_t> b = export_onnx(from_js(jsfn), tree_args(args), options);
    return js_class(JsClass::Uint8Array).new_(typed_memory_view(b.size(), b.data()));
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

val export_stablehlo_js(val jsfn, const val& args) {
  try {
    return val(export_stablehlo(from_js(jsfn), tree_args(args)));
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// The wasm backend's thread count: sets it when n != 0, and returns [threads, max threads,
// split dispatches, pool-worker chunks, 1 when tiled contractions use Relaxed-SIMD FMA]
// (threads and max are 1 in the single-threaded core), or an Error for a count outside
// [1, max]. A diagnostic for tests and benchmarks.
val wasm_threads(int n) {
  try {
    auto& be = static_cast<WasmBackend&>(get_backend("wasm"));
    if (n != 0) be.set_threads(n);
    val r = val::array();
    r.call<void>("push", be.threads());
    r.call<void>("push", be.max_threads());
    r.call<void>("push", double(be.split_dispatches()));
    r.call<void>("push", double(be.worker_chunks()));
    r.call<void>("push", be.options().fma ? 1 : 0);
    return r;
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// ---- control flow (js/src/lax_control.ts) ------------------------------------------------
// The flat forms of kiln::lax control flow (library/lax_control.h): JS flattens the pytrees and passes leaf lists; each JS
// body takes one leaf list per argument and returns leaf lists.

std::vector<Array> leaves_of(const Tree& t) {
  std::vector<Array> r;
  for (auto& x : t.list()) r.push_back(x.as_array());
  return r;
}

// The body as the core calls it: `lists` leaf lists of the given sizes in, leaf lists out.
lax::ArraysFn flat_body(val jsfn, const std::vector<size_t>& sizes) {
  Fn f = from_js(std::move(jsfn));
  return [f, sizes](const std::vector<Array>& in) {
    std::vector<Tree> args;
    size_t k = 0;
    for (size_t n : sizes) {
      Tree::List l;
      for (size_t i = 0; i < n; i++) l.push_back(in[k++]);
      args.push_back(Tree(std::move(l)));
    }
    Tree r = f(args);
    std::vector<Array> out;
    for (auto& part : r.list()) {
      std::vector<Array> p = leaves_of(part);
      out.insert(out.end(), p.begin(), p.end());
    }
    return out;
  };
}

// [carry..., ys...] or an Error; body: [carry leaves, x leaves] -> [carry leaves, y leaves].
val scan_js(val body, const val& init, const val& xs, double length, bool reverse, int unroll) {
  try {
    OpName op("scan");
    std::vector<Array> c = to_arrays(init), x = to_arrays(xs);
    return from_arrays(lax::scan_flat(flat_body(body, {c.size(), x.size()}), c, x, int64_t(length), reverse, unroll));
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// cond: [carry leaves] -> [[pred]]; body: [carry leaves] -> [carry leaves].
val while_js(val cond, val body, const val& init) {
  try {
    OpName op("whileLoop");
    std::vector<Array> c = to_arrays(init);
    return from_arrays(lax::while_flat(flat_body(cond, {c.size()}), flat_body(body, {c.size()}), c));
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// branches[clamp(index)]: [operand leaves] -> [out leaves].
val switch_js(const val& index, const val& branches, const val& operands) {
  try {
    OpName op("switch");
    std::vector<Array> ops = to_arrays(operands);
    std::vector<lax::ArraysFn> fs;
    for (int i = 0; i < js_length(branches, "branches"); i++) fs.push_back(flat_body(branches[i], {ops.size()}));
    return from_arrays(lax::switch_flat(to_array(index), fs, ops));
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

}  // namespace
}  // namespace kiln::js

EMSCRIPTEN_BINDINGS(kiln) {
  using namespace emscripten;
  using namespace kiln::js;
  class_<Handle>("Handle")
      .function("shape", &shape_of)
      .function("dtype", &dtype_of)
      .function("weak", &weak_of)
      .function("device", &device_of)
      .function("str", &str_of)
      .function("describe", &describe_of)
      .function("bytes", &bytes_of);
  class_<Func>("Func").function("call", &Func::call);
  function("op", &call_op);
  function("fromBytes", &from_bytes);
  function("weakScalar", &weak_scalar);
  function("devices", &devices_list);
  function("setDefaultDevice", &set_device);
  function("defaultDevice", &get_device);
  function("transform", &transform);
  function("jvp", &jvp_js);
  function("scan", &scan_js);
  function("whileLoop", &while_js);
  function("switchBranches", &switch_js);
  function("vjp", &vjp_js);
  function("linearize", &linearize_js);
  function("makeJaxpr", &make_jaxpr_js);
  function("exportOnnx", &export_onnx_js);
  function("exportStablehlo", &export_stablehlo_js);
  function("wasmThreads", &wasm_threads);
}
