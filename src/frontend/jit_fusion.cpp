// Fusion: a jaxpr becomes a program of Kernels. Movement ops edit views, elementwise chains
// stay one expression, a reduction absorbs its producers and its elementwise epilogue, and
// independent reductions (or outputs) of one size are packed into one kernel. This file plans
// the fusion (Fuser); jit_kernel_emitter.cpp writes the kernels.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "frontend/control.h"
#include "frontend/routine.h"
#include "frontend/jit_kernel_emitter.h"
#include "frontend/lowering_rules.h"

namespace kiln::frontend {

namespace {

using namespace lowering;
using namespace fusion;

// A non-trivial value broadcast to a larger shape is recomputed per element unless it is
// materialized; expressions up to this size are recomputed when no reduction reads them
// (so layer norm's rstd is recomputed per element instead of costing a kernel).
constexpr int kMaxRecomputedNodes = 32;
// A value that more than one equation reads is computed into a buffer before a reduction
// reads it when it loads from more buffers than this (its gathers would be repeated).
constexpr size_t kMaxRecomputedInputs = 2;
// On a device where a dispatch costs more than that (Backend::prefers_fewer_kernels: webgpu),
// a vector broadcast into a reduction is recomputed there, not materialized, when it is a
// small float expression (`is_recomputed_operand`): at most one axis longer than 1, at most
// this many float nodes (index arithmetic aside) and loads, float arithmetic among the ops
// below. RMSNorm's x * rsqrt(mean) * w read by a decode step's q/k/v and gate/up matvec;
// SiLU(gate) * up or GELU(gate) * up of the merged gate/up matvec read by the down matvec.
// Each saves a kernel (and its buffer's round trip) per use; the price is ALU work, once per
// column and group of output rows, beside the weight reads that bound a matvec on a GPU.
// Matrices stay buffers: with prefill's [T, K] operands recomputed in the tiled matmuls'
// loads, webgpu prefill was 10-40 % slower on an H100 (the native tiler's 3x slower), while
// the decode kernel it saved (attention's exp(s - max)) bought 1-3 %. The CPU devices keep
// every buffer: a dispatch costs microseconds there.
constexpr int kMaxRecomputedOperandNodes = 32;
constexpr int kMaxRecomputedOperandLoads = 3;
// On the CPU devices, windows of at least this many elements over a padded (masked) buffer
// read a padded copy of it: each tap of a conv's window otherwise evaluates the padding mask
// and a bounds-checked load per element, and the copy is one pass over the input that every
// tap then reads unmasked. Measured on wasm, 1 thread, least CPU ms per jit call over 60
// (2026-12-07, shared 2-core EPYC at load 16): a 5x5 depthwise conv over 240 x 12 x 80 (PP-OCR
// rec) 6.1-6.7 -> 3.3-3.5 ms; a 3x3 depthwise one over 120 x 12 x 80 1.4 -> 2.0-2.2 ms (the
// copy costs more than 9 masks save) and a dense 3x3 96 -> 24 over 24 x 80 unchanged
// (5.2-6.2 -> 5.7-5.9 ms), hence 5x5 windows and up. Copying for the dense 3x3 conv too
// (each element read taps * Cout = 216 times; 2026-12-07 night, Intel Xeon VM, load 7-9)
// made its unmasked kernel 2.79-2.88 -> 2.21-2.23 ms, but the copy of its NCHW input (rows
// of 82, which index_split.cpp leaves uncut: 1-element pad pieces) took 1.11-1.17 ms, 5.5 ns
// an element against 1.5 for rec's channels-last copy: 3.05-3.13 -> 3.53-3.59 ms a call
// (bench/onnx/conv.mjs). It needs a cheaper copy first (onnx_models.md, 2026-12-07 late night).
constexpr int64_t kMinUnmaskedWindow = 25;
// A padded view of a buffer (not of a constant: a pool's padded all-true mask stays a mask).
bool pads_a_buffer(const AluExp& e, const ShapeTracker& st) {
  bool loads = false;
  e.visit([&](const AluNode& n) { loads |= n.op == AluOp::Load; });
  return loads && std::any_of(st.views().begin(), st.views().end(), [](const View& v) { return v.mask.has_value(); });
}
int64_t window_elements(const Params& p) {
  int64_t n = 1;
  for (int64_t k : p.window) n *= k;
  return n;
}
bool recomputed_in_reduction(AluOp op) {
  switch (op) {
    case AluOp::Var:  // a float Var outside an epilogue is a prelude's value, computed once
    case AluOp::Load: case AluOp::Const: case AluOp::Neg: case AluOp::Add: case AluOp::Sub:
    case AluOp::Mul: case AluOp::Div: case AluOp::Recip: case AluOp::Exp: case AluOp::Exp2:
    case AluOp::Tanh: case AluOp::Erf: case AluOp::Max: case AluOp::Min: case AluOp::Cast:
      return true;
    default:
      return false;
  }
}

bool is_cheap(const Val& v) { return !v.red && !v.pre && lowering::is_cheap(v.exp); }

// exp, log and the activations' tanh and erf: tens of operations per element on the CPU
// devices (kiln's float32 steps, or a libm call), so a softmax's or an activation's value is
// worth a buffer rather than being computed again by a second reader. (Not sin/cos: RoPE's
// angle tables are small, and the rotation that reads them is computed whole for q and k
// together.)
bool has_transcendental(const AluExp& e) {
  bool found = false;
  e.visit([&](const AluNode& n) {
    found |= (n.op >= AluOp::Exp && n.op <= AluOp::Log1p) || n.op == AluOp::Tanh || n.op == AluOp::Erf;
  });
  return found;
}

bool is_recomputed_operand(const Val& v) {
  if (v.red || !is_float(v.aval.dtype)) return false;
  if (std::count_if(v.aval.shape.begin(), v.aval.shape.end(), [](int64_t d) { return d > 1; }) > 1) return false;
  int loads = 0, arithmetic = 0;
  bool plain = true;
  v.exp.visit([&](const AluNode& n) {
    loads += n.op == AluOp::Load;
    if (!is_float(n.dtype)) return;  // index arithmetic: the loads' offsets, shared per column
    arithmetic++;
    if (!recomputed_in_reduction(n.op)) plain = false;
  });
  return plain && arithmetic <= kMaxRecomputedOperandNodes && loads <= kMaxRecomputedOperandLoads;
}

// Where v is its buffer's elements [at, at + size) in row-major order: a plain view of one
// buffer at an offset, unmasked, with row-major strides (axes of length 1 ignored).
std::optional<int64_t> row_major_at(const Val& v) {
  if (!is_view(v) || v.st.views().size() != 1) return std::nullopt;
  const View& w = v.st.views()[0];
  if (w.mask) return std::nullopt;
  const View c = View::contiguous(w.shape);
  for (size_t i = 0; i < w.shape.size(); i++)
    if (w.shape[i] != 1 && w.strides[i] != c.strides[i]) return std::nullopt;
  return w.offset;
}

// Temporaries go back to the pool after the last step that reads them.
void plan_frees(Program& p) {
  std::vector<int> last(p.slots.size(), -1);
  for (size_t i = 0; i < p.steps.size(); i++) {
    if (p.steps[i].out >= 0) last[size_t(p.steps[i].out)] = std::max(last[size_t(p.steps[i].out)], int(i));
    for (int s : p.steps[i].outs) last[size_t(s)] = std::max(last[size_t(s)], int(i));
    for (int s : p.steps[i].ins) last[size_t(s)] = int(i);
  }
  for (size_t s = 0; s < p.slots.size(); s++)
    if (p.slots[s].kind == SlotKind::Temp && last[s] >= 0) p.steps[size_t(last[s])].free_after.push_back(int(s));
}

// Lowers a jaxpr's equations in order with the shared rules (lowering_rules.h), keeping
// values as expressions and pending reductions until a kernel boundary is needed.
class Fuser {
 public:
  Fuser(const Jaxpr& j, Program& p, const std::vector<int64_t>& offsets)
      : j_(j),
        p_(p),
        offsets_(offsets),
        emit_(p),
        fewer_kernels_(get_backend(p.device).prefers_fewer_kernels()),
        prelude_ok_(fewer_kernels_ && get_backend(p.device).recomputes_preludes()) {}

