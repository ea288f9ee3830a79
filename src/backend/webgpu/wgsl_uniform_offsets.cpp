// lift_load_offsets: load offsets of a kernel as uniform words (wgsl_uniform_offsets.h).
#include "backend/webgpu/wgsl_uniform_offsets.h"

#include <map>

#include "ir/alu_exp.h"

namespace kiln::webgpu {

namespace {

struct Lifter {
  LiftedOffsets& r;
  std::map<const AluNode*, AluExp> done;

  // An index's chain of additions: its constant terms become words.
  AluExp index(const AluExp& e) {
    if (e.op() == AluOp::Add) return AluExp::binary(AluOp::Add, index(e.src(0)), index(e.src(1)));
    if (!e.is_const() || e.dtype() != DType::Int32 || e.value() <= 0 || e.value() > 0xffffffff)
      return e;
    const int64_t v = int64_t(e.value());
    for (int w = 0; w < r.count; w++)
      if (r.words[size_t(w)] == v) return AluExp::var(uniform_word(w), DType::Int32, v);
    if (r.count == kUniformWords) return e;
    r.words[size_t(r.count)] = v;
    return AluExp::var(uniform_word(r.count++), DType::Int32, v);
  }

  AluExp operator()(const AluExp& e) {
    auto it = done.find(e.get());
    if (it != done.end()) return it->second;
    AluExp out;
    if (e.op() == AluOp::Load) {
      out = AluExp::load(e.dtype(), e.node().arg, index(e.src(0)));
    } else if (e.node().src.empty()) {
      out = e;
    } else {
      std::vector<AluExp> src;
      for (const AluExp& s : e.node().src) src.push_back((*this)(s));
      out = e.with_src(src);
    }
    return done[e.get()] = out;
  }
};

}  // namespace

LiftedOffsets lift_load_offsets(const Kernel& k) {
  LiftedOffsets r;
  r.kernel = k;
  Lifter lift{r, {}};
  r.kernel.exp = lift(k.exp);
  if (k.reduction) r.kernel.reduction->epilogue = lift(k.reduction->epilogue);
  return r;
}

}  // namespace kiln::webgpu
