// Loading an ExecuTorch program (operator coverage, constants as Arrays) and running a
// method: inputs checked, then the chains' instructions executed in order under kiln::jit.
#include "models/executorch/program.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "backend/backend.h"
#include "frontend/array_impl.h"
#include "frontend/jit.h"
#include "ir/debug.h"
#include "ir/error.h"
#include "library/numpy.h"
#include "models/executorch/constant_folding.h"
#include "models/executorch/frame.h"
#include "models/executorch/named_data.h"
#include "models/executorch/operator_rules.h"
#include "models/executorch/symbolic.h"

namespace kiln::executorch {

using namespace formats;

namespace {

constexpr const char* kOp = "executorch";
// A jump back to itself would loop forever; honest programs run each instruction a few
// times at most (loops are unrolled by export), so this bound only stops malformed ones.
constexpr int64_t kMaxSteps = 10'000'000;

// A bucket: for each dim of the method's dynamic inputs (in input, then dim order), the
// bucket's extent, or -1 where the dim is not dynamic in this call.
using BucketKey = std::vector<int64_t>;

struct Method {
  const PteExecutionPlan* plan = nullptr;
  std::vector<Array> constants;  // by value index; empty handles for non-constants
  std::vector<OpRule> rules;     // by operator index
  // Instructions computed at load (constant_folding.h): their results, by instruction.
  std::map<const PteInstruction*, Array> folded;
  // Batch norms folded into their convolution's constants: the shift left to add, if any.
  std::map<const PteInstruction*, Array> folded_batch_norms;
  Fn compiled;
  int traces = 0;
  // Bucketed traces (symbolic.h): the input dims the program reads with sym_size or that a
  // call gave below their planned bound (dynamic from then on).
  std::set<std::pair<size_t, int>> dynamic_dims;
  // Per traced bucket: for each output, for each axis, which of the trace's extra outputs
  // holds its valid extent (-1: the whole axis is valid).
  std::map<BucketKey, std::vector<std::vector<int>>> layouts;
  std::set<BucketKey> exact;  // buckets whose trace needed an exact shape
  const BucketKey* tracing = nullptr;  // the bucket being traced (nullptr: an exact shape)
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
      if (auto f = m.folded.find(&in); f != m.folded.end()) call.result(f->second);
      else if (auto b = m.folded_batch_norms.find(&in); b != m.folded_batch_norms.end())
        run_folded_batch_norm(call, b->second);
      else if (frame.symbolic()) run_symbolic(call, m.rules[size_t(k->op_index)]);
      else m.rules[size_t(k->op_index)](call);
    } else if (const auto* mv = std::get_if<PteMoveCall>(&in)) {
      frame.write(mv->move_to, frame.read(mv->move_from));
      Slot &to = frame.slot(mv->move_to), &from = frame.slot(mv->move_from);
      to.runtime_int = from.runtime_int;
      to.sym = from.sym;
      to.axes = from.axes;
    } else if (const auto* j = std::get_if<PteJumpFalseCall>(&in)) {
      if (!jump_condition(frame, j->cond_value_index)) pc = size_t(j->destination_instruction);
    } else if (const auto* f = std::get_if<PteFreeCall>(&in)) {
      frame.slot(f->value_index).array = Array();
    } else {
      fail(kOp, plan.name, ": delegate calls are not supported");
    }
  }
}

// A bucketed trace's inputs: each dynamic dim (key >= 0) is a symbol whose valid extent is
// the next hidden argument after the method's inputs.
void bind_symbols(Frame& frame, const Method& m, const std::vector<Tree>& args) {
  const PteExecutionPlan& plan = *m.plan;
  frame.set_symbolic(true);
  size_t next = plan.inputs.size(), at = 0;
  for (size_t k = 0; k < plan.inputs.size(); ++k) {
    const Array x = args[k].array();
    if (input_tensor(plan, k).shape_dynamism == PteShapeDynamism::Static) continue;
    std::vector<int> axes(size_t(x.ndim()), -1);
    for (int d = 0; d < x.ndim(); ++d)
      if ((*m.tracing).at(at++) >= 0) axes[size_t(d)] = frame.add_sym(Sym{x.shape(d), args.at(next++).array()});
    frame.slot(plan.inputs[k]).axes = axes;
  }
}