  // The phases: count uses, bind inputs to slots, lower each equation (fusing as it goes),
  // materialize the outputs, then plan when temporaries are freed.
  void run() {
    count_uses();
    bind_inputs();
    for (const Eqn& e : j_.eqns) eqn(e);
    outputs();
    plan_frees(p_);
  }

 private:
  void count_uses() {
    env_.resize(j_.vars.size());
    uses_.assign(j_.vars.size(), 0);
    consumers_.resize(j_.vars.size());
    producer_.assign(j_.vars.size(), -1);
    for (size_t i = 0; i < j_.eqns.size(); i++) {
      for (int o : j_.eqns[i].out) producer_[size_t(o)] = int(i);
      for (auto& a : j_.eqns[i].in)
        if (a.is_var()) {
          uses_[size_t(a.var)]++;
          consumers_[size_t(a.var)].push_back(int(i));
        }
    }
    for (auto& a : j_.outs)
      if (a.is_var()) uses_[size_t(a.var)]++;
    remaining_ = uses_;
  }

  void bind_inputs() {
    for (size_t i = 0; i < j_.invars.size(); i++) {
      const Aval& av = j_.vars[size_t(j_.invars[i])];
      Slot s;
      s.kind = SlotKind::Input;
      s.input = int(i);
      View view = View::contiguous(av.shape);
      view.offset = offsets_.empty() ? 0 : offsets_[i];
      env_[size_t(j_.invars[i])] = std::make_shared<Val>(
          Val{av, AluExp::load(av.dtype, 0, gidx_var(view.size())), {emit_.add_slot(s)}, ShapeTracker(view), nullptr, nullptr});
    }
  }

