// KernelEmitter: the jit fuser's values computed into buffers, one Kernel per group of values
// of one size, dtype and reduction (a packed kernel selects each value by lane range).
#include "frontend/jit_kernel_emitter.h"

#include <algorithm>
#include <set>

#include "frontend/lowering_rules.h"

namespace kiln::frontend::fusion {

using namespace lowering;

namespace {

// The longest full reduction that a kernel of more than one output recomputes as its prelude
// (each of its workgroups folds it: RMSNorm over a 1B model's 2048 embedding values, 4096 for
// 7B shapes); a longer one is computed by a kernel of its own (KernelEmitter::emit_group). A
// kernel of one output folds it once, whatever its length: an argmax's maximum over the
// vocabulary, read by the index minimum.
constexpr int64_t kMaxPreludeLength = 8192;

// Each load argument of k takes the dtype its loads read.
void set_input_dtypes(Kernel& k) {
  auto visit = [&](const AluNode& n) {
    if (n.op == AluOp::Load) k.inputs[size_t(n.arg)] = n.dtype;
  };
  k.exp.visit(visit);
  if (k.reduction) k.reduction->epilogue.visit(visit);
  if (k.prelude) k.prelude->exp.visit(visit);
}

// A packed kernel selects its output per element from a chain of `where`s whose branches
// are all evaluated on the interpreter and webgpu (native and wasm split a pointwise one by
// index range, ir/index_split.h; not a packed reduction), so each element computes every
// packed value there: packing saves dispatches but multiplies work by the group's size.
// SmolLM2's step returns one small keys/values array per layer; packed 30 to a kernel, the
// wasm decode step spent 7.8 of its 60 ms in it.
constexpr size_t kMaxPackedValues = 4;

}  // namespace

const std::shared_ptr<Pending>& prelude_of(const Val& v) {
  static const std::shared_ptr<Pending> none;
  return v.pre ? v.pre : v.red ? v.red->pre : none;
}

AluExp val_at(const Val& v, const std::vector<AluExp>& idxs, Srcs& ins) {
  auto [flat, valid] = v.st.to_index(idxs);
  std::vector<int> map;
  for (int s : v.srcs) map.push_back(ins.add(s));
  AluExp e = v.exp.remap_loads([&](int i) { return map[size_t(i)]; }).substitute(VarId::Gidx, flat);
  return AluExp::where(valid, e, AluExp::constant(e.dtype(), 0));
}

bool is_view(const Val& v) {
  return !v.red && v.srcs.size() == 1 && v.exp.op() == AluOp::Load &&
         v.exp.src(0).op() == AluOp::Var && v.exp.src(0).node().arg == int(VarId::Gidx);
}

int KernelEmitter::add_slot(Slot s) {
  p_.slots.push_back(std::move(s));
  return int(p_.slots.size() - 1);
}

void KernelEmitter::materialize(std::vector<ValPtr> vs, bool pack) {
  std::vector<std::vector<ValPtr>> groups;
  std::vector<std::set<int>> group_inputs;  // slots each group's kernel reads
  std::map<std::string, size_t> by_key;
  const size_t max_inputs = max_fused_inputs(p_.device);
  for (auto& v : vs) {
    if (is_view(*v) && v->st.is_contiguous()) continue;
    if (from_whole(*v)) continue;
    bool dup = false;
    for (auto& g : groups)
      for (auto& w : g) dup = dup || w == v;
    if (dup) continue;
    std::set<int> reads(v->srcs.begin(), v->srcs.end());  // the epilogue's, then the body's
    if (v->red) reads.insert(v->red->srcs.begin(), v->red->srcs.end());
    if (const auto& pre = prelude_of(*v)) reads.insert(pre->srcs.begin(), pre->srcs.end());
    std::string key = group_key(*v);
    auto it = by_key.find(key);
    bool fits = pack && it != by_key.end() && groups[it->second].size() < kMaxPackedValues;
    if (fits) {
      // A packed kernel binds every buffer its values read: keep it within the device's
      // limit (WebGPU's storage buffers per stage: 8 by default, 12 on SwiftShader).
      std::set<int> merged = group_inputs[it->second];
      merged.insert(reads.begin(), reads.end());
      fits = merged.size() <= max_inputs;
    }
    if (!fits) {
      by_key[key] = groups.size();
      groups.push_back({v});
      group_inputs.emplace_back(reads.begin(), reads.end());
    } else {
      groups[it->second].push_back(v);
      group_inputs[it->second].insert(reads.begin(), reads.end());
    }
  }
  for (auto& g : groups) emit_group(g);
}

std::string KernelEmitter::group_key(const Val& v) {
  std::string key = std::to_string(v.aval.size()) + ":" + std::to_string(int(v.aval.dtype));
  // One prelude per kernel: values that read different ones are not packed together.
  if (prelude_of(v)) key += ":pre" + std::to_string(reinterpret_cast<uintptr_t>(prelude_of(v).get()));
  if (v.red)
    key += ":" + std::to_string(int(v.red->op)) + ":" + std::to_string(v.red->size) + ":" +
           std::to_string(int(v.red->body.dtype()));
  return key;
}

void KernelEmitter::emit_group(const std::vector<ValPtr>& g) {
  if (g[0]->aval.size() * int64_t(g.size()) > 1) separate_long_prelude(g);
  const int64_t n = g[0]->aval.size(), k = int64_t(g.size());
  const DType dt = g[0]->aval.dtype;
  AluExp gid = gidx_var(n * k);
  AluExp local = k > 1 ? gid % n : gid;
  Srcs ins;
  std::vector<AluExp> bodies, elems;
  for (auto& v : g) {
    if (v->red) {
      std::vector<int> map;
      for (int s : v->red->srcs) map.push_back(ins.add(s));
      AluExp b = v->red->body.remap_loads([&](int i) { return map[size_t(i)]; });
      bodies.push_back(k > 1 ? b.substitute(VarId::Gidx, local) : b);
    }
    AluExp e = AluExp::cast(dt, val_at(*v, unravel(gidx_var(n), v->aval.shape), ins));
    elems.push_back(k > 1 ? e.substitute(VarId::Gidx, local) : e);
  }
  // Element i of output m lies at m*n + i of the shared buffer.
  auto select = [&](const std::vector<AluExp>& es) {
    AluExp e = es.back();
    for (int64_t m = k - 2; m >= 0; m--) e = AluExp::where(gid < AluExp::idx((m + 1) * n), es[size_t(m)], e);
    return e;
  };
  Kernel kern;
  kern.size = n * k;
  if (g[0]->red) {
    kern.exp = select(bodies);
    kern.reduction = Reduction{g[0]->red->op, g[0]->red->size, select(elems)};
  } else {
    kern.exp = select(elems);
  }
  if (const auto& pre = prelude_of(*g[0])) {  // the same for the group (group_key)
    std::vector<int> map;
    for (int s : pre->srcs) map.push_back(ins.add(s));
    AluExp body = pre->body.remap_loads([&](int i) { return map[size_t(i)]; });
    AluExp value = pre->value.remap_loads([&](int i) { return map[size_t(i)]; });
    kern.prelude = Prelude{pre->op, pre->size, body.substitute(VarId::Gidx, AluExp::idx(0)),
                           value.substitute(VarId::Gidx, AluExp::idx(0))};
  }
  kern.inputs.assign(ins.slots.size(), DType::Float32);
  set_input_dtypes(kern);
  Slot s;
  s.kind = SlotKind::Temp;
  s.bytes = std::max<int64_t>(kern.size, 1) * itemsize(dt);
  int out = add_slot(std::move(s));
  ProgramStep step;
  step.kernel = kern;
  step.ins = ins.slots;
  step.out = out;
  p_.steps.push_back(std::move(step));
  for (int64_t m = 0; m < k; m++) {
    Val& v = *g[size_t(m)];
    View view = View::contiguous(v.aval.shape);
    view.offset = m * n;
    v = Val{v.aval, AluExp::load(dt, 0, gidx_var(view.size())), {out}, ShapeTracker(view), nullptr, nullptr};
  }
}

bool KernelEmitter::from_whole(Val& v, bool only_reuse) {
  if (v.red || is_view(v)) return false;
  auto d = domains_.find(v.exp.get());
  if (d == domains_.end()) return false;
  const int64_t whole = d->second.second;
  const auto key = std::make_tuple(v.exp.get(), v.srcs, v.pre.get());  // a prelude is part of the value
  auto done = wholes_.find(key);
  if (done == wholes_.end()) {
    if (only_reuse) return false;
    if (whole == v.aval.size() && v.st.is_contiguous()) return false;  // v is the whole
    if (whole > kMaxWholeFactor * v.aval.size()) return false;
    auto w = std::make_shared<Val>(Val{Aval{{whole}, v.aval.dtype}, v.exp, v.srcs, ShapeTracker::contiguous({whole}), nullptr, v.pre});
    emit_group({w});
    done = wholes_.emplace(key, w->srcs[0]).first;
  }
  v = Val{v.aval, AluExp::load(v.aval.dtype, 0, gidx_var(whole)), {done->second}, v.st, nullptr, nullptr};
  return true;
}

void KernelEmitter::separate_long_prelude(const std::vector<ValPtr>& g) {
  const std::shared_ptr<Pending> pre = prelude_of(*g[0]);
  if (!pre || pre->size <= kMaxPreludeLength) return;
  auto bare = std::make_shared<Pending>(*pre);
  bare->value = AluExp();
  auto pv = std::make_shared<Val>(Val{Aval{{1}, pre->value.dtype()}, pre->value, pre->srcs, ShapeTracker::contiguous({1}), bare, nullptr});
  emit_group({pv});
  const int slot = pv->srcs[0];
  auto read_it = [&](const AluExp& e, std::vector<int>& srcs) {
    Srcs ins{srcs};
    const int arg = ins.add(slot);
    srcs = ins.slots;
    return e.substitute(VarId::Pre, AluExp::load(pre->value.dtype(), arg, AluExp::idx(0)));
  };
  for (const ValPtr& v : g) {
    if (v->pre == pre) v->exp = read_it(v->exp, v->srcs), v->pre = nullptr;
    if (v->red && v->red->pre == pre) v->red->body = read_it(v->red->body, v->red->srcs), v->red->pre = nullptr;
  }
}

}  // namespace kiln::frontend::fusion