// The method as a kiln function of its tensor inputs (then, in a bucketed trace, the valid
// extents); outputs in the plan's order, then the valid extents of the outputs' dynamic axes.
Tree trace_method(Method& m, const std::vector<Tree>& args) {
  ++m.traces;
  const PteExecutionPlan& plan = *m.plan;
  Frame frame(plan, m.constants);
  for (size_t k = 0; k < plan.inputs.size(); ++k) frame.write(plan.inputs[k], args[k].array());
  if (m.tracing) bind_symbols(frame, m, args);
  int64_t steps = 0;
  for (const PteChain& chain : plan.chains) run_chain(frame, chain, m, steps);
  Tree::List outs, extents;
  std::vector<std::vector<int>> layout;
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const Slot& s = frame.slot(plan.outputs[k]);
    layout.emplace_back();
    if (Array a = frame.read(plan.outputs[k]); a.valid()) {
      outs.push_back(a);
      for (int d = 0; d < a.ndim(); ++d) {
        const int sym = d < int(s.axes.size()) ? s.axes[size_t(d)] : -1;
        layout.back().push_back(sym < 0 ? -1 : int(extents.size()));
        if (sym >= 0) extents.push_back(frame.sym(sym).valid);
      }
    } else if (s.sym >= 0) {
      outs.push_back(frame.sym(s.sym).valid);
    } else if (s.runtime_int || std::holds_alternative<int64_t>(s.value->value)) {
      const int64_t v = s.runtime_int ? *s.runtime_int : std::get<int64_t>(s.value->value);
      if (v < INT32_MIN || v > INT32_MAX) fail(kOp, plan.name, ": output ", k, " ", v, " exceeds int32");
      outs.push_back(numpy::array(std::vector<int32_t>{int32_t(v)}, Shape{}));
    } else {
      fail(kOp, plan.name, ": output ", k, " (value ", plan.outputs[k], ") is never computed");
    }
  }
  if (m.tracing) m.layouts[*m.tracing] = layout;
  for (const Tree& e : extents) outs.push_back(e);
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

// Copies the block shared by two C-order buffers (the smaller extent on each axis) from `src`
// of shape `ss` to `dst` of shape `ds`, `es` bytes an element: padding an input to its bucket
// and cutting an output to its valid extents on the host, so that neither compiles a kernel.
void copy_block(const uint8_t* src, const Shape& ss, uint8_t* dst, const Shape& ds, size_t es) {
  const size_t r = ss.size();
  if (r == 0) return void(std::memcpy(dst, src, es));
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < r; ++d) rows *= std::min(ss[d], ds[d]);
  const size_t row_bytes = size_t(std::min(ss[r - 1], ds[r - 1])) * es;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t rest = row, so = 0, dof = 0, sstride = ss[r - 1], dstride = ds[r - 1];
    for (size_t d = r - 1; d-- > 0;) {
      const int64_t i = rest % std::min(ss[d], ds[d]);
      rest /= std::min(ss[d], ds[d]);
      so += i * sstride;
      dof += i * dstride;
      sstride *= ss[d];
      dstride *= ds[d];
    }
    std::memcpy(dst + size_t(dof) * es, src + size_t(so) * es, row_bytes);
  }
}

// An array of `bytes` on `device` (numpy::array's, on a given device rather than the default
// one, so the jit program runs where the caller's inputs are).
Array device_array(const std::vector<uint8_t>& bytes, const Shape& shape, DType dtype, const std::string& device) {
  BufferRef buf = get_backend(device).allocate(std::max<int64_t>(int64_t(bytes.size()), 1));
  if (!bytes.empty()) buf->backend().write(buf->handle(), 0, bytes.data(), int64_t(bytes.size()));
  return Array(frontend::make_from_buffer({shape, dtype, false}, device, buf));
}

