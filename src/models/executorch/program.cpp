// Loading an ExecuTorch program (operator coverage, constants as Arrays) and running a
// method: inputs checked, then the chains' instructions executed in order under kiln::jit.
#include "models/executorch/program.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "frontend/jit.h"
#include "ir/error.h"
#include "library/numpy.h"
#include "models/executorch/frame.h"
#include "models/executorch/named_data.h"
#include "models/executorch/operator_rules.h"

namespace kiln::executorch {

using namespace formats;

namespace {

constexpr const char* kOp = "executorch";
// A jump back to itself would loop forever; honest programs run each instruction a few
// times at most (loops are unrolled by export), so this bound only stops malformed ones.
constexpr int64_t kMaxSteps = 10'000'000;

struct Method {
  const PteExecutionPlan* plan = nullptr;
  std::vector<Array> constants;  // by value index; empty handles for non-constants
  std::vector<OpRule> rules;     // by operator index
  Fn compiled;
  int traces = 0;
};

std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// A constant tensor's bytes as a kiln Array of its kiln dtype (tensor_array, named_data.h).
Array constant_array(std::span<const uint8_t> file, const PteTensor& t, const std::string& where) {
  return tensor_array(pte_tensor_data(file, t), t.scalar_type, Shape(t.sizes.begin(), t.sizes.end()), where);
}

void check_runnable(const PteExecutionPlan& plan, Method& m) {
  std::set<std::string> missing;
  for (const PteOperator& op : plan.operators) {
    const OpRule rule = find_rule(op.full_name());
    if (!rule) missing.insert(op.full_name());
    m.rules.push_back(rule);
  }
  if (!plan.delegates.empty())
    fail(kOp, "method '", plan.name, "' calls delegate '", plan.delegates[0].id,
         "': delegated programs are not supported (export without a partitioner)");
  if (missing.empty()) return;
  std::string names, supported;
  for (const std::string& n : missing) names += (names.empty() ? "" : ", ") + n;
  for (const std::string& n : supported_operators()) supported += (supported.empty() ? "" : ", ") + n;
  fail(kOp, "method '", plan.name, "' uses operators kiln does not support: ", names,
       ". Supported: ", supported);
}

const PteTensor& input_tensor(const PteExecutionPlan& plan, size_t k) {
  const PteValue& v = plan.values.at(size_t(plan.inputs[k]));
  const auto* t = std::get_if<PteTensor>(&v.value);
  if (!t)
    fail(kOp, plan.name, ": input ", k, " is a ", v.kind_name(),
         "; only Tensor inputs are supported");
  return *t;
}

void check_inputs(const PteExecutionPlan& plan, const std::vector<Array>& inputs) {
  if (inputs.size() != plan.inputs.size())
    fail(kOp, plan.name, ": got ", inputs.size(), " inputs, the method takes ", plan.inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const PteTensor& t = input_tensor(plan, k);
    const std::string where = plan.name + ": input " + std::to_string(k);
    const DType want = kiln_dtype(t.scalar_type, where);
    if (inputs[k].dtype() != want)
      fail(kOp, where, ": dtype ", dtype_name(inputs[k].dtype()), ", expected ", dtype_name(want),
           " (the program's ", pte_scalar_type_name(t.scalar_type), ")");
    const Shape& got = inputs[k].shape();
    const Shape planned(t.sizes.begin(), t.sizes.end());
    // DYNAMIC_BOUND sizes are upper bounds; DYNAMIC_UNBOUND ones say nothing.
    const bool dynamic = t.shape_dynamism != PteShapeDynamism::Static;
    const bool unbound = t.shape_dynamism == PteShapeDynamism::DynamicUnbound;
    bool ok = got.size() == planned.size();
    for (size_t d = 0; ok && d < got.size(); ++d)
      ok = unbound || (dynamic ? got[d] <= planned[d] : got[d] == planned[d]);
    if (!ok)
      fail(kOp, where, ": shape ", shape_text(got), dynamic ? ", expected at most " : ", expected ",
           shape_text(planned));
  }
}

// The condition of a JumpFalseCall: a Bool value (data-dependent jumps cannot be traced).
bool jump_condition(const Frame& frame, int32_t index) {
  const Slot& s = frame.slot(index);
  if (const auto* b = std::get_if<bool>(&s.value->value)) return *b;
  fail(kOp, frame.plan().name, ": a jump on value ", index, " (a ", s.value->kind_name(),
       ") depends on data; kiln traces methods and supports only jumps on Bool constants");
}

void run_chain(Frame& frame, const PteChain& chain, const Method& m, int64_t& steps) {
  const PteExecutionPlan& plan = frame.plan();
  size_t pc = 0;
  while (pc < chain.instructions.size()) {
    if (++steps > kMaxSteps) fail(kOp, plan.name, ": more than ", kMaxSteps, " instructions run");
    const PteInstruction& in = chain.instructions[pc++];
    if (const auto* k = std::get_if<PteKernelCall>(&in)) {
      OpCall call(frame, k->args, plan.operators[size_t(k->op_index)].full_name());
      m.rules[size_t(k->op_index)](call);
    } else if (const auto* mv = std::get_if<PteMoveCall>(&in)) {
      frame.write(mv->move_to, frame.read(mv->move_from));
      frame.slot(mv->move_to).runtime_int = frame.slot(mv->move_from).runtime_int;
    } else if (const auto* j = std::get_if<PteJumpFalseCall>(&in)) {
      if (!jump_condition(frame, j->cond_value_index)) pc = size_t(j->destination_instruction);
    } else if (const auto* f = std::get_if<PteFreeCall>(&in)) {
      frame.slot(f->value_index).array = Array();
    } else {
      fail(kOp, plan.name, ": delegate calls are not supported");
    }
  }
}

// The method as a kiln function of its tensor inputs; outputs in the plan's order.
Tree trace_method(Method& m, const std::vector<Tree>& args) {
  ++m.traces;
  const PteExecutionPlan& plan = *m.plan;
  Frame frame(plan, m.constants);
  for (size_t k = 0; k < args.size(); ++k) frame.write(plan.inputs[k], args[k].array());
  int64_t steps = 0;
  for (const PteChain& chain : plan.chains) run_chain(frame, chain, m, steps);
  Tree::List outs;
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const Slot& s = frame.slot(plan.outputs[k]);
    if (Array a = frame.read(plan.outputs[k]); a.valid()) {
      outs.push_back(a);
    } else if (s.runtime_int || std::holds_alternative<int64_t>(s.value->value)) {
      const int64_t v = s.runtime_int ? *s.runtime_int : std::get<int64_t>(s.value->value);
      if (v < INT32_MIN || v > INT32_MAX) fail(kOp, plan.name, ": output ", k, " ", v, " exceeds int32");
      outs.push_back(numpy::array(std::vector<int32_t>{int32_t(v)}, Shape{}));
    } else {
      fail(kOp, plan.name, ": output ", k, " (value ", plan.outputs[k], ") is never computed");
    }
  }
  return outs;
}

// An external constant from the caller's named data, checked against the program's tensor.
Array external_array(const std::map<std::string, Array>& named_data, const PteTensor& t,
                     const std::string& where) {
  auto it = named_data.find(t.external_name);
  if (it == named_data.end())
    fail(kOp, where, ": external tensor '", t.external_name, "' is not in the named data");
  const DType want = kiln_dtype(t.scalar_type, where);
  const Shape shape(t.sizes.begin(), t.sizes.end());
  if (it->second.dtype() != want || it->second.shape() != shape)
    fail(kOp, where, ": external tensor '", t.external_name, "' is ", dtype_name(it->second.dtype()),
         shape_text(it->second.shape()), ", the program's is ", dtype_name(want), shape_text(shape));
  return it->second;
}

}  // namespace