  ValPtr read(const Atom& a) {
    if (a.is_var()) return env_[size_t(a.var)];
    auto it = consts_.find(a.cst);
    if (it != consts_.end()) return it->second;
    const ArrayImpl& c = *j_.consts[size_t(a.cst)].impl();
    if (c.tracer) throw Error("internal: jit compiled a jaxpr whose constant is a traced array");
    auto v = std::make_shared<Val>(Val{c.aval, c.exp, {}, c.st, nullptr, nullptr});
    for (auto& b : c.inputs) {
      // A buffer of another backend would be read through the wrong handle space.
      if (&b->backend() != &get_backend(p_.device))
        fail("jit", "the function closes over an array on device ", b->backend().name(), " but runs on ", p_.device,
             ", expected its captured arrays on the device of its arguments (devicePut them first)");
      int slot = -1;
      for (size_t s = 0; s < p_.slots.size() && slot < 0; s++)
        if (p_.slots[s].kind == SlotKind::Const && p_.slots[s].constant == b) slot = int(s);
      if (slot < 0) {
        Slot s;
        s.kind = SlotKind::Const;
        s.constant = b;
        slot = emit_.add_slot(std::move(s));
      }
      v->srcs.push_back(slot);
    }
    consts_[a.cst] = v;
    return v;
  }

  // Reductions packed into one kernel compute every body at each element (a select picks
  // one), so only those reading the same buffers share one: layer norm's two means do,
  // two matvecs over different weights do not.
  static bool same_sources(const Pending& a, const Pending& b) {
    std::vector<int> x(a.srcs.begin(), a.srcs.end()), y(b.srcs.begin(), b.srcs.end());
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    x.erase(std::unique(x.begin(), x.end()), x.end());
    y.erase(std::unique(y.begin(), y.end()), y.end());
    return x == y && a.pre == b.pre;
  }

  // Makes v no longer pending, emitting it together with every other live reduction that
  // can share its kernel (e.g. layer norm's mean and mean of squares). A reduction whose
  // live values have diverged epilogues is emitted once, bare, and each of them reads it.
  // `also` are further values about to be emitted (program outputs) that count as live.
  void materialize_pending(const ValPtr& v, const std::vector<ValPtr>& also = {}) {
    if (!v->red) return;
    std::map<const Pending*, std::vector<ValPtr>> by_red;
    std::vector<const Pending*> order;
    auto add = [&](const ValPtr& w) {
      auto& ws = by_red[w->red.get()];
      if (ws.empty()) order.push_back(w->red.get());
      if (std::find(ws.begin(), ws.end(), w) == ws.end()) ws.push_back(w);
    };
    add(v);
    for (size_t i = 0; i < env_.size(); i++)
      if (env_[i] && env_[i]->red && remaining_[i] > 0) add(env_[i]);
    for (auto& w : also)
      if (w->red) add(w);
    std::vector<ValPtr> emit;
    std::vector<std::pair<ValPtr, std::vector<ValPtr>>> splits;
    std::string want;
    for (const Pending* r : order) {
      auto& ws = by_red[r];
      ValPtr c = ws[0];
      if (ws.size() > 1) {
        DType adt = r->body.dtype();
        c = std::make_shared<Val>();
        c->aval = Aval{ws[0]->aval.shape, adt, false};
        c->exp = AluExp::accumulator(adt);
        c->st = ShapeTracker::contiguous(c->aval.shape);
        c->red = ws[0]->red;
      }
      if (want.empty()) want = KernelEmitter::group_key(*c);  // order[0] is v's reduction
      else if (KernelEmitter::group_key(*c) != want || !same_sources(*r, *v->red)) continue;
      emit.push_back(c);
      if (ws.size() > 1) splits.push_back({c, ws});
    }
    emit_.materialize(emit, true);
    for (auto& [raw, ws] : splits)
      for (auto& w : ws) {
        // Pending values are row-major, so acc at w's flat index is raw's element there.
        Srcs ins{w->srcs};
        AluExp acc = val_at(*raw, unravel(gidx_var(raw->aval.size()), raw->aval.shape), ins);
        w->srcs = ins.slots;
        w->exp = w->exp.substitute(VarId::Acc, acc);
        w->red = nullptr;
      }
  }