// `x` with the extents `shape` (padded with zeros, or cut), copied on the host.
Array host_resize(const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const std::vector<uint8_t> src = x.bytes();
  const size_t es = x.size() ? src.size() / size_t(x.size()) : 4;
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<uint8_t> dst(size_t(n) * es, 0);
  copy_block(src.data(), x.shape(), dst.data(), shape, es);
  return device_array(dst, shape, x.dtype(), x.device());
}

int64_t bucket_extent(int64_t n, int64_t bound, bool bounded) {
  int64_t b = 1;
  while (b < n) b *= 2;
  return bounded ? std::min(b, bound) : b;
}

// The input dims the method reads with sym_size: its dynamic dims as exported.
void find_dynamic_dims(Method& m) {
  const PteExecutionPlan& plan = *m.plan;
  for (const PteChain& chain : plan.chains)
    for (const PteInstruction& in : chain.instructions) {
      const auto* k = std::get_if<PteKernelCall>(&in);
      if (!k || plan.operators[size_t(k->op_index)].full_name() != "aten::sym_size.int" || k->args.size() < 2)
        continue;
      const auto input = std::find(plan.inputs.begin(), plan.inputs.end(), k->args[0]);
      const auto* dim = std::get_if<int64_t>(&plan.values.at(size_t(k->args[1])).value);
      if (input == plan.inputs.end() || !dim) continue;
      const auto* t = std::get_if<PteTensor>(&plan.values.at(size_t(*input)).value);
      const int64_t rank = t ? int64_t(t->sizes.size()) : 0;
      if (t && *dim >= -rank && *dim < rank)
        m.dynamic_dims.insert({size_t(input - plan.inputs.begin()), int(*dim < 0 ? *dim + rank : *dim)});
    }
}

// The call's bucket: each dim of a dynamic input that the program reads as a size or that is
// below its planned bound rounds up to a power of two (clipped to the bound).
BucketKey bucket_key(Method& m, const std::vector<Array>& inputs) {
  BucketKey key;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const PteTensor& t = input_tensor(*m.plan, k);
    if (t.shape_dynamism == PteShapeDynamism::Static) continue;
    for (int d = 0; d < inputs[k].ndim(); ++d) {
      const int64_t n = inputs[k].shape(d), bound = t.sizes[size_t(d)];
      if (n != bound) m.dynamic_dims.insert({k, d});
      const bool dynamic = m.dynamic_dims.count({k, d}) > 0;
      key.push_back(dynamic ? bucket_extent(n, bound, t.shape_dynamism == PteShapeDynamism::DynamicBound) : -1);
    }
  }
  return key;
}

