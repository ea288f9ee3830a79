// kiln::onnx::Model: load-time checks of an ONNX graph, its initializers as constants, and the
// translation of its nodes, in order, into library calls (traced by jit, grad and vmap).
#include "models/onnx/onnx_model.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <functional>
#include <set>

#include "formats/onnx.h"
#include "frontend/jit.h"
#include "frontend/trace.h"
#include "ir/file_bytes.h"
#include "library/lax_control.h"
#include "library/numpy.h"
#include "models/onnx/onnx_conv_folding.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

using formats::OnnxGraph;
using formats::OnnxNode;
using formats::OnnxType;

struct ModelState {
  std::vector<uint8_t> bytes;  // the file, then its external data: attribute tensors are decoded from it at trace time
  formats::OnnxModel model;
  int64_t opset = 0;
  std::map<std::string, Array> constants;  // initializers
  std::vector<ValueSpec> inputs, outputs;
  std::vector<std::string> input_names, output_names;
  std::map<const OnnxNode*, const OpRule*> rules;  // every node's, branches' too, found at load
  std::vector<bool> static_inputs;   // per input: its values reach a rule's host input
  std::map<std::string, int32_t> value_types;  // ONNX element types the file declares
  bool eager = false;  // a Loop's scan outputs have a data-dependent length: run() skips jit
  Fn jitted;  // (dynamic inputs, static inputs as trees of scalars) -> outputs
};

namespace {

ValueSpec spec_of(const formats::OnnxValueInfo& v, const char* kind) {
  const std::string what = std::string("graph ") + kind + " '" + v.name + "'";
  if (v.type.kind != OnnxType::Kind::Tensor)
    fail("onnx", what, ": only tensor inputs and outputs are supported (sequences, maps, optionals and sparse "
         "tensors are not)");
  ValueSpec s{v.name, dtype_of(v.type.elem_type, what), v.type.has_shape, {}, {}};
  for (const formats::OnnxDim& d : v.type.shape) {
    s.shape.push_back(d.has_value ? d.value : -1);
    s.dim_params.push_back(d.has_value ? "" : d.param);
  }
  return s;
}

// Every value a node reads must be a graph input, an initializer or an earlier node's output;
// a branch of If may also read any value defined before its node (its outer scope).
void check_nodes(const OnnxGraph& g, std::set<std::string> defined) {
  for (const formats::OnnxTensor& t : g.initializers) defined.insert(t.name);
  for (const formats::OnnxValueInfo& v : g.inputs) defined.insert(v.name);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const OnnxNode& n = g.nodes[i];
    for (const std::string& in : n.inputs)
      if (!in.empty() && !defined.count(in))
        fail("onnx", "node '", n.name, "' (", n.op_type, ", node ", i, "): input '", in,
             "' is not defined by an earlier node, an initializer or a graph input (the graph must be "
             "topologically sorted)");
    for (const formats::OnnxAttribute& a : n.attributes)
      for (const OnnxGraph& branch : a.graphs) check_nodes(branch, defined);
    for (const std::string& out : n.outputs) defined.insert(out);
  }
  for (const formats::OnnxValueInfo& o : g.outputs)
    if (!defined.count(o.name)) fail("onnx", "graph output '", o.name, "' is produced by no node");
}

void check_order(const OnnxGraph& g, const std::vector<std::string>& inputs,
                 const std::map<std::string, Array>& constants) {
  std::set<std::string> defined(inputs.begin(), inputs.end());
  for (const auto& [name, _] : constants) defined.insert(name);
  check_nodes(g, defined);
}

// The rules of every node, those of If's branches too, and the element types the file
// declares for values (branches included).
void find_rules(ModelState& st, const OnnxGraph& g) {
  for (const OnnxNode& n : g.nodes) {
    st.rules[&n] = &find_rule(n, st.opset);
    for (const formats::OnnxAttribute& a : n.attributes)
      for (const OnnxGraph& branch : a.graphs) find_rules(st, branch);
  }
  for (const auto* list : {&g.inputs, &g.outputs, &g.value_info})
    for (const formats::OnnxValueInfo& v : *list) st.value_types[v.name] = v.type.elem_type;
  for (const formats::OnnxTensor& t : g.initializers) st.value_types[t.name] = t.data_type;
}