  // A reduction over axes of length 1 only drops them (reduce() makes it elementwise).
  bool keeps_size(const Eqn& e) const {
    if (!e.in[0].is_var() || e.out.size() != 1) return false;
    const Aval &in = j_.vars[size_t(e.in[0].var)], &out = j_.vars[size_t(e.out[0])];
    return in.size() == out.size() && in.dtype == out.dtype && out.size() > 0;
  }

  // Is var a reduction's result (through reshapes), so pending until something needs it?
  bool is_reduction_result(int var) const {
    const int p = producer_[size_t(var)];
    if (p < 0) return false;
    const Eqn& e = j_.eqns[size_t(p)];
    if (is_reduction(e.prim) && !keeps_size(e)) return true;
    return e.prim == Prim::Reshape && e.in[0].is_var() && is_reduction_result(e.in[0].var);
  }

  // Is e elementwise with an operand (other than var) that is a reduction's result? Then
  // var's value flows into that reduction's epilogue, which is computed once per output
  // element and materialized before anything broadcasts or reduces it further.
  bool joins_epilogue(const Eqn& e, int var) const {
    if (!is_pointwise(e.prim)) return false;
    for (auto& a : e.in)
      if (a.is_var() && a.var != var && is_reduction_result(a.var)) return true;
    return false;
  }

  // Does a value flowing out of var reach a reduction (or window) through elementwise and
  // movement ops? Then recomputing a broadcast expression would multiply its cost. A path
  // into another reduction's epilogue stops there (a decode step's exp of the new row's
  // score, broadcast over the head dimension into the weighted sum's epilogue). Where a
  // dispatch costs more than recomputing (webgpu), so does a path into a routine: its
  // operands are buffers, computed once whatever reads its result (a decode step's RoPE
  // tables, broadcast over the heads into the rotation that decode_attention reads, are
  // recomputed in each layer's rotation kernel instead of costing one of their own).
  bool reaches_reduction(int var) {
    auto it = reach_.find(var);
    if (it != reach_.end()) return it->second;
    bool r = false;
    for (int ei : consumers_[size_t(var)]) {
      const Eqn& e = j_.eqns[size_t(ei)];
      if ((is_reduction(e.prim) && !keeps_size(e)) || e.prim == Prim::Window) r = true;
      else if (joins_epilogue(e, var) || (fewer_kernels_ && !e.call && !e.control && is_routine(e.prim))) r = false;
      else if (!e.custom && e.out.size() == 1) r = reaches_reduction(e.out[0]);
      if (r) break;
    }
    reach_[var] = r;
    return r;
  }

  // Does an equation other than `self` broadcast var (through movement ops only) to a larger
  // shape that reaches a reduction? On the CPU devices movement() then computes that view of
  // var into a buffer anyway (attention's exponentials, read by their sum and broadcast into
  // the weighted sum of the values): see reduce().
  bool broadcast_into_reduction(const Eqn* self, int var) {
    for (int ei : consumers_[size_t(var)]) {
      const Eqn& c = j_.eqns[size_t(ei)];
      if (&c == self || c.custom || c.control || c.call || c.out.size() != 1 || !is_view_op(c.prim)) continue;
      const int out = c.out[0];
      if (c.prim == Prim::Expand && j_.vars[size_t(out)].size() > j_.vars[size_t(var)].size() && reaches_reduction(out))
        return true;
      if (c.prim != Prim::Expand && c.prim != Prim::Window && broadcast_into_reduction(nullptr, out)) return true;
    }
    return false;
  }

