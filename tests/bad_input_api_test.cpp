// Bad-input rows for the transformations (wrong pytrees, argnums, axes), jit, pytrees,
// optax, io, debug, memory and the Array operators. Functions that take no input
// (debug_level, tracing, memory_stats, ...) get a valid row: called out of order, they must
// neither throw nor disturb the sentinels.
#include <cmath>
#include <limits>
#include <set>

#include "bad_input.h"

namespace bad_input {

namespace np = kiln::numpy;
namespace optax = kiln::optax;
using kiln::Array;
using kiln::ArrayFn;
using kiln::Fn;
using kiln::Shape;
using kiln::Tree;

namespace {

// f(x, y) = sum(x * y): a scalar function of two arguments.
Tree sum_xy(const std::vector<Tree>& a) { return np::sum(a.at(0).as_array() * a.at(1).as_array()); }
Array vec_fn(const Array& x) { return x * 2; }  // not scalar: grad rejects it

void transforms_rows(std::vector<Row>& r) {
  r.push_back(err("jvp", [] { kiln::jvp(Fn(sum_xy), {f23(), f23()}, {f23()}); }, {"jvp"}));
  r.push_back(err("jvp", [] { kiln::jvp(ArrayFn(vec_fn), f23(), np::ones({3})); }, {"jvp", "(3,)"}));
  r.push_back(err("jvp", [] { kiln::jvp(Fn(sum_xy), {f23(), f23()}, {np::ones({2, 3}, kiln::int32), f23()}); }, {"jvp"}));
  r.push_back(err("linearize", [] { kiln::linearize(Fn(sum_xy), {f23(), Tree(Tree::List{Array()})}); }, {"linearize"}));
  r.push_back(err("linearize", [] { kiln::linearize(ArrayFn(vec_fn), f23()).second(np::ones({4})); }, {"linearize"}));
  r.push_back(err("vjp", [] { kiln::vjp(Fn(sum_xy), {f23(), f23()}).pullback(np::ones({3})); }, {"vjp"}));
  r.push_back(err("vjp", [] { kiln::vjp(Fn(sum_xy), {f23(), f23()}, true); }, {"vjp", "has_aux"}));
  r.push_back(err("vjp", [] { kiln::vjp(ArrayFn(vec_fn), f23()).second(np::ones({4})); }, {"vjp"}));
  r.push_back(err("grad", [] { kiln::grad(ArrayFn(vec_fn))(f23()); }, {"grad", "scalar"}));
  r.push_back(err("grad", [] { kiln::grad(Fn(sum_xy), 2)({f23(), f23()}); }, {"grad", "argnums"}));
  r.push_back(err("grad", [] { kiln::grad(Fn(sum_xy), -3)({f23(), f23()}); }, {"grad", "argnums"}));
  r.push_back(err("grad", [] { kiln::grad(Fn(sum_xy), 0, true)({f23(), f23()}); }, {"grad", "has_aux"}));
  r.push_back(err("grad", [] { kiln::grad(Fn(sum_xy))({np::ones({2, 3}, kiln::int32), f23()}); }, {"grad", "int32"}));
  r.push_back(err("value_and_grad", [] { kiln::value_and_grad(Fn(sum_xy), 5)({f23(), f23()}); }, {"value_and_grad", "argnums"}));
  r.push_back(err("value_and_grad", [] { kiln::value_and_grad(ArrayFn(vec_fn))(f23()); }, {"value_and_grad", "scalar"}));
  r.push_back(err("vmap", [] { kiln::vmap(ArrayFn(vec_fn), 2)(f23()); }, {"vmap", "in_axes 2"}));
  r.push_back(err("vmap", [] { kiln::vmap(Fn(sum_xy), Tree::List{0, 1})({f23(), f23()}); }, {"vmap", "size"}));
  r.push_back(err("vmap", [] { kiln::vmap(Fn(sum_xy), Tree::List{0})({f23(), f23()}); }, {"vmap"}));
  r.push_back(err("vmap", [] { kiln::vmap(Fn(sum_xy), Tree(std::nullopt))({f23(), f23()}); }, {"vmap"}));
  r.push_back(err("vmap", [] { kiln::vmap(ArrayFn(vec_fn), 0, 3)(f23()); }, {"vmap", "out_axes"}));
  for (auto [name, t] : std::vector<std::pair<std::string, Fn (*)(const Fn&, kiln::Argnums)>>{
           {"jacfwd", kiln::jacfwd}, {"jacrev", kiln::jacrev}, {"hessian", kiln::hessian}})
    r.push_back(err(name, [t = t] { t(Fn(sum_xy), 7)({f23(), f23()}); }, {name, "argnums"}));
  r.push_back(err("jacfwd", [] { kiln::jacfwd(ArrayFn(vec_fn))(np::ones({3}, kiln::int32)); }, {"jacfwd", "int32"}));
  r.push_back(err("jacrev", [] { kiln::jacrev(ArrayFn(vec_fn))(np::ones({3}, kiln::int32)); }, {"jacrev", "int32"}));
  r.push_back(err("hessian", [] { kiln::hessian(ArrayFn(vec_fn))(Array()); }, {"hessian"}));
  r.push_back(ok_row("stop_gradient", [] { expect_true(std::isnan(kiln::stop_gradient(Array(NAN)).item()), "stop_gradient(nan)"); }));
  r.push_back(err("stop_gradient", [] { kiln::stop_gradient(Tree(Tree::List{Array()})); }, {"stop_gradient"}));
  r.push_back(err("custom_jvp", [] {
    auto rule = [](const std::vector<Tree>& p, const std::vector<Tree>&) { return std::pair<Tree, Tree>(sum_xy(p), np::ones({5})); };
    kiln::jvp(kiln::custom_jvp(Fn(sum_xy), rule), {f23(), f23()}, {f23(), f23()});
  }, {"custom_jvp"}));
  r.push_back(err("custom_vjp", [] {
    auto fwd = [](const std::vector<Tree>& p) { return std::pair<Tree, Tree>(sum_xy(p), Tree()); };
    auto bwd = [](const Tree&, const Tree&) { return std::vector<Tree>{np::ones({4})}; };
    kiln::grad(kiln::custom_vjp(Fn(sum_xy), fwd, bwd))({f23(), f23()});
  }, {"custom_vjp"}));
  r.push_back(err("checkpoint", [] { kiln::checkpoint(Fn()); }, {"checkpoint", "empty"}));
  r.push_back(err("checkpoint", [] { kiln::checkpoint(ArrayFn()); }, {"checkpoint", "empty"}));
  r.push_back(err("checkpoint", [] { kiln::grad(kiln::checkpoint(Fn(sum_xy)))({np::ones({2, 3}, kiln::int32), f23()}); }, {"grad", "int32"}));
  r.push_back(err("checkpoint", [] { kiln::checkpoint(Fn(sum_xy), kiln::CheckpointPolicy(7))({f23(), f23()}); }, {"checkpoint", "policy 7"}));
  r.push_back(err("remat", [] { kiln::remat(Fn()); }, {"checkpoint", "empty"}));
  r.push_back(err("remat", [] { kiln::remat(ArrayFn(vec_fn), kiln::CheckpointPolicy(9))(f23()); }, {"checkpoint", "policy 9"}));
}

void jit_tree_rows(std::vector<Row>& r) {
  r.push_back(err("jit", [] { kiln::jit(Fn(sum_xy), {5})({f23(), f23()}); }, {"jit", "static_argnums"}));
  r.push_back(err("jit", [] { kiln::jit(Fn(sum_xy), {0})({f23(), f23()}); }, {"jit", "static"}));
  r.push_back(err("jit", [] { kiln::jit(Fn(sum_xy))({f23(), np::ones({4})}); }, {"multiply"}));
  r.push_back(err("jit", [] { kiln::jit(ArrayFn(vec_fn))(Array()); }, {"jit"}));
  r.push_back(err("make_jaxpr", [] { kiln::make_jaxpr(Fn(sum_xy), {f23(), Tree::List{Array()}}); }, {"make_jaxpr"}));
  r.push_back(err("make_jaxpr", [] { kiln::make_jaxpr(Fn(sum_xy), {f23(), f23()}, {3}); }, {"make_jaxpr", "static_argnums"}));
  r.push_back(err("tree_flatten", [] { kiln::tree_flatten(Tree::List{Array()}); }, {"tree_flatten"}));
  r.push_back(err("tree_leaves", [] { kiln::tree_leaves(Tree::Dict{{"a", Array()}}); }, {"tree_leaves"}));
  r.push_back(err("tree_unflatten", [] {
    auto def = kiln::tree_flatten(Tree::List{f23(), f23()}).second;
    kiln::tree_unflatten(def, {f23()});
  }, {"tree_unflatten", "2", "1"}));
  r.push_back(err("tree_map", [] { kiln::tree_map([](const Array& a, const Array& b) { return a + b; }, Tree::List{f23()}, Tree::List{f23(), f23()}); }, {"tree_map"}));
  r.push_back(err("tree_map", [] { kiln::tree_map([](const Array& a) { return a; }, Tree::List{Array()}); }, {"tree_map"}));
}

void optax_rows(std::vector<Row>& r) {
  auto params = [] { return Tree(Tree::Dict{{"w", Tree(f23())}}); };
  auto wrong = [] { return Tree(Tree::Dict{{"v", Tree(f23())}}); };
  r.push_back(err("optax::apply_updates", [=] { optax::apply_updates(params(), wrong()); }, {"apply_updates"}));
  r.push_back(err("optax::apply_updates", [=] { optax::apply_updates(params(), Tree(Tree::Dict{{"w", Tree(np::ones({4}))}})); }, {"apply_updates"}));
  // Every transformation's update with updates of another structure than its state.
  using Make = std::function<optax::GradientTransformation()>;
  std::vector<std::pair<std::string, Make>> gts = {
      {"identity", [] { return optax::identity(); }}, {"chain", [] { return optax::chain({optax::scale(2), optax::trace(0.9)}); }},
      {"scale", [] { return optax::scale(2); }}, {"scale_by_schedule", [] { return optax::scale_by_schedule(optax::constant_schedule(1)); }},
      {"scale_by_learning_rate", [] { return optax::scale_by_learning_rate(0.1); }}, {"scale_by_adam", [] { return optax::scale_by_adam(); }},
      {"scale_by_rms", [] { return optax::scale_by_rms(); }}, {"scale_by_stddev", [] { return optax::scale_by_stddev(); }},
      {"trace", [] { return optax::trace(0.9); }}, {"add_decayed_weights", [] { return optax::add_decayed_weights(0.1); }},
      {"clip_by_global_norm", [] { return optax::clip_by_global_norm(1); }}, {"clip", [] { return optax::clip(1); }},
      {"sgd", [] { return optax::sgd(0.1, 0.9); }}, {"adam", [] { return optax::adam(0.1); }},
      {"adamw", [] { return optax::adamw(0.1); }}, {"rmsprop", [] { return optax::rmsprop(0.1, 0.9, 1e-8, 0, true, true, 0.9); }}};
  const std::set<std::string> stateless = {"identity", "scale", "scale_by_schedule", "scale_by_learning_rate",
                                            "clip_by_global_norm", "clip"};
  for (auto& [name, make] : gts) {
    if (stateless.count(name)) {
      // No state to disagree with: an update leaf that is an empty handle (identity passes
      // updates through untouched, as optax: a NaN update stays NaN).
      if (name == "identity") {
        r.push_back(ok_row("optax::identity", [make = make] {
          auto gt = make();
          Tree out = gt.update(Tree(Array(NAN)), gt.init(Tree(Array(1.0))), Tree()).first;
          expect_true(std::isnan(out.as_array().item()), "identity of NaN");
        }));
        continue;
      }
      r.push_back(err("optax::" + name, [make = make, params] {
        auto gt = make();
        gt.update(Tree(Tree::Dict{{"w", Tree(Array())}}), gt.init(params()), params());
      }));
      continue;
    }
    r.push_back(err("optax::" + name, [make = make, params] {
      auto gt = make();
      Tree state = gt.init(params());
      gt.update(Tree(Tree::List{f23(), f23()}), state, params());
    }));
  }
  r.push_back(err("optax::global_norm", [] { optax::global_norm(Tree::List{Array()}); }, {"global_norm"}));
  r.push_back(ok_row("optax::global_norm", [] { expect_true(std::isinf(optax::global_norm(Tree::List{Array(INFINITY)}).item()), "norm of Inf"); }));
  // optax validates no hyperparameters but these (b1 = 1.5, momentum < 0, a negative
  // max_norm are accepted there too); NaN gradients flow through as NaN.
  r.push_back(ok_row("optax::adam", [=] {
    auto gt = optax::adam(0.1);
    Tree p = Tree(Tree::Dict{{"w", Tree(np::ones({2}))}});
    Tree out = gt.update(Tree(Tree::Dict{{"w", Tree(np::full({2}, NAN))}}), gt.init(p), p).first;
    expect_true(std::isnan(out["w"].as_array().to_vector<float>()[0]), "adam of a NaN gradient");
  }));
  r.push_back(ok_row("optax::constant_schedule", [] { expect_true(optax::constant_schedule(NAN)(Array(0)).item() != 0, "NaN schedule"); }));
  // transition_steps <= 0: optax's polynomial/linear/exponential schedules are constant.
  r.push_back(ok_row("optax::polynomial_schedule", [] { expect_true(optax::polynomial_schedule(1, 0, 1, 0)(Array(5)).item() == 1, "constant"); }));
  r.push_back(ok_row("optax::linear_schedule", [] { expect_true(optax::linear_schedule(1, 0, -5)(Array(5)).item() == 1, "constant"); }));
  r.push_back(err("optax::cosine_decay_schedule", [] { optax::cosine_decay_schedule(1, 0); }, {"cosine_decay_schedule", "decay_steps"}));
  r.push_back(ok_row("optax::exponential_decay", [] { expect_true(optax::exponential_decay(1, 0, 0.5)(Array(5)).item() == 1, "constant"); }));
  r.push_back(err("optax::piecewise_constant_schedule", [] { optax::piecewise_constant_schedule(1, {{5, -1.0}}); }, {"piecewise_constant_schedule"}));
  r.push_back(err("optax::join_schedules", [] { optax::join_schedules({optax::constant_schedule(1)}, {5}); }, {"join_schedules"}));
  r.push_back(err("optax::warmup_cosine_decay_schedule", [] { optax::warmup_cosine_decay_schedule(0, 1, 10, 5); }, {"warmup_cosine_decay_schedule"}));
}

void io_misc_rows(std::vector<Row>& r) {
  r.push_back(err("io::read_idx", [] { kiln::io::read_idx("no/such/file.idx"); }, {"read_idx", "no/such/file.idx"}));
  r.push_back(err("io::parse_idx", [] { kiln::io::parse_idx({0, 0, 8, 3, 0, 0, 0, 9}, "bad.idx"); }, {"bad.idx"}));
  r.push_back(err("formats::inflate", [] { std::vector<uint8_t> b{0xff, 0xff}; kiln::io::inflate(b.data(), b.size(), "x.deflate"); }, {"x.deflate"}));
  r.push_back(err("formats::gunzip", [] { kiln::io::gunzip({0x1f, 0x8b, 8}, "x.gz"); }, {"x.gz"}));
  r.push_back(ok_row("formats::is_gzip", [] { expect_true(!kiln::io::is_gzip({}), "empty is not gzip"); }));
  r.push_back(ok_row("formats::crc32", [] { expect_true(kiln::io::crc32(nullptr, 0) == 0, "crc32 of nothing"); }));
  r.push_back(err("set_debug", [] { kiln::set_debug(9); }, {"set_debug", "9"}));
  r.push_back(err("set_debug", [] { kiln::set_debug(-1); }, {"set_debug", "-1"}));
  r.push_back(ok_row("debug_level", [] { kiln::debug_level(); }));
  r.push_back(ok_row("debug_print", [] { kiln::debug_print(""); }));
  r.push_back(ok_row("set_debug_sink", [] { kiln::set_debug_sink(nullptr); }));
  r.push_back(ok_row("stop_trace", [] { expect_true(kiln::stop_trace().empty() || true, "stop_trace without start"); }));
  r.push_back(ok_row("start_trace", [] { kiln::start_trace(); kiln::start_trace(); kiln::stop_trace(); }));
  r.push_back(ok_row("tracing", [] { expect_true(!kiln::tracing(), "not tracing"); }));
  r.push_back(ok_row("trace_clock_ms", [] { expect_true(std::isfinite(kiln::trace_clock_ms()), "a finite clock"); }));
  r.push_back(ok_row("add_trace_event", [] { kiln::add_trace_event({"x", NAN, -1}); }));
  r.push_back(ok_row("memory_stats", [] { expect_true(kiln::memory_stats().arrays > 0, "sentinels are live"); }));
  r.push_back(err("memory_stats", [] { kiln::memory_stats().device("tpu"); }, {"tpu"}));
  r.push_back(ok_row("reset_peak_memory", [] {
    kiln::reset_peak_memory();
    kiln::reset_peak_memory();  // twice: nothing left to free
    for (const auto& d : kiln::memory_stats().devices) expect_true(d.peak_bytes == d.bytes && d.pooled_bytes == 0, "peak restarted");
  }));
  r.push_back(err("check_array_size", [] { kiln::check_array_size("mine", {-1}, kiln::float32); }, {"mine", "(-1,)"}));
  r.push_back(err("check_array_size", [] { kiln::check_array_size("mine", {int64_t(1) << 62, 4}, kiln::float32); }, {"mine"}));
  r.push_back(ok_row("max_array_bytes", [] { expect_true(kiln::max_array_bytes() >= (int64_t(1) << 31), "at least 2 GiB"); }));
  r.push_back(ok_row("shape_str", [] { expect_true(kiln::shape_str({}) == "()", "shape_str of a scalar"); }));
  // The operators are numpy functions; their messages use the function's name.
  using Op = Array (*)(const Array&, const Array&);
  for (auto [sym, name, f] : std::vector<std::tuple<std::string, std::string, Op>>{
           {"+", "add", kiln::operator+}, {"-", "subtract", kiln::operator-}, {"*", "multiply", kiln::operator*},
           {"/", "divide", kiln::operator/}, {"%", "mod", kiln::operator%}, {"<", "less", kiln::operator<},
           {"<=", "less_equal", kiln::operator<=}, {">", "greater", kiln::operator>}, {">=", "greater_equal", kiln::operator>=},
           {"==", "equal", kiln::operator==}, {"!=", "not_equal", kiln::operator!=}, {"&", "bitwise_and", kiln::operator&},
           {"|", "bitwise_or", kiln::operator|}, {"^", "bitwise_xor", kiln::operator^}})
    r.push_back(err("operator" + sym, [f = f] { f(f23(), np::ones({4})); }, {name, "(2, 3)", "(4,)"}));
  r.push_back(ok_row("operator-", [] { expect_true(std::isnan((-Array(NAN)).item()), "-nan"); }));
  r.push_back(err("operator~", [] { ~f23(); }, {"bitwise_not", "float32"}));
  r.push_back(err("operator!", [] { !Array(); }, {"logical_not"}));
  // Array's own methods (not free functions, so not counted by the header check).
  r.push_back(err("numpy::reshape", [] { f23().reshape({5}); }, {"reshape", "(5,)"}));
  r.push_back(err("numpy::index", [] { f23()[7]; }, {"index", "7"}));
  r.push_back(err("numpy::asarray", [] { Array(1.0).item(); f23().item(); }, {"item"}));
}

}  // namespace

std::vector<Row> api_rows() {
  std::vector<Row> r;
  transforms_rows(r);
  jit_tree_rows(r);
  optax_rows(r);
  io_misc_rows(r);
  return r;
}

}  // namespace bad_input