// Checks one feed against its declared type, binding dim_params to sizes.
void check_feed(const ValueSpec& s, const Array& a, std::map<std::string, int64_t>& params) {
  const std::string what = "onnx: input '" + s.name + "'";
  if (a.dtype() != s.dtype)
    fail(what, "has dtype ", dtype_name(a.dtype()), ", expected ", dtype_name(s.dtype));
  if (!s.has_shape) return;
  if (a.ndim() != int(s.shape.size()))
    fail(what, "has rank ", a.ndim(), " (shape ", shape_str(a.shape()), "), expected ", s.shape.size());
  for (size_t i = 0; i < s.shape.size(); ++i) {
    const int64_t got = a.shape(int(i));
    if (s.shape[i] >= 0 && got != s.shape[i])
      fail(what, "has shape ", shape_str(a.shape()), ", expected size ", s.shape[i], " at axis ", i);
    if (s.shape[i] < 0 && !s.dim_params[i].empty()) {
      auto [it, fresh] = params.emplace(s.dim_params[i], got);
      if (!fresh && it->second != got)
        fail(what, "has size ", got, " at axis ", i, " for dimension '", s.dim_params[i], "', which another input set to ",
             it->second);
    }
  }
}

void run_nodes(const ModelState& st, const OnnxGraph& g, std::map<std::string, Array>& env);
std::vector<Array> run_subgraph(const ModelState& st, const OnnxGraph& g, const std::map<std::string, Array>& env,
                                const std::vector<Array>& ins);

// If: a branch runs over a copy of the enclosing scope (it reads outer values by name). With
// a condition known while translating, only the chosen branch runs. A condition computed
// from the graph's inputs is a traced value under jit, so both branches run and `where`
// picks each output (jax's cond under vmap does the same); this needs outputs of equal
// shapes, which an If whose branches differ in shape cannot have under a trace anyway.
std::vector<Array> run_if(const ModelState& st, const NodeContext& ctx, const std::map<std::string, Array>& env) {
  const Array& cond = ctx.input(0);
  if (cond.size() != 1) ctx.fail("the condition has shape ", shape_str(cond.shape()), ", expected one element");
  auto branch = [&](const char* name) { return run_subgraph(st, ctx.node().find_attribute(name)->graphs.at(0), env, {}); };
  if (!frontend::tracer_of(cond)) return branch(cond.to_vector<double>()[0] != 0 ? "then_branch" : "else_branch");
  const std::vector<Array> then_outs = branch("then_branch"), else_outs = branch("else_branch");
  if (then_outs.size() != else_outs.size())
    ctx.fail("the branches give ", then_outs.size(), " and ", else_outs.size(), " outputs");
  const Array pick = cond.astype(bool_).reshape({});
  std::vector<Array> outs;
  for (size_t k = 0; k < then_outs.size(); ++k) {
    if (then_outs[k].shape() != else_outs[k].shape() || then_outs[k].dtype() != else_outs[k].dtype())
      ctx.fail("output ", k, " is ", shape_str(then_outs[k].shape()), " in then_branch and ",
               shape_str(else_outs[k].shape()), " in else_branch: with a condition that depends on the graph's ",
               "inputs both branches run under jit and must agree in shape and dtype");
    outs.push_back(numpy::where(pick, then_outs[k], else_outs[k]));
  }
  return outs;
}

// Runs a subgraph (If's branch, Loop's body) over a copy of the enclosing scope, its inputs
// bound to `ins`; returns its outputs.
std::vector<Array> run_subgraph(const ModelState& st, const OnnxGraph& g, const std::map<std::string, Array>& env,
                                const std::vector<Array>& ins) {
  std::map<std::string, Array> scope = env;
  for (const formats::OnnxTensor& t : g.initializers) scope[t.name] = tensor_to_array(st.bytes, t);
  for (size_t i = 0; i < ins.size() && i < g.inputs.size(); ++i) scope[g.inputs[i].name] = ins[i];
  run_nodes(st, g, scope);
  std::vector<Array> outs;
  for (const formats::OnnxValueInfo& o : g.outputs) outs.push_back(scope.at(o.name));
  return outs;
}