  // On the CPU devices, a large elementwise value that other equations read too is computed
  // once into a buffer rather than again inside each reader's kernel. A recurrence otherwise
  // recomputes all its earlier steps in every step: an LSTM's cell state c_t = f c_{t-1} + i g
  // is read by h_t (a buffer, for the next step's matmul) and by c_{t+1}, so step t's kernel
  // inlined c_1..c_t and the stacked outputs inlined them all again (issue 23's 2-layer LSTM:
  // 7 steps, 0.9 of its 1.0 ms of kernels on wasm). Where a dispatch costs more (webgpu) the
  // recomputation is kept, as for the broadcasts above.
  void materialize_shared_operands(const Eqn& e, std::vector<ValPtr>& in) {
    if (fewer_kernels_) return;
    for (size_t k = 0; k < in.size(); ++k) {
      const ValPtr& v = in[k];
      if (v->red || !e.in[k].is_var() || uses_[size_t(e.in[k].var)] < 2 || is_cheap(*v)) continue;
      if (v->exp.node_count() > kMaxRecomputedNodes) emit_.materialize({v}, false);
    }
  }

  // A kernel recomputes one prelude: inputs that read another one are computed into buffers
  // first. Returns the prelude left (or none).
  std::shared_ptr<Pending> one_prelude(std::vector<ValPtr>& in) {
    std::shared_ptr<Pending> first;
    for (auto& v : in) {
      const std::shared_ptr<Pending> p = prelude_of(*v);
      if (!p || !first || p == first) {
        if (p) first = p;
        continue;
      }
      if (v->red) materialize_pending(v);
      if (prelude_of(*v)) emit_.materialize({v}, false);
    }
    return first;
  }

  ValPtr elementwise(const Eqn& e, std::vector<ValPtr>& in, const Aval& out) {
    // A pending reduction absorbs this op into its epilogue (values that share it but
    // diverge are split at materialization); two different reductions cannot share one.
    std::vector<ValPtr> reds;
    for (auto& v : in)
      if (v->red && std::find_if(reds.begin(), reds.end(), [&](auto& r) { return r->red == v->red; }) == reds.end())
        reds.push_back(v);
    if (reds.size() > 1) materialize_pending(reds[0]);
    materialize_shared_operands(e, in);
    for (auto& v : in) emit_.from_whole(*v, true);
    const std::shared_ptr<Pending> pre = one_prelude(in);
    auto build = [&](Srcs& ins) {
      std::vector<AluExp> idxs = unravel(gidx_var(out.size()), out.shape);
      std::vector<AluExp> x;
      for (auto& v : in) x.push_back(val_at(*v, idxs, ins));
      return pointwise_exp(e.prim, e.params, x);
    };
    Srcs ins;
    AluExp ex = build(ins);
    std::shared_ptr<Pending> red;
    for (auto& v : in)
      if (v->red) red = v->red;
    int nodes = ex.node_count() + (red ? red->body.node_count() : 0) + (pre ? pre->body.node_count() : 0);
    size_t nin = ins.slots.size() + (red ? red->srcs.size() : 0) + (pre ? pre->srcs.size() : 0);
    if (nodes > kMaxFusedNodes || nin > max_fused_inputs(p_.device)) {
      for (auto& v : in)
        if (v->red) materialize_pending(v);
      emit_.materialize(in, false);
      ins = Srcs();
      ex = build(ins);
      red = nullptr;
    }
    std::shared_ptr<Pending> keep;  // the prelude still read (none once the inputs are buffers)
    for (auto& v : in)
      if (v->pre) keep = v->pre;
    if (!red) emit_.note_domain(ex, out.size());
    return std::make_shared<Val>(Val{out, ex, ins.slots, ShapeTracker::contiguous(out.shape), red, keep});
  }

  ValPtr reduce(const Eqn& e, const ValPtr& a, const Aval& out) {
    // Over axes of length 1 a reduction is its operand with those axes dropped, which keeps
    // the row-major order: an elementwise value that fuses on (a decode step's softmax over
    // its one new row was a kernel of its own per layer, and the pending reduction before it
    // was materialized for it).
    if (a->aval.size() == out.size() && a->aval.dtype == out.dtype && out.size() > 0) {
      if (a->red)
        return std::make_shared<Val>(Val{out, a->exp, a->srcs, ShapeTracker::contiguous(out.shape), a->red, a->pre});
      Srcs ins;
      AluExp ex = val_at(*a, unravel(gidx_var(out.size()), a->aval.shape), ins);
      return std::make_shared<Val>(Val{out, ex, ins.slots, ShapeTracker::contiguous(out.shape), nullptr, a->pre});
    }
    if (a->red) materialize_pending(a);
    // A large expression, or one that gathers from several buffers, that other equations
    // read too (a pooling gradient summed for a bias and read by the filter gradient's
    // contraction) is computed once into a buffer rather than inside this reduction and again
    // for the others.
    if (!is_cheap(*a) && e.in[0].is_var() && uses_[size_t(e.in[0].var)] > 1 &&
        (a->exp.node_count() > kMaxRecomputedNodes || a->srcs.size() > kMaxRecomputedInputs ||
         (!fewer_kernels_ && has_transcendental(a->exp) && broadcast_into_reduction(&e, e.in[0].var))))
      emit_.materialize({a}, false);
    AluOp op = prim_alu_op(e.prim);
    ReduceIndex ri = reduce_index(a->aval.shape, e.params.axes);
    if (ri.reduced_size == 0)
      return std::make_shared<Val>(Val{out, AluExp::constant(out.dtype, Reduction::identity(op, a->aval.dtype)), {},
                                       ShapeTracker::contiguous(out.shape), nullptr, nullptr});
    Srcs ins;
    auto pend = std::make_shared<Pending>(Pending{op, ri.reduced_size, val_at(*a, ri.idxs, ins), {}, a->pre, AluExp()});
    pend->srcs = ins.slots;
    return std::make_shared<Val>(Val{out, AluExp::accumulator(a->aval.dtype), {},
                                     ShapeTracker::contiguous(out.shape), pend, nullptr});
  }

