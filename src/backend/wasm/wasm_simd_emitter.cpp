// The SIMD128 main loop: a lane analysis (uniform / affine / vector / lanes) of every node,
// then f32x4/i32x4 code where the vector op equals alu_eval, scalar lanes everywhere else.
#include "backend/wasm/wasm_simd_emitter.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>

#include "ir/alu_op.h"
#include "ir/error.h"
#include "ir/reduction_unroll.h"

namespace kiln::wasm {

using V = ValType;

namespace {

// dtypes that live in one v128 as 4 x 32 bits (bool as 0/1 in i32 lanes).
bool vec_dtype(DType dt) {
  return dt == DType::Float32 || dt == DType::Int32 || dt == DType::Uint32 || dt == DType::Bool;
}
bool f32(DType dt) { return dt == DType::Float32; }
bool int32ish(DType dt) { return dt == DType::Int32 || dt == DType::Uint32; }

// One vector instruction per (op, dtype class). Comparisons and casts are handled apart.
struct VecRule {
  AluOp op;
  int cls;  // 0: float32, 1: int32/uint32 (signed form), 2: bool
  uint32_t subop;
  uint32_t subop_u;  // the uint32 form, where it differs
};
constexpr VecRule kBinary[] = {
    {AluOp::Add, 0, simd::F32x4Add, 0},   {AluOp::Sub, 0, simd::F32x4Sub, 0},
    {AluOp::Mul, 0, simd::F32x4Mul, 0},   {AluOp::Div, 0, simd::F32x4Div, 0},
    {AluOp::Add, 1, simd::I32x4Add, 0},   {AluOp::Sub, 1, simd::I32x4Sub, 0},
    {AluOp::Mul, 1, simd::I32x4Mul, 0},   {AluOp::And, 1, simd::V128And, 0},
    {AluOp::Or, 1, simd::V128Or, 0},      {AluOp::Xor, 1, simd::V128Xor, 0},
    {AluOp::Max, 1, simd::I32x4MaxS, simd::I32x4MaxU},
    {AluOp::Min, 1, simd::I32x4MinS, simd::I32x4MinU},
    {AluOp::And, 2, simd::V128And, 0},    {AluOp::Or, 2, simd::V128Or, 0},
    {AluOp::Xor, 2, simd::V128Xor, 0},
};
constexpr VecRule kUnary[] = {
    {AluOp::Neg, 0, simd::F32x4Neg, 0},       {AluOp::Sqrt, 0, simd::F32x4Sqrt, 0},
    {AluOp::Floor, 0, simd::F32x4Floor, 0},   {AluOp::Ceil, 0, simd::F32x4Ceil, 0},
    {AluOp::Trunc, 0, simd::F32x4Trunc, 0},   {AluOp::Round, 0, simd::F32x4Nearest, 0},
};
int cls_of(DType dt) { return f32(dt) ? 0 : int32ish(dt) ? 1 : 2; }

const VecRule* find_rule(const VecRule* begin, const VecRule* end, AluOp op, DType dt) {
  for (const VecRule* r = begin; r != end; r++)
    if (r->op == op && r->cls == cls_of(dt)) return r;
  return nullptr;
}

// Emits (when c is non-null) or checks a vector form of `op`; push(i) pushes source i as a
// v128. Returns false when no vector form equals alu_eval (the node then goes lane by lane).
bool vector_op(CodeBuilder* c, AluOp op, DType dt, const std::vector<DType>& sdt,
               const std::function<void(int)>& push) {
  if (!vec_dtype(dt)) return false;
  for (DType s : sdt)
    if (!vec_dtype(s)) return false;
  auto sub = [&](uint32_t s) { if (c) c->simd(s); };
  auto src = [&](int i) { if (c) push(i); };
  auto splat_i32 = [&](int32_t v) {
    if (!c) return;
    c->i32_const(v);
    c->simd(simd::I32x4Splat);
  };
  auto to_bool = [&] { splat_i32(1), sub(simd::V128And); };  // all-ones masks -> 0/1
  if (op == AluOp::Cast) {
    DType from = sdt[0];
    if (dt == DType::Bool) return false;  // legalize() made casts to bool x != 0
    src(0);
    if (from == dt || (int32ish(from) && int32ish(dt)) || (from == DType::Bool && int32ish(dt))) return true;
    if (f32(dt)) {
      sub(from == DType::Int32 ? simd::F32x4ConvertI32x4S : simd::F32x4ConvertI32x4U);
      return true;
    }
    // to int32/uint32 from float32: truncate, saturate, NaN -> 0 (as trunc_sat)
    sub(dt == DType::Int32 ? simd::I32x4TruncSatF32x4S : simd::I32x4TruncSatF32x4U);
    return true;
  }
  if (op == AluOp::Bitcast) {
    if (dt == DType::Bool || sdt[0] == DType::Bool) return false;
    src(0);
    return true;
  }
  if (op == AluOp::IsNan) {
    if (!f32(sdt[0])) return false;
    src(0), src(0), sub(simd::F32x4Ne), to_bool();
    return true;
  }
  if (op == AluOp::Where) {  // a bool condition (legalize() turns others into c != 0)
    src(1), src(2);
    splat_i32(0), src(0), sub(simd::I32x4Sub);  // 0/1 -> 0/-1
    sub(simd::V128Bitselect);
    return true;
  }
  if (is_comparison(op)) {
    DType s = sdt[0];
    bool u = is_unsigned(s);
    uint32_t o;
    switch (op) {
      case AluOp::CmpLt: o = f32(s) ? simd::F32x4Lt : u ? simd::I32x4LtU : simd::I32x4LtS; break;
      case AluOp::CmpLe: o = f32(s) ? simd::F32x4Le : u ? simd::I32x4LeU : simd::I32x4LeS; break;
      case AluOp::CmpEq: o = f32(s) ? simd::F32x4Eq : simd::I32x4Eq; break;
      default: o = f32(s) ? simd::F32x4Ne : simd::I32x4Ne; break;
    }
    src(0), src(1), sub(o), to_bool();
    return true;
  }
  int arity = alu_info(op).arity;
  if (arity == 1) {
    if (const VecRule* r = find_rule(std::begin(kUnary), std::end(kUnary), op, dt)) {
      src(0), sub(r->subop);
      return true;
    }
    if (op == AluOp::Recip && f32(dt)) {
      if (c) c->f32_const(1.0f), c->simd(simd::F32x4Splat);
      src(0), sub(simd::F32x4Div);
      return true;
    }
    if (op == AluOp::Neg && int32ish(dt)) {
      splat_i32(0), src(0), sub(simd::I32x4Sub);
      return true;
    }
    if (op == AluOp::Not && int32ish(dt)) {
      src(0), sub(simd::V128Not);
      return true;
    }
    if (op == AluOp::Not && dt == DType::Bool) {
      src(0), splat_i32(1), sub(simd::V128Xor);
      return true;
    }
    return false;
  }
  if (arity != 2 || sdt[0] != dt || sdt[1] != dt) return false;
  // float32 max/min need scratch locals: SimdEmitter::emit_vector_op emits them.
  if ((op == AluOp::Max || op == AluOp::Min) && f32(dt)) return false;
  if (const VecRule* r = find_rule(std::begin(kBinary), std::end(kBinary), op, dt)) {
    src(0), src(1), sub(is_unsigned(dt) && r->subop_u ? r->subop_u : r->subop);
    return true;
  }
  return false;
}

int64_t gcd0(int64_t a, int64_t b) { return std::gcd(a, b); }  // gcd(0, x) = x: 0 is "exactly 0"

}  // namespace

bool simd_op_exists(AluOp op, DType dt, const std::vector<DType>& sdt) {
  if ((op == AluOp::Max || op == AluOp::Min) && f32(dt) && sdt.size() == 2 && f32(sdt[0]) && f32(sdt[1]))
    return true;
  return vector_op(nullptr, op, dt, sdt, nullptr);
}

SimdEmitter::SimdEmitter(KernelEmitter& ke)
    : ke_(ke), c_(ke.code()), e_(ke.ops()), red_(ke.kernel().reduction.has_value()), gidx_(ke.gidx_local()) {
  const Kernel& k = ke.kernel();
  const DType odt = k.out_dtype();
  if (red_) {
    const DType adt = k.exp.dtype();
    acc_info_.kind = (vec_dtype(adt) && adt != DType::Bool &&
                      simd_op_exists(k.reduction->op, adt, {adt, adt}))
                         ? LaneKind::Vector
                         : LaneKind::Lanes;
  }
  analyze(ke.body());
  if (red_) analyze(*ke.epilogue());
  bool store_ok = odt == DType::Float32 || int32ish(odt);
  if (!red_) {
    worthwhile_ = store_ok && info_.at(k.exp.get()).kind != LaneKind::Lanes;
  } else {
    // A reduction whose innermost loads gather at indices computed lane by lane pays more in
    // lane inserts than it gains. Strided ones (a bias gradient's sum over images and pixels,
    // a pooling window's count) share one index computation per step among the 4 lanes,
    // which the scalar loop repeats per element.
    bool gathers = false;
    for (const AluNode* n : ke.body().nodes) {
      if (n->op != AluOp::Load || ke.body().level.at(n) != 2) continue;
      const LaneKind ix = info_.at(n->src[0].get()).kind;
      if (ix != LaneKind::Uniform && ix != LaneKind::Affine) gathers = true;
    }
    worthwhile_ = store_ok && !gathers && acc_info_.kind == LaneKind::Vector && k.reduction->size > 0;
    if (worthwhile_) plan_unrolled_reduction();
    if (worthwhile_) plan_groups();
  }
}

void SimdEmitter::analyze(const DagPlan& plan) {
  for (const AluNode* n : plan.nodes) info_[n] = classify(*n);
}

namespace {

LaneInfo with_offsets(const LaneOffsets& off, int64_t m) {
  const bool zero = off == LaneOffsets{};
  return {zero ? LaneKind::Uniform : LaneKind::Affine, off, m, false};
}

int64_t floor_div(int64_t a, int64_t c) { return a / c - (a % c != 0 && (a < 0) != (c < 0)); }

// int32 index arithmetic n on Uniform/Affine operands a and b that stays Uniform/Affine:
// sums, multiples, and floor division or remainder by a positive constant when the lanes'
// offsets do not cross a multiple of it differently from lane 0 (value(g) is a multiple of
// it, or the offsets stay below the room its remainder leaves).
std::optional<LaneInfo> classify_index(const AluNode& n, const LaneInfo& a, const LaneInfo& b) {
  LaneOffsets off{};
  if (n.op == AluOp::Add || n.op == AluOp::Sub) {
    for (size_t l = 0; l < 4; l++) off[l] = n.op == AluOp::Add ? a.off[l] + b.off[l] : a.off[l] - b.off[l];
    return with_offsets(off, gcd0(a.m, b.m));
  }
  const AluExp &lhs = n.src[0], &rhs = n.src[1];
  if (n.op == AluOp::Mul && (rhs.is_const() || lhs.is_const())) {
    const LaneInfo& x = rhs.is_const() ? a : b;
    const int64_t c = int64_t(rhs.is_const() ? rhs.value() : lhs.value());
    const int64_t m = x.m < (1 << 20) && std::abs(c) < (1 << 20) ? x.m * std::abs(c) : 1;
    for (size_t l = 0; l < 4; l++) off[l] = x.off[l] * c;
    return with_offsets(off, m);
  }
  if ((n.op != AluOp::Idiv && n.op != AluOp::Mod) || !rhs.is_const() || rhs.value() <= 0 ||
      a.kind != LaneKind::Affine)
    return std::nullopt;
  const int64_t c = int64_t(rhs.value()), m = a.m;
  if (m == 0 || m % c == 0) {
    // value(g) + o = c (value(g) / c + floor(o / c)) + (o mod c) exactly.
    LaneOffsets q{}, rem{};
    for (size_t l = 0; l < 4; l++) {
      q[l] = floor_div(a.off[l], c);
      rem[l] = a.off[l] - q[l] * c;
    }
    return n.op == AluOp::Idiv ? with_offsets(q, m / c) : with_offsets(rem, 0);
  }
  // The largest value(g) mod c can take, from value(g) being a multiple of m.
  const int64_t maxrem = c % m == 0 ? c - m : c - 1;
  const auto [lo, hi] = std::minmax_element(a.off.begin(), a.off.end());
  if (*lo < 0 || maxrem + *hi >= c) return std::nullopt;
  return n.op == AluOp::Idiv ? LaneInfo{LaneKind::Uniform, {}, 1, false} : with_offsets(a.off, m);
}

}  // namespace

LaneInfo SimdEmitter::classify(const AluNode& n) const {
  LaneInfo r;
  auto is_i32 = [&] { return n.dtype == DType::Int32; };
  if (n.op == AluOp::Const) {
    r.kind = LaneKind::Uniform;
    r.wide = const_is_wide(n.dtype, n.value);
    r.m = is_i32() ? std::abs(int64_t(n.value)) : 1;
    return r;
  }
  if (n.op == AluOp::Var) {
    if (n.arg == int(VarId::Gidx)) return {LaneKind::Affine, {0, 1, 2, 3}, 4, false};
    if (n.arg == int(VarId::Ridx)) return {LaneKind::Uniform, {}, 1, false};
    return acc_info_;
  }
  std::vector<const LaneInfo*> s;
  std::vector<DType> sdt;
  bool all_uniform = true, all_ua = true, any_wide = false;
  for (auto& x : n.src) {
    s.push_back(&info_.at(x.get()));
    sdt.push_back(x.dtype());
    all_uniform &= s.back()->kind == LaneKind::Uniform;
    all_ua &= s.back()->kind == LaneKind::Uniform || s.back()->kind == LaneKind::Affine;
    any_wide |= s.back()->wide;
  }
  if (n.op == AluOp::Load) {
    const LaneInfo& ix = *s[0];
    if (ix.kind == LaneKind::Uniform) return {LaneKind::Uniform, {}, 1, false};
    r.kind = vec_dtype(n.dtype) && n.dtype != DType::Bool ? LaneKind::Vector : LaneKind::Lanes;
    return r;
  }
  if (all_uniform) {
    r.kind = LaneKind::Uniform;
    r.wide = n.op == AluOp::Where && (s[1]->wide || s[2]->wide);
    if (is_i32() && (n.op == AluOp::Add || n.op == AluOp::Sub)) r.m = gcd0(s[0]->m, s[1]->m);
    else if (is_i32() && n.op == AluOp::Mul && s[0]->m < (1 << 20) && s[1]->m < (1 << 20))
      r.m = s[0]->m * s[1]->m;
    return r;
  }
  // Index arithmetic that stays affine in the lane (views: strides, broadcasts, reshapes).
  if (is_i32() && all_ua && n.src.size() == 2) {
    if (auto r = classify_index(n, *s[0], *s[1])) return *r;
  }
  if (any_wide || (n.op == AluOp::Where && (s[1]->wide || s[2]->wide))) {
    r.kind = LaneKind::Lanes;
    r.wide = n.op == AluOp::Where && (s[1]->wide || s[2]->wide);
    return r;
  }
  if (uniform_shift(n)) {
    r.kind = LaneKind::Vector;
    return r;
  }
  r.kind = simd_op_exists(n.op, n.dtype, sdt) ? LaneKind::Vector : LaneKind::Lanes;
  return r;
}

// A shift of int32 lanes by one count for all lanes, known to lie in [0, 32): Wasm's
// i32x4.shl/shr_s/shr_u take a scalar count, and in that range they equal alu_eval (which
// gives 0, or the sign, for counts outside it). The packed weights' nibble shifts are such.
bool SimdEmitter::uniform_shift(const AluNode& n) const {
  if ((n.op != AluOp::Shl && n.op != AluOp::Shr) || !int32ish(n.dtype) || n.src[0].dtype() != n.dtype)
    return false;
  const AluExp& count = n.src[1];
  const LaneInfo& ci = info_.at(count.get());
  return ci.kind == LaneKind::Uniform && !ci.wide && int32ish(count.dtype()) && count.vmin() >= 0 &&
         count.vmax() < 32;
}

const SimdEmitter::Rep& SimdEmitter::rep(const AluNode* n) {
  auto it = reps_.find(n);
  if (it != reps_.end()) return it->second;
  // Constants and loop-invariant values were computed by the KernelEmitter.
  const LaneInfo& li = info_.at(n);
  Rep r{LaneKind::Uniform};
  r.scalar = ke_.val(n);
  r.wide = r.scalar.wide;
  (void)li;
  return reps_[n] = r;
}

Val SimdEmitter::lane_val(const Rep& r, DType dt, int lane) {
  CodeBuilder* c = &c_;
  switch (r.kind) {
    case LaneKind::Uniform: return r.scalar;
    case LaneKind::Affine: {
      Val base = r.scalar;
      int32_t off = int32_t(r.off[size_t(lane)]);
      return {dt, false, [c, base, off] {
                base.push();
                if (off) c->i32_const(off), c->op(op::I32Add);
              }};
    }
    case LaneKind::Vector: {
      uint32_t v = r.v;
      uint32_t ex = f32(dt) ? simd::F32x4ExtractLane : simd::I32x4ExtractLane;
      return {dt, false, [c, v, ex, lane] {
                c->local_get(v);
                c->simd_lane(ex, uint8_t(lane));
              }};
    }
    case LaneKind::Lanes: {
      uint32_t l = r.lanes[size_t(lane)];
      return {dt, r.wide, [c, l] { c->local_get(l); }};
    }
  }
  return r.scalar;
}

void SimdEmitter::push_vector(const Rep& r, DType dt) {
  const bool fl = f32(dt);
  switch (r.kind) {
    case LaneKind::Uniform:
      if (r.load_at_use && itemsize(dt) == 4 && f32(dt) == f32(r.load_at_use->dtype)) {
        push_load_at_use(*r.load_at_use, true);
        return;
      }
      e_.push_as(r.scalar, fl ? V::F32 : V::I32);
      c_.simd(fl ? simd::F32x4Splat : simd::I32x4Splat);
      return;
    case LaneKind::Affine: {
      r.scalar.push();
      c_.simd(simd::I32x4Splat);
      uint8_t bytes[16];
      for (int l = 0; l < 4; l++) {
        int32_t v = int32_t(r.off[size_t(l)]);
        std::memcpy(bytes + 4 * l, &v, 4);
      }
      c_.v128_const(bytes);
      c_.simd(simd::I32x4Add);
      return;
    }
    case LaneKind::Vector: c_.local_get(r.v); return;
    case LaneKind::Lanes:
      c_.local_get(r.lanes[0]);
      c_.simd(fl ? simd::F32x4Splat : simd::I32x4Splat);
      for (int l = 1; l < 4; l++) {
        c_.local_get(r.lanes[size_t(l)]);
        c_.simd_lane(fl ? simd::F32x4ReplaceLane : simd::I32x4ReplaceLane, uint8_t(l));
      }
      return;
  }
}

void SimdEmitter::emit_vector_op(AluOp op, DType dt, const std::vector<const Rep*>& srcs,
                                 const std::vector<DType>& sdt, const AluNode* source) {
  auto push = [&](int i) { push_vector(*srcs[size_t(i)], sdt[size_t(i)]); };
  if (op == AluOp::Shl || op == AluOp::Shr) {  // classified by uniform_shift: a scalar count
    push(0);
    lane_val(*srcs[1], sdt[1], 0).push();
    c_.simd(op == AluOp::Shl ? simd::I32x4Shl : dt == DType::Uint32 ? simd::I32x4ShrU : simd::I32x4ShrS);
    return;
  }
  if (op == AluOp::Cast && f32(dt) && sdt[0] == DType::Uint32 && source && source->vmax <= INT32_MAX && source->vmin >= 0) {
    // uint32 -> float32 below 2^31 is the signed conversion (one instruction on x86; the
    // unsigned one is a sequence): the packed weights' masked codes.
    push(0);
    c_.simd(simd::F32x4ConvertI32x4S);
    return;
  }
  if ((op == AluOp::Max || op == AluOp::Min) && f32(dt)) {
    // alu_eval: a if a is NaN, else (a > b ? a : b) for max (a < b for min), as the scalar code.
    uint32_t ta = e_.temp(V::V128, 10), tb = e_.temp(V::V128, 11);
    push(0), c_.local_set(ta);
    push(1), c_.local_set(tb);
    c_.local_get(ta);
    c_.local_get(ta), c_.local_get(tb), c_.local_get(ta), c_.local_get(tb);
    c_.simd(op == AluOp::Max ? simd::F32x4Gt : simd::F32x4Lt);
    c_.simd(simd::V128Bitselect);  // [a, sel]
    c_.local_get(ta), c_.local_get(ta), c_.simd(simd::F32x4Ne);  // [a, sel, isnan(a)]
    c_.simd(simd::V128Bitselect);
    return;
  }
  if (!vector_op(&c_, op, dt, sdt, push))
    fail("wasm.simd", "no vector form of ", alu_info(op).name, " on ", dtype_name(dt));
}

SimdEmitter::Rep SimdEmitter::make_vector_local(DType) {
  Rep r{LaneKind::Vector};
  r.v = c_.add_local(V::V128);
  c_.local_set(r.v);
  return r;
}

void SimdEmitter::compute(const AluNode& n) {
  if (n.op == AluOp::Const) return;
  const LaneInfo& li = info_.at(&n);
  if (n.op == AluOp::Var) {
    Rep r{li.kind};
    if (n.arg == int(VarId::Acc)) {
      reps_[&n] = acc_;
      return;
    }
    CodeBuilder* c = &c_;
    uint32_t l = n.arg == int(VarId::Gidx) ? gidx_ : ke_.ridx_local();
    r.scalar = {n.dtype, false, [c, l] { c->local_get(l); }};
    r.off = li.off;
    reps_[&n] = r;
    return;
  }
  if (n.op == AluOp::Load) return emit_load(n);
  std::vector<const Rep*> srcs;
  std::vector<DType> sdt;
  for (auto& s : n.src) {
    srcs.push_back(&rep(s.get()));
    sdt.push_back(s.dtype());
  }
  Rep r{li.kind};
  r.off = li.off;
  switch (li.kind) {
    case LaneKind::Uniform:
    case LaneKind::Affine: {
      std::vector<Val> vals;
      for (size_t i = 0; i < srcs.size(); i++) vals.push_back(lane_val(*srcs[i], sdt[i], 0));
      bool wide = e_.emit(n.op, n.dtype, vals);
      uint32_t l = c_.add_local(storage(n.dtype, wide));
      c_.local_set(l);
      CodeBuilder* c = &c_;
      r.wide = wide;
      r.scalar = {n.dtype, wide, [c, l] { c->local_get(l); }};
      break;
    }
    case LaneKind::Vector:
      emit_vector_op(n.op, n.dtype, srcs, sdt, n.src.empty() ? nullptr : n.src[0].get());
      r = make_vector_local(n.dtype);
      break;
    case LaneKind::Lanes:
      for (int l = 0; l < 4; l++) {
        std::vector<Val> vals;
        for (size_t i = 0; i < srcs.size(); i++) vals.push_back(lane_val(*srcs[i], sdt[i], l));
        bool wide = e_.emit(n.op, n.dtype, vals);
        r.wide = wide;
        r.lanes[size_t(l)] = c_.add_local(storage(n.dtype, wide));
        c_.local_set(r.lanes[size_t(l)]);
      }
      break;
  }
  reps_[&n] = r;
}

void SimdEmitter::bind_uniform(const AluNode* n, std::function<void()> push) {
  Rep r{LaneKind::Uniform};
  r.scalar = {n->dtype, false, std::move(push)};
  reps_[n] = r;
}

void SimdEmitter::compute_level(const DagPlan& plan, int level) {
  level_ = level;
  for (const AluNode* n : plan.nodes)
    if (plan.level.at(n) == level) compute(*n);
}

void SimdEmitter::init_acc() {
  const Reduction& red = *ke_.kernel().reduction;
  const DType adt = ke_.kernel().exp.dtype();
  const double id = Reduction::identity(red.op, adt);
  // Local 0 is a parameter: a Rep with local 0 has no accumulator locals yet.
  const bool fresh = acc_.kind == LaneKind::Vector ? acc_.v == 0 : acc_.lanes[0] == 0;
  if (acc_.kind != acc_info_.kind || fresh) {
    acc_ = Rep{acc_info_.kind};
    if (acc_.kind == LaneKind::Vector) acc_.v = c_.add_local(V::V128);
    else
      for (auto& l : acc_.lanes) l = c_.add_local(storage(adt));
  }
  if (acc_.kind == LaneKind::Vector) {
    e_.emit_const(adt, id);
    c_.simd(f32(adt) ? simd::F32x4Splat : simd::I32x4Splat);
    c_.local_set(acc_.v);
  } else {
    for (uint32_t l : acc_.lanes) {
      e_.emit_const(adt, id);
      c_.local_set(l);
    }
  }
}

void SimdEmitter::fold_acc(const AluNode* term) {
  const Reduction& red = *ke_.kernel().reduction;
  const DType adt = ke_.kernel().exp.dtype();
  const Rep& t = rep(term);
  if (acc_.kind == LaneKind::Vector) {
    emit_vector_op(red.op, adt, {&acc_, &t}, {adt, adt});
    c_.local_set(acc_.v);
    return;
  }
  for (int l = 0; l < 4; l++) {
    e_.emit(red.op, adt, {lane_val(acc_, adt, l), lane_val(t, adt, l)});
    c_.local_set(acc_.lanes[size_t(l)]);
  }
}

void SimdEmitter::store_result(const AluNode* result) {
  const DType odt = ke_.kernel().out_dtype();
  const Rep& r = rep(result);
  const int sz = itemsize(odt);
  if (odt == DType::Float32 || int32ish(odt)) {
    c_.local_get(ke_.out_ptr_local());
    c_.local_get(gidx_);
    c_.i32_const(2);
    c_.op(op::I32Shl);
    c_.op(op::I32Add);
    push_vector(r, result->dtype);
    c_.simd_mem(simd::V128Store, 2);
    return;
  }
  for (int l = 0; l < 4; l++) {
    e_.emit_store(odt, [&] {
      c_.local_get(ke_.out_ptr_local());
      c_.local_get(gidx_);
      if (l) c_.i32_const(l), c_.op(op::I32Add);
      if (sz > 1) c_.i32_const(sz == 2 ? 1 : sz == 4 ? 2 : 3), c_.op(op::I32Shl);
      c_.op(op::I32Add);
    }, lane_val(r, result->dtype, l));
  }
}

// Two versions of the block loop when some contiguous loads have a known index range: one
// without their per-block bounds checks, taken when every such range ends below its buffer's
// count (checked once per dispatch), and the checked one otherwise (short buffers read 0).
void SimdEmitter::emit_loop(uint32_t from, uint32_t to) {
  std::vector<const AluNode*> bounded = bounded_loads();
  if (bounded.empty()) return emit_blocks(from, to, groups_);
  c_.i32_const(1);
  for (const AluNode* n : bounded) {
    c_.i32_const(int32_t(n->src[0].vmax()));
    c_.local_get(ke_.count_local(n->arg));
    c_.op(op::I32LtU);
    c_.op(op::I32And);
  }
  c_.if_();
  in_bounds_ = std::move(bounded);
  emit_blocks(from, to, groups_);
  in_bounds_.clear();
  c_.else_();
  emit_blocks(from, to, groups_);
  c_.end();
}

void SimdEmitter::emit_reduction_loop(int64_t trips, const std::function<void()>& body) {
  const uint32_t ri = ke_.ridx_local();
  c_.i32_const(0);
  c_.local_set(ri);
  c_.loop();
  body();
  c_.local_get(ri);
  c_.i32_const(1);
  c_.op(op::I32Add);
  c_.local_tee(ri);
  c_.i32_const(int32_t(trips));
  c_.op(op::I32LtS);
  c_.br_if(0);
  c_.end();
}

void SimdEmitter::emit_epilogue_and_store(uint32_t acc_v128) {
  acc_ = Rep{LaneKind::Vector};
  acc_.v = acc_v128;
  // Epilogue nodes are recomputed for this block; body values are not used here.
  for (const AluNode* n : ke_.epilogue()->nodes)
    if (ke_.epilogue()->level.at(n) >= 1) reps_.erase(n);
  compute_level(*ke_.epilogue(), 1);
  store_result(ke_.kernel().reduction->epilogue.get());
}

}  // namespace kiln::wasm