// Whether a Loop body passes its condition through unchanged (output 0 is input 1, or an
// Identity of it): then a trip count alone decides the iterations.
bool condition_passes_through(const OnnxGraph& body) {
  if (body.inputs.size() < 2 || body.outputs.empty()) return false;
  const std::string &in = body.inputs[1].name, &out = body.outputs[0].name;
  if (in == out) return true;
  for (const OnnxNode& n : body.nodes)
    if (n.op_type == "Identity" && n.outputs.size() == 1 && n.outputs[0] == out) return n.inputs.at(0) == in;
  return false;
}

std::vector<bool> find_static_inputs(const OnnxGraph& g, const std::map<const OnnxNode*, const OpRule*>& rules,
                                     const std::vector<std::string>& inputs);

// The number of scan outputs of a Loop body (outputs after the condition and carried values).
size_t scan_outputs_of(const OnnxGraph& body) {
  const size_t nv = body.inputs.size() >= 2 ? body.inputs.size() - 2 : 0;
  return body.outputs.size() > nv + 1 ? body.outputs.size() - 1 - nv : 0;
}

// A Loop whose scan outputs' length depends on values computed while it runs (its body
// computes the condition): Model::run evaluates a graph holding one eagerly, not under jit.
bool has_data_dependent_scan(const OnnxGraph& g) {
  for (const OnnxNode& n : g.nodes) {
    if (n.op_type == "Loop") {
      const formats::OnnxAttribute* b = n.find_attribute("body");
      if (b && !b->graphs.empty() && scan_outputs_of(b->graphs[0]) > 0 && !condition_passes_through(b->graphs[0]))
        return true;
    }
    for (const formats::OnnxAttribute& a : n.attributes)
      for (const OnnxGraph& sub : a.graphs)
        if (has_data_dependent_scan(sub)) return true;
  }
  return false;
}

// The outputs of a Loop that runs no iteration: the carried values as given, and scan
// outputs of length 0. The body runs once on the initial values (discarded), only for the
// shapes and dtypes of one step's scan outputs.
std::vector<Array> with_empty_scans(const ModelState& st, const OnnxGraph& body, const std::map<std::string, Array>& env,
                                    const std::vector<Array>& carried) {
  std::vector<Array> ins = {numpy::array(std::vector<int32_t>{0}, {}), numpy::array(std::vector<bool>{true}, {})};
  ins.insert(ins.end(), carried.begin(), carried.end());
  const std::vector<Array> step = run_subgraph(st, body, env, ins);
  std::vector<Array> outs = carried;
  for (size_t k = 1 + carried.size(); k < step.size(); ++k) {
    Shape empty = step[k].shape();
    empty.insert(empty.begin(), 0);
    outs.push_back(numpy::zeros(empty, step[k].dtype()));
  }
  return outs;
}

// Runs a Loop's iterations one by one while translating, each with a concrete iteration
// number, up to `limit` and, when the body decides (it computes its condition), while that
// condition, read on the host, holds; scan outputs are stacked at the end. With zero
// iterations the body runs once on the initial values, only for the shapes of the empty scan
// outputs.
std::vector<Array> unroll_loop(const ModelState& st, const NodeContext& ctx, const std::map<std::string, Array>& env,
                               int64_t limit, bool go, bool body_decides, std::vector<Array> carried) {
  const OnnxGraph& body = ctx.node().find_attribute("body")->graphs.at(0);
  const size_t nv = carried.size(), num_scan = scan_outputs_of(body);
  auto flag = [](const Array& a) { return a.size() == 1 && a.reshape({}).astype(float64).to_vector<double>()[0] != 0; };
  std::vector<std::vector<Array>> scans(num_scan);
  int64_t i = 0;
  for (; go && i < limit; ++i) {
    std::vector<Array> ins = {numpy::array(std::vector<int32_t>{int32_t(i)}, {}), numpy::array(std::vector<bool>{go}, {})};
    ins.insert(ins.end(), carried.begin(), carried.end());
    const std::vector<Array> step = run_subgraph(st, body, env, ins);
    if (step[0].size() != 1) ctx.fail("the body's condition output has shape ", shape_str(step[0].shape()), ", expected one element");
    if (body_decides) go = flag(step[0]);
    std::copy(step.begin() + 1, step.begin() + 1 + long(nv), carried.begin());
    for (size_t k = 0; k < num_scan; ++k) scans[k].push_back(step[1 + nv + k]);
  }
  if (i == 0) return with_empty_scans(st, body, env, carried);
  std::vector<Array> outs = carried;
  for (size_t k = 0; k < num_scan; ++k) outs.push_back(numpy::stack(scans[k], 0));
  return outs;
}