  ValPtr view(const ValPtr& a, const Aval& out, ShapeTracker st) {
    return std::make_shared<Val>(Val{out, a->exp, a->srcs, std::move(st), nullptr, a->pre});
  }

  // A small full reduction (one value) broadcast is recomputed by the kernel that reads it,
  // as its prelude, instead of being a kernel of its own, where the device takes preludes
  // (webgpu): RMSNorm's sum of squares, read by the matvec of the normed vector; an argmax's
  // maximum, read by its index minimum. Its body must be small (the recomputed-operand
  // bounds, counting the buffers it reads rather than its loads: the first layer's norm
  // gathers the embedding row's words and scales at the token's index) and read no prelude
  // itself; kMaxPreludeLength bounds its length where the reading kernel has several outputs
  // (KernelEmitter::separate_long_prelude). Each workgroup of the reading kernel
  // folds the vector once more (576 floats for SmolLM2, 2048 for a 1B model), which is nothing
  // beside the matrix rows it reads; a kernel dispatch costs the host ~5 us.
  bool recomputes_as_prelude(const Val& a) const {
    if (!prelude_ok_ || !a.red || a.pre || a.red->pre || a.aval.size() != 1 || !is_float(a.red->body.dtype()))
      return false;
    int nodes = 0;
    bool plain = true;
    a.red->body.visit([&](const AluNode& n) {
      if (!is_float(n.dtype)) return;  // index arithmetic (a gather's index loads included)
      nodes++;
      plain = plain && recomputed_in_reduction(n.op);
    });
    return plain && nodes <= kMaxRecomputedOperandNodes && a.red->srcs.size() <= size_t(kMaxRecomputedOperandLoads);
  }

  // a's value as a prelude: its reduction with its epilogue as the prelude's value, read as
  // Var(Pre) (computed once per workgroup, not per element).
  static ValPtr as_prelude(const Val& a) {
    auto pre = std::make_shared<Pending>(*a.red);
    Srcs ins{pre->srcs};
    std::vector<int> map;
    for (int s : a.srcs) map.push_back(ins.add(s));
    pre->value = a.exp.remap_loads([&](int i) { return map[size_t(i)]; });
    pre->srcs = ins.slots;
    return std::make_shared<Val>(Val{a.aval, AluExp::prelude_value(a.aval.dtype), {}, a.st, nullptr, pre});
  }

  ValPtr movement(const Eqn& e, const ValPtr& in, const Aval& out) {
    ValPtr a = in;
    if (a->red) {
      // A reshape keeps the row-major order, so the epilogue can still grow after it.
      if (e.prim == Prim::Reshape)
        return std::make_shared<Val>(Val{out, a->exp, a->srcs, ShapeTracker::contiguous(out.shape), a->red, a->pre});
      if (e.prim == Prim::Expand && recomputes_as_prelude(*a)) a = as_prelude(*a);
      else materialize_pending(a);
    }
    // A growing broadcast of a non-trivial value is recomputed per element unless it is
    // materialized: worth it when large or when a reduction reads it. Overlapping windows
    // always materialize their operand.
    bool grows = e.prim == Prim::Expand && out.size() > a->aval.size();
    if ((grows && !is_cheap(*a) &&
         (a->exp.node_count() > kMaxRecomputedNodes || (reaches_reduction(e.out[0]) && !(fewer_kernels_ && is_recomputed_operand(*a))))) ||
        (e.prim == Prim::Window && !is_cheap(*a)) ||
        (e.prim == Prim::Window && !fewer_kernels_ && pads_a_buffer(a->exp, a->st) && window_elements(e.params) >= kMinUnmaskedWindow))
      emit_.materialize({a}, false);
    return view(a, out, view_rule(e.prim, a->st, a->aval.shape, e.params, out.shape));
  }