struct Program::State {
  std::vector<uint8_t> bytes;
  Pte pte;
  std::map<std::string, Method> methods;
};

std::vector<std::pair<std::string, std::pair<DType, Shape>>> Program::external_tensors(const Pte& pte) {
  std::map<std::string, std::pair<DType, Shape>> found;
  for (const PteExecutionPlan& plan : pte.execution_plan)
    for (const PteValue& v : plan.values)
      if (const auto* t = std::get_if<PteTensor>(&v.value); t && t->is_external())
        found[t->external_name] = {kiln_dtype(t->scalar_type, plan.name + ": " + t->external_name),
                                   Shape(t->sizes.begin(), t->sizes.end())};
  return {found.begin(), found.end()};
}

Program Program::load(std::vector<uint8_t> bytes) { return load(std::move(bytes), {}); }

Program Program::load(std::vector<uint8_t> bytes, const std::map<std::string, Array>& named_data) {
  auto state = std::make_shared<State>();
  state->bytes = std::move(bytes);
  state->pte = parse_pte(state->bytes);
  for (const PteExecutionPlan& plan : state->pte.execution_plan) {
    if (state->methods.count(plan.name)) fail(kOp, "two methods are named '", plan.name, "'");
    Method& m = state->methods[plan.name];
    m.plan = &plan;
    check_runnable(plan, m);
    m.constants.resize(plan.values.size());
    for (size_t v = 0; v < plan.values.size(); ++v)
      if (const auto* t = std::get_if<PteTensor>(&plan.values[v].value); t && t->is_constant())
        m.constants[v] = constant_array(state->bytes, *t,
                                        plan.name + ": constant value " + std::to_string(v));
      else if (t && t->is_external())
        m.constants[v] = external_array(named_data, *t, plan.name + ": value " + std::to_string(v));
    Method* method = &m;
    m.compiled = jit([method](const std::vector<Tree>& args) { return trace_method(*method, args); });
  }
  Program p;
  p.state_ = std::move(state);
  return p;
}

std::vector<std::string> Program::method_names() const {
  std::vector<std::string> names;
  for (const PteExecutionPlan& plan : state_->pte.execution_plan) names.push_back(plan.name);
  return names;
}

std::vector<Array> Program::run(const std::string& method, const std::vector<Array>& inputs) const {
  auto it = state_->methods.find(method);
  if (it == state_->methods.end()) {
    std::string names;
    for (const std::string& n : method_names()) names += (names.empty() ? "'" : ", '") + n + "'";
    fail(kOp, "no method '", method, "' (the program has ", names.empty() ? "none" : names, ")");
  }
  check_inputs(*it->second.plan, inputs);
  const std::vector<Tree> args(inputs.begin(), inputs.end());
  const Tree out = it->second.compiled(args);
  std::vector<Array> arrays;
  for (const Tree& t : out.list()) arrays.push_back(t.array());
  return arrays;
}

int Program::traces(const std::string& method) const {
  auto it = state_->methods.find(method);
  return it == state_->methods.end() ? 0 : it->second.traces;
}

const Pte& Program::pte() const { return state_->pte; }

}  // namespace kiln::executorch