// A Loop whose body computes its condition and has scan outputs: the number of iterations,
// and so the scan outputs' length, is known only once it has run, which no trace can hold.
// It runs on concrete values (Model::run evaluates such a graph without jit), unrolled.
std::vector<Array> run_loop_eagerly(const ModelState& st, const NodeContext& ctx, const std::map<std::string, Array>& env,
                                    const Array& cond, const std::vector<Array>& carried) {
  auto concrete = [](const Array& a) { return !frontend::tracer_of(a); };
  const bool trip_concrete = !ctx.has_input(0) || concrete(ctx.input(0));
  if (!trip_concrete || !concrete(cond) || !std::all_of(carried.begin(), carried.end(), concrete))
    ctx.fail("its body computes the condition and it has scan outputs, whose length depends on the data: such a loop ",
             "runs eagerly (Model::run does so for a graph holding one) and cannot be traced by jit, grad or vmap");
  // Without a trip count only the condition ends the loop.
  const int64_t limit = ctx.has_input(0) ? ctx.host_ints(0).at(0) : std::numeric_limits<int64_t>::max();
  return unroll_loop(st, ctx, env, limit, cond.to_vector<double>()[0] != 0, true, carried);
}

// Whether a Loop body reads its iteration number or a carried value on the host (a Slice
// start, a Reshape shape): a compiled loop would give it a traced value there, so the loop
// is unrolled while translating instead (its count must be known then).
bool body_reads_state_on_host(const ModelState& st, const OnnxGraph& body) {
  std::vector<std::string> names;
  for (const formats::OnnxValueInfo& v : body.inputs) names.push_back(v.name);
  const std::vector<bool> host = find_static_inputs(body, st.rules, names);
  for (size_t i = 0; i < host.size(); ++i)
    if (host[i] && i != 1) return true;  // input 1, the condition, is a loop invariant here
  return false;
}