  ValPtr gather(const Eqn& e, std::vector<ValPtr>& in, const Aval& out) {
    for (auto& v : in) {
      if (v->red) materialize_pending(v);
      if (v->pre) emit_.materialize({v}, false);
    }
    const Val &x = *in[0], &idx = *in[1];
    Srcs ins;
    auto index_at = [&](const std::vector<AluExp>& at) { return val_at(idx, at, ins); };
    std::vector<AluExp> xi = gather_source_index(x.aval.shape, e.params, idx.aval.shape, out, index_at);
    AluExp ex = val_at(x, xi, ins);
    return std::make_shared<Val>(Val{out, ex, ins.slots, ShapeTracker::contiguous(out.shape), nullptr, nullptr});
  }

  // A loop or branch: its operands are computed into buffers, and its results are
  // buffers that later kernels read.
  void control(const Eqn& e) {
    std::vector<ValPtr> in;
    for (auto& a : e.in) {
      ValPtr v = read(a);
      materialize_pending(v);
      in.push_back(v);
    }
    emit_.materialize(in, false);
    ProgramStep step;
    step.control = e.control;
    for (auto& v : in) step.ins.push_back(v->srcs[0]);
    for (int o : e.out) {
      const Aval& av = j_.vars[size_t(o)];
      Slot s;
      s.kind = SlotKind::Temp;
      s.bytes = std::max<int64_t>(av.size(), 1) * itemsize(av.dtype);
      int slot = emit_.add_slot(std::move(s));
      step.outs.push_back(slot);
      env_[size_t(o)] = std::make_shared<Val>(
          Val{av, AluExp::load(av.dtype, 0, gidx_var(av.size())), {slot}, ShapeTracker::contiguous(av.shape), nullptr, nullptr});
    }
    p_.steps.push_back(std::move(step));
    for (auto& a : e.in)
      if (a.is_var()) remaining_[size_t(a.var)]--;
  }

  // A routine primitive: its operands are computed into buffers (row-major from offset 0),
  // and its result is a buffer that later kernels read.
  void routine(const Eqn& e) {
    const Aval& out = j_.vars[size_t(e.out[0])];
    auto call = std::make_shared<RoutineCall>(RoutineCall{e.prim, e.params, {}, out, {}});
    std::vector<ValPtr> in, compute;
    const bool offsets = routine_reads_offsets(e.prim);
    for (size_t i = 0; i < routine_operands(e.prim, e.params); ++i) {
      ValPtr v = read(e.in[i]);
      materialize_pending(v);
      in.push_back(v);
      call->in.push_back(v->aval);
      if (!offsets || !row_major_at(*v)) compute.push_back(v);
    }
    emit_.materialize(compute, false);
    ProgramStep step;
    step.routine = call;
    for (auto& v : in) {
      // A part of a materialized whole (from_whole) may still be a strided view: copied.
      std::optional<int64_t> at = row_major_at(*v);
      if (!at || (!offsets && *at != 0)) {
        emit_.materialize({v}, false);
        at = row_major_at(*v);
        if (!at || *at != 0) throw Error("internal: jit could not give a routine its operand row-major");
      }
      if (offsets) call->in_offsets.push_back(*at);
      step.ins.push_back(v->srcs[0]);
    }
    Slot s;
    s.kind = SlotKind::Temp;
    s.bytes = std::max<int64_t>(out.size(), 1) * itemsize(out.dtype);
    step.out = emit_.add_slot(std::move(s));
    env_[size_t(e.out[0])] = std::make_shared<Val>(
        Val{out, AluExp::load(out.dtype, 0, gidx_var(out.size())), {step.out}, ShapeTracker::contiguous(out.shape), nullptr, nullptr});
    p_.steps.push_back(std::move(step));
    for (auto& a : e.in)
      if (a.is_var()) remaining_[size_t(a.var)]--;
  }