// Runs `m` traced at the bucket `key`: inputs padded to it and the valid extents as hidden
// arguments; outputs cut to their valid extents. Throws NeedsExactShape (from the trace).
std::vector<Array> run_bucket(Method& m, const BucketKey& key, const std::vector<Array>& inputs) {
  std::vector<Tree> args, extents;
  size_t at = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (input_tensor(*m.plan, k).shape_dynamism == PteShapeDynamism::Static) {
      args.push_back(inputs[k]);
      continue;
    }
    Shape padded = inputs[k].shape();
    for (size_t d = 0; d < padded.size(); ++d, ++at)
      if (key[at] >= 0) {
        const int32_t n = int32_t(padded[d]);
        const auto* b = reinterpret_cast<const uint8_t*>(&n);
        extents.push_back(device_array({b, b + 4}, Shape{}, int32, inputs[k].device()));
        padded[d] = key[at];
      }
    args.push_back(host_resize(inputs[k], padded));
  }
  args.insert(args.end(), extents.begin(), extents.end());
  struct Reset {
    Method& m;
    ~Reset() { m.tracing = nullptr; }
  } reset{m};
  m.tracing = &key;
  const Tree::List out = m.compiled(args).list();
  const std::vector<std::vector<int>>& layout = m.layouts.at(key);
  const size_t n = m.plan->outputs.size();
  std::vector<Array> arrays;
  for (size_t k = 0; k < n; ++k) {
    Shape valid = out[k].array().shape();
    for (size_t d = 0; d < layout[k].size(); ++d)
      if (layout[k][d] >= 0) valid[d] = out.at(n + size_t(layout[k][d])).array().to_vector<int32_t>().at(0);
    arrays.push_back(host_resize(out[k].array(), valid));
  }
  return arrays;
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
    find_dynamic_dims(m);
    m.constants.resize(plan.values.size());
    for (size_t v = 0; v < plan.values.size(); ++v)
      if (const auto* t = std::get_if<PteTensor>(&plan.values[v].value); t && t->is_constant())
        m.constants[v] = constant_array(state->bytes, *t,
                                        plan.name + ": constant value " + std::to_string(v));
      else if (t && t->is_external())
        m.constants[v] = external_array(named_data, *t, plan.name + ": value " + std::to_string(v));
    m.folded = fold_constant_permutes(plan, m.constants, m.rules);
    m.folded_batch_norms = fold_conv_batch_norms(plan, m.constants);
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

namespace {

Method& find_method(std::map<std::string, Method>& methods, const std::string& method, const Pte& pte) {
  auto it = methods.find(method);
  if (it == methods.end()) {
    std::string list;
    for (const PteExecutionPlan& plan : pte.execution_plan) list += (list.empty() ? "'" : ", '") + plan.name + "'";
    fail(kOp, "no method '", method, "' (the program has ", list.empty() ? "none" : list, ")");
  }
  return it->second;
}

std::vector<Array> run_traced(Method& m, const std::vector<Array>& inputs) {
  const std::vector<Tree> args(inputs.begin(), inputs.end());
  const Tree out = m.compiled(args);
  std::vector<Array> arrays;
  for (const Tree& t : out.list()) arrays.push_back(t.array());
  return arrays;
}

}  // namespace

std::vector<Array> Program::run(const std::string& method, const std::vector<Array>& inputs) const {
  Method& m = find_method(state_->methods, method, state_->pte);
  check_inputs(*m.plan, inputs);
  // A method with dynamic inputs runs traced per bucket; one that needs an exact shape
  // (an operator without a symbolic rule) falls back to a trace per size.
  // Padding and cutting copy through the host, which needs synchronous reads (webgpu has only
  // asynchronous ones: there each size is traced at its exact shape, as before buckets).
  const bool host_copies = std::all_of(inputs.begin(), inputs.end(), [](const Array& a) {
    return get_backend(a.device()).can_read_sync();
  });
  const BucketKey key = bucket_key(m, inputs);
  if (host_copies && std::any_of(key.begin(), key.end(), [](int64_t b) { return b >= 0; }) && !m.exact.count(key)) {
    try {
      return run_bucket(m, key, inputs);
    } catch (const NeedsExactShape& e) {
      m.exact.insert(key);
      if (debug_level() >= 1) debug_print("executorch: " + m.plan->name + " traced at exact shapes: " + e.what());
    }
  }
  return run_traced(m, inputs);
}

std::vector<Array> Program::run_exact(const std::string& method, const std::vector<Array>& inputs) const {
  Method& m = find_method(state_->methods, method, state_->pte);
  check_inputs(*m.plan, inputs);
  return run_traced(m, inputs);
}

int Program::traces(const std::string& method) const {
  auto it = state_->methods.find(method);
  return it == state_->methods.end() ? 0 : it->second.traces;
}

const Pte& Program::pte() const { return state_->pte; }

}  // namespace kiln::executorch