// Loop (inputs: trip count M, condition, carried values; body: (iteration, condition,
// carried) -> (condition, carried, scan outputs)) as kiln's control flow, so a traced loop
// stays one loop. A trip count known while translating, a condition known then (a static
// input when there are scan outputs) and a body that passes its condition through give a
// fixed count: a scan of that many steps, scan outputs stacked as ONNX does. A body that
// computes its condition and has no scan outputs: a while loop on (condition and
// iteration < M). With scan outputs too, the count and so their length depend on the data:
// run_loop_eagerly.
std::vector<Array> run_loop(const ModelState& st, const NodeContext& ctx, const std::map<std::string, Array>& env) {
  const OnnxGraph& body = ctx.node().find_attribute("body")->graphs.at(0);
  std::vector<Array> carried;
  for (size_t i = 2; i < ctx.num_inputs(); ++i) carried.push_back(ctx.input(i));
  const size_t nv = carried.size();
  if (body.inputs.size() != nv + 2 || body.outputs.size() < nv + 1)
    ctx.fail("the body has ", body.inputs.size(), " inputs and ", body.outputs.size(), " outputs for ", nv, " carried values");
  const size_t num_scan = scan_outputs_of(body);
  const Array yes = numpy::array(std::vector<bool>{true}, {});
  const Array cond = ctx.has_input(1) ? ctx.input(1).astype(bool_).reshape({}) : yes;
  const bool cond_known = !frontend::tracer_of(cond);
  const bool passes = condition_passes_through(body);
  if (num_scan > 0 && !passes) return run_loop_eagerly(st, ctx, env, cond, carried);
  const std::optional<int64_t> trip = ctx.has_input(0) ? std::optional<int64_t>(ctx.host_ints(0).at(0)) : std::nullopt;
  const bool cond_true = cond_known && cond.to_vector<double>()[0] != 0;
  if (passes && cond_true && !trip)
    ctx.fail("it has no trip count and its condition is true and never changes: the loop would not end");
  if (passes && cond_known) {
    const int64_t count = cond_true ? std::max<int64_t>(*trip, 0) : 0;
    if (count == 0 && num_scan > 0) return with_empty_scans(st, body, env, carried);
    if (body_reads_state_on_host(st, body)) return unroll_loop(st, ctx, env, count, true, false, carried);
    carried.insert(carried.begin(), numpy::array(std::vector<int32_t>{0}, {}));
    std::vector<Array> outs = lax::scan_flat(
        [&](const std::vector<Array>& c) {
          std::vector<Array> ins = {c[0], yes};
          ins.insert(ins.end(), c.begin() + 1, c.end());
          std::vector<Array> step = run_subgraph(st, body, env, ins);
          step[0] = c[0] + 1;  // the counter in place of the condition
          return step;
        },
        carried, {}, count);
    outs.erase(outs.begin());
    return outs;
  }
  if (num_scan > 0)
    ctx.fail("scan outputs of a loop whose condition is fed as a traced value are not supported: their length would ",
             "depend on the data (feed the condition as a constant or graph input, which kiln then reads while translating)");
  carried.insert(carried.begin(), {numpy::array(std::vector<int32_t>{0}, {}), cond});
  std::vector<Array> outs = lax::while_flat(
      [&](const std::vector<Array>& c) {
        Array go = c[1];
        if (trip) go = numpy::logical_and(go, c[0] < Array(int32_t(*trip)));
        return std::vector<Array>{go};
      },
      [&](const std::vector<Array>& c) {
        std::vector<Array> step = run_subgraph(st, body, env, c);
        step[0] = step[0].astype(bool_).reshape({});
        step.insert(step.begin(), c[0] + 1);
        return step;
      },
      carried);
  outs.erase(outs.begin(), outs.begin() + 2);
  return outs;
}

// The ops whose subgraphs read the enclosing scope, run by the evaluator rather than a rule.
using GraphOp = std::vector<Array> (*)(const ModelState&, const NodeContext&, const std::map<std::string, Array>&);
const std::map<std::string, GraphOp>& graph_ops() {
  static const std::map<std::string, GraphOp> ops = {{"If", run_if}, {"Loop", run_loop}};
  return ops;
}

// Runs the nodes of `g` (the model's graph or a branch) in order over `env`, the values in
// scope, adding each node's outputs to it.
void run_nodes(const ModelState& st, const OnnxGraph& g, std::map<std::string, Array>& env) {
  for (const OnnxNode& n : g.nodes) {
    std::vector<std::optional<Array>> args;
    for (const std::string& in : n.inputs) args.push_back(in.empty() ? std::nullopt : std::optional<Array>(env.at(in)));
    const NodeContext ctx(n, st.opset, std::move(args), st.bytes, &st.value_types);
    std::vector<Array> outs;
    try {
      const auto graph_op = graph_ops().find(n.op_type);
      outs = graph_op != graph_ops().end() ? graph_op->second(st, ctx, env) : st.rules.at(&n)->rule(ctx);
    } catch (const Error& e) {
      // A library error inside a rule is told with the node it happened in.
      const std::string what = e.what();
      if (what.rfind("onnx: node", 0) == 0) throw;
      ctx.fail(what);
    }
    if (outs.size() < n.outputs.size()) ctx.fail("gives ", outs.size(), " outputs, the node names ", n.outputs.size());
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (!n.outputs[k].empty()) env[n.outputs[k]] = outs[k];
  }
}

std::vector<Array> evaluate(const ModelState& st, const std::vector<Array>& inputs) {
  if (inputs.size() != st.inputs.size())
    fail("onnx", "the graph takes ", st.inputs.size(), " inputs, got ", inputs.size());
  std::map<std::string, int64_t> params;
  std::map<std::string, Array> env = st.constants;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_feed(st.inputs[i], inputs[i], params);
    env[st.input_names[i]] = inputs[i];
  }
  run_nodes(st, st.model.graph, env);
  std::vector<Array> result;
  for (const std::string& name : st.output_names) result.push_back(env.at(name));
  return result;
}