  void eqn(const Eqn& e) {
    if (e.control) return control(e);
    if (!e.call && !e.custom && is_routine(e.prim)) return routine(e);
    if (e.call) throw Error("internal: jit got a call equation (calls are inlined while tracing for jit)");
    if (e.custom || e.out.size() != 1)
      throw Error("jit: cannot compile a custom_vjp linearization equation, expected primitives only");
    std::vector<ValPtr> in;
    for (auto& a : e.in) in.push_back(read(a));
    const Aval& out = j_.vars[size_t(e.out[0])];
    ValPtr r;
    if (is_pointwise(e.prim)) r = elementwise(e, in, out);
    else if (is_reduction(e.prim)) r = reduce(e, in[0], out);
    else if (e.prim == Prim::Gather) r = gather(e, in, out);
    else if (is_view_op(e.prim)) r = movement(e, in[0], out);
    else fail(prim_name(e.prim), "has no jit lowering");
    for (auto& a : e.in)
      if (a.is_var()) remaining_[size_t(a.var)]--;
    env_[size_t(e.out[0])] = r;
    if (r->red && is_pointwise(e.prim) && !r->srcs.empty() && is_residual_stream(e.out[0])) materialize_pending(r);
  }

  // A reduction's epilogue that reads other buffers, read by several equations one of which
  // adds it into another reduction's epilogue: a residual stream (x + matvec(...), normed and
  // added to the next block's matvec). It is emitted at once, with its epilogue, so each
  // reader loads one buffer; split later (the norm's reduction needs it while the other
  // readers are live) the matvec was emitted bare and every reader re-summed the stream.
  // Values whose readers all rejoin into one expression (gelu of a matmul) stay pending.
  bool is_residual_stream(int var) const {
    std::set<int> c(consumers_[size_t(var)].begin(), consumers_[size_t(var)].end());
    if (c.size() < 2) return false;
    for (int ei : c)
      if (joins_epilogue(j_.eqns[size_t(ei)], var)) return true;
    return false;
  }

  void outputs() {
    std::vector<ValPtr> need;
    for (auto& a : j_.outs) {
      ValPtr v = read(a);
      // Pure constants and views of buffers stay lazy, as eager results do.
      if (v->red || v->pre || (!is_view(*v) && !v->srcs.empty())) need.push_back(v);
    }
    // Outputs that share one pending reduction (an optimizer's new parameter and moments all
    // read one gradient) would each repeat it in the packed kernel: emit it once, bare, and
    // pack the outputs as elementwise reads of it. The reductions go in the order of their
    // first output, not by address: the kernels' order (and so the temporaries' sizes and
    // lifetimes) must not depend on where malloc put the Pendings, which varies with the
    // threaded core's timing (a worker's TLS block allocated at its start).
    std::map<const Pending*, std::vector<ValPtr>> sharing;
    std::vector<const Pending*> order;
    for (auto& v : need)
      if (v->red) {
        auto& ws = sharing[v->red.get()];
        if (ws.empty()) order.push_back(v->red.get());
        if (std::find(ws.begin(), ws.end(), v) == ws.end()) ws.push_back(v);
      }
    for (const Pending* r : order) {
      auto& ws = sharing[r];
      if (ws.size() > 1 && ws[0]->red) materialize_pending(ws[0], need);
    }
    emit_.materialize(need, true);
    for (auto& a : j_.outs) {
      ValPtr v = read(a);
      for (int s : v->srcs)
        if (p_.slots[size_t(s)].kind == SlotKind::Temp) p_.slots[size_t(s)].kind = SlotKind::Output;
      p_.outs.push_back({v->aval, v->exp, v->srcs, v->st});
    }
  }


  const Jaxpr& j_;
  Program& p_;
  const std::vector<int64_t>& offsets_;
  std::vector<ValPtr> env_;
  std::map<int, ValPtr> consts_;
  std::vector<int> uses_, remaining_;
  std::vector<std::vector<int>> consumers_;
  std::vector<int> producer_;
  std::map<int, bool> reach_;
  KernelEmitter emit_;
  const bool fewer_kernels_;  // Backend::prefers_fewer_kernels: small expressions into reductions
  const bool prelude_ok_;     // and Backend::recomputes_preludes: small full reductions too
};

}  // namespace

Program compile_program(const Jaxpr& j, const std::string& device, const std::vector<int64_t>& input_offsets) {
  Program p;
  p.device = device;
  Fuser(j, p, input_offsets).run();
  Backend& be = get_backend(device);
  for (auto& s : p.steps)
    if (s.kernel.size > 0) s.exe = be.prepare(s.kernel);
  return p;
}

std::string Program::str() const {
  std::string s;
  for (auto& st : steps) s += st.routine ? std::string(prim_name(st.routine->prim)) + "\n" : st.kernel.to_string();
  return s;
}

}  // namespace kiln::frontend