// Which graph inputs a rule reads on the host, directly or through other nodes (Shape and
// Size read only shapes, so the search stops there). Nodes are in topological order, so
// one pass from the last node back finds every such value.
std::vector<bool> find_static_inputs(const OnnxGraph& g, const std::map<const OnnxNode*, const OpRule*>& rules,
                                     const std::vector<std::string>& inputs) {
  std::set<std::string> needed;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const OnnxNode& n = g.nodes[i];
    for (int k : rules.at(&n)->host_inputs)
      if (size_t(k) < n.inputs.size()) needed.insert(n.inputs[size_t(k)]);
    // A Loop with scan outputs needs its condition while translating (it fixes their length).
    if (n.op_type == "Loop" && n.inputs.size() > 1 && !n.inputs[1].empty()) {
      const formats::OnnxAttribute* b = n.find_attribute("body");
      if (b && !b->graphs.empty() && scan_outputs_of(b->graphs[0]) > 0) needed.insert(n.inputs[1]);
    }
    const bool reads_values = n.op_type != "Shape" && n.op_type != "Size";
    if (reads_values && std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) { return needed.count(o); }))
      needed.insert(n.inputs.begin(), n.inputs.end());
  }
  std::vector<bool> out;
  for (const std::string& name : inputs) out.push_back(needed.count(name) > 0);
  return out;
}

// A static input travels through jit as a tree of scalars (its dtype, shape and values), so
// its values are part of the compiled program's signature and stay readable while tracing.
Tree static_tree(const Array& a) {
  Tree::List shape, values;
  for (int64_t d : a.shape()) shape.push_back(double(d));
  for (double v : a.to_vector<double>()) values.push_back(v);
  return Tree::Dict{{"dtype", double(int(a.dtype()))}, {"shape", shape}, {"values", values}};
}

Array from_static_tree(const Tree& t) {
  Shape shape;
  for (const Tree& d : t["shape"].list()) shape.push_back(int64_t(d.scalar()));
  std::vector<double> values;
  for (const Tree& v : t["values"].list()) values.push_back(v.scalar());
  const DType dtype = DType(int(t["dtype"].scalar()));
  switch (dtype) {
    case DType::Int32: return numpy::array(std::vector<int32_t>(values.begin(), values.end()), shape);
    case DType::Uint32: return numpy::array(std::vector<uint32_t>(values.begin(), values.end()), shape);
    case DType::Bool: return numpy::array(std::vector<bool>(values.begin(), values.end()), shape);
    case DType::Float64: return numpy::array(values, shape);
    default: return numpy::array(std::vector<float>(values.begin(), values.end()), shape).astype(dtype);
  }
}

Tree evaluate_tree(const ModelState& st, const std::vector<Tree>& args) {
  if (args.size() != 1 || !args[0].is_list()) fail("onnx", "the graph function takes one list of inputs");
  std::vector<Array> ins;
  for (const Tree& t : args[0].list()) ins.push_back(t.as_array());
  Tree::List outs;
  for (const Array& a : evaluate(st, ins)) outs.push_back(a);
  return outs;
}


// The bytes of the external file at a location (each read once per load), or nullopt.
using FileSource = std::function<const std::vector<uint8_t>*(const std::string& location)>;

// Makes every external tensor an ordinary raw_data tensor: its checked range is appended to
// the model's bytes, which the rest of the loader (and attribute tensors decoded while
// tracing) reads as if the file had held it inline.
void resolve_external(ModelState& st, const FileSource& file_of, const std::string& where) {
  for (auto& [t, ref] : formats::onnx_external_tensors(st.model)) {
    const std::vector<uint8_t>* file = file_of(ref.location);
    if (!file) fail("onnx", "tensor '", t->name, "': its external data file '", ref.location, "' ", where);
    const std::span<const uint8_t> data = formats::onnx_external_data(*t, ref, *file);
    t->raw_offset = st.bytes.size();
    t->raw_size = data.size();
    st.bytes.insert(st.bytes.end(), data.begin(), data.end());
    t->has_raw_data = true;
    t->external = false;
  }
}

// Every name the nodes of `g` read, those of its branches and loop bodies too (they read
// the enclosing scope by name), with how often.
// A Gemm with transB = 1 and a constant float32 B (a Linear layer as exported: W[N, K])
// would read W^T's 4 SIMD lanes K floats apart on every call; stored transposed once here,
// the product reads contiguous lanes and takes the wasm backend's register-blocked loop
// (bench/results/onnx_models.md). The node then reads the copy with transB = 0 (the same
// products; only the kernel's order of summation may differ). A B fed at run time keeps
// the transpose in the graph; one read by anything else too keeps its own constant beside
// the copy.
void pretranspose_gemm_weights(OnnxGraph& g, std::map<std::string, Array>& constants) {
  // A graph output, or a graph input an initializer gives the default of (IR < 4), keeps it.
  std::map<std::string, int> reads = count_value_reads(g);
  std::map<std::string, std::string> copies;  // B's name -> its transposed constant's
  for (OnnxNode& n : g.nodes) {
    if (n.op_type != "Gemm" || (n.domain != "" && n.domain != "ai.onnx") || n.inputs.size() < 2) continue;
    auto trans = std::find_if(n.attributes.begin(), n.attributes.end(), [](const auto& a) { return a.name == "transB"; });
    auto b = constants.find(n.inputs[1]);
    if (trans == n.attributes.end() || trans->i != 1 || trans->type != formats::OnnxAttributeType::Int ||
        b == constants.end() || b->second.dtype() != float32 || b->second.ndim() != 2)
      continue;
    auto [copy, fresh] = copies.emplace(b->first, b->first + "\x1f(kiln: transposed)");
    if (fresh) {
      const Array& w = b->second;
      const int64_t rows = w.shape(0), cols = w.shape(1);
      const std::vector<float> v = w.to_vector<float>();
      std::vector<float> t(v.size());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = v[size_t(r * cols + c)];
      constants[copy->second] = numpy::array(t, {cols, rows});
    }
    --reads[n.inputs[1]];
    n.inputs[1] = copy->second;
    trans->i = 0;
  }
  for (const auto& [name, _] : copies)
    if (reads[name] == 0) constants.erase(name);  // read by those Gemms only
}

std::shared_ptr<ModelState> parse_state(std::span<const uint8_t> bytes) {
  auto st = std::make_shared<ModelState>();
  st->bytes.assign(bytes.begin(), bytes.end());
  st->model = formats::parse_onnx_model(st->bytes);
  return st;
}

}  // namespace

Model Model::load(std::span<const uint8_t> bytes) { return load(bytes, ExternalData{}); }

Model Model::load(std::span<const uint8_t> bytes, const ExternalData& external_data) {
  auto st = parse_state(bytes);
  std::string given;
  std::map<std::string, const std::vector<uint8_t>*> by_location;  // keys written as the records are
  for (const auto& [name, data] : external_data) {
    given += (given.empty() ? "'" : ", '") + name + "'";
    by_location[formats::onnx_external_location(name)] = &data;
  }
  resolve_external(*st, [&](const std::string& location) {
    auto it = by_location.find(location);
    return it == by_location.end() ? nullptr : it->second;
  }, given.empty() ? "was not given (no external files were passed: load the model from its path, or pass its files "
                     "by location)"
                   : "was not given (external files given: " + given + ")");
  return from_state(std::move(st));
}

Model Model::load_file(const std::string& path) {
  const auto bytes = read_file_bytes(path);
  if (!bytes) fail("onnx", "cannot read the model file '", path, "'");
  auto st = parse_state(*bytes);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::map<std::string, std::optional<std::vector<uint8_t>>> files;
  resolve_external(*st, [&](const std::string& location) -> const std::vector<uint8_t>* {
    auto it = files.find(location);
    if (it == files.end()) it = files.emplace(location, read_file_bytes((dir / location).string())).first;
    return it->second ? &*it->second : nullptr;
  }, "cannot be read from the model's directory '" + dir.string() + "'");
  return from_state(std::move(st));
}

std::vector<std::string> Model::external_files(std::span<const uint8_t> bytes) {
  formats::OnnxModel m = formats::parse_onnx_model(bytes);
  std::vector<std::string> out;
  for (const auto& [t, ref] : formats::onnx_external_tensors(m))
    if (std::find(out.begin(), out.end(), ref.location) == out.end()) out.push_back(ref.location);
  return out;
}

Model Model::from_state(std::shared_ptr<ModelState> st) {
  st->opset = st->model.opset_version("");
  if (st->opset == 0) fail("onnx", "the model imports no opset of the default domain (ai.onnx)");
  const OnnxGraph& g = st->model.graph;
  for (const formats::OnnxTensor& t : g.initializers) st->constants[t.name] = tensor_to_array(st->bytes, t);
  pretranspose_gemm_weights(st->model.graph, st->constants);
  fold_conv_affines(st->model.graph, st->constants, st->bytes);
  for (const formats::OnnxValueInfo& v : g.inputs) {
    if (st->constants.count(v.name)) continue;  // an initializer listed as an input (IR < 4): a default
    st->inputs.push_back(spec_of(v, "input"));
    st->input_names.push_back(v.name);
  }
  for (const formats::OnnxValueInfo& v : g.outputs) {
    st->outputs.push_back(spec_of(v, "output"));
    st->output_names.push_back(v.name);
  }
  find_rules(*st, g);
  check_order(g, st->input_names, st->constants);
  st->eager = has_data_dependent_scan(g);
  std::weak_ptr<const ModelState> weak = st;  // the jitted Fn must not keep its owner alive
  st->static_inputs = find_static_inputs(g, st->rules, st->input_names);
  st->jitted = jit(
      [weak](const std::vector<Tree>& args) {
        auto s = weak.lock();
        Tree::List all;
        size_t dynamic = 0, fixed = 0;
        for (bool is_static : s->static_inputs)
          all.push_back(is_static ? Tree(from_static_tree(args.at(1)[fixed++])) : args.at(0)[dynamic++]);
        return evaluate_tree(*s, {Tree(all)});
      },
      {1});
  Model m;
  m.state_ = st;
  return m;
}

const std::vector<std::string>& Model::input_names() const { return state_->input_names; }
const std::vector<std::string>& Model::output_names() const { return state_->output_names; }
const std::vector<ValueSpec>& Model::inputs() const { return state_->inputs; }
const std::vector<ValueSpec>& Model::outputs() const { return state_->outputs; }
int64_t Model::opset() const { return state_->opset; }

std::vector<Array> Model::call(const std::vector<Array>& inputs) const { return evaluate(*state_, inputs); }

Fn Model::function() const {
  auto st = state_;
  return [st](const std::vector<Tree>& args) { return evaluate_tree(*st, args); };
}

std::map<std::string, Array> Model::run(const std::map<std::string, Array>& feeds) const {
  Tree::List ins;
  for (const std::string& name : state_->input_names) {
    auto it = feeds.find(name);
    if (it == feeds.end()) fail("onnx.run", "no feed for input '", name, "'");
    ins.push_back(it->second);
  }
  for (const auto& [name, _] : feeds)
    if (!std::count(state_->input_names.begin(), state_->input_names.end(), name))
      fail("onnx.run", "feed '", name, "' is not an input of the graph");
  // Checked eagerly first, so a bad feed names the input rather than a traced failure.
  std::map<std::string, int64_t> params;
  for (size_t i = 0; i < state_->inputs.size(); ++i) check_feed(state_->inputs[i], ins[i].array(), params);
  if (state_->eager) {
    // A Loop's scan outputs have a length only known while it runs: the graph runs eagerly.
    std::vector<Array> arrays;
    for (const Tree& t : ins) arrays.push_back(t.array());
    const std::vector<Array> outs = evaluate(*state_, arrays);
    std::map<std::string, Array> result;
    for (size_t i = 0; i < state_->output_names.size(); ++i) result[state_->output_names[i]] = outs[i];
    return result;
  }
  Tree::List dynamic, fixed;
  for (size_t i = 0; i < ins.size(); ++i)
    (state_->static_inputs[i] ? fixed : dynamic).push_back(state_->static_inputs[i] ? static_tree(ins[i].array()) : ins[i]);
  const Tree out = state_->jitted({Tree(dynamic), Tree(fixed)});
  std::map<std::string, Array> result;
  for (size_t i = 0; i < state_->output_names.size(); ++i) result[state_->output_names[i]] = out[i].array();
  return result;
}

}  // namespace kiln::onnx
