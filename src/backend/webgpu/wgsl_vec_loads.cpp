#include "backend/webgpu/wgsl_vec_loads.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

namespace kiln::webgpu {

namespace {

constexpr int64_t kMaxMultiple = int64_t(1) << 30;

int64_t pow2_dividing(double v) {
  const int64_t x = std::llabs(int64_t(v));
  if (x == 0) return kMaxMultiple;
  return std::min(kMaxMultiple, x & -x);
}

// index = symbolic + offset, with the constants of its additions gathered (the simplifier
// may nest them: g * 16 + (ridx * 4 + 1)); a null symbolic part for a constant index.
std::pair<AluExp, int64_t> split_offset(const AluExp& index) {
  if (index.is_const()) return {AluExp(), int64_t(index.value())};
  if (index.op() != AluOp::Add) return {index, 0};
  auto [a, ca] = split_offset(index.src(0));
  auto [b, cb] = split_offset(index.src(1));
  return {!a ? b : !b ? a : a + b, ca + cb};
}

}  // namespace

int64_t known_multiple(const AluExp& e) {
  switch (e.op()) {
    case AluOp::Const: return pow2_dividing(e.value());
    case AluOp::Mul: return std::min(kMaxMultiple, known_multiple(e.src(0)) * known_multiple(e.src(1)));
    case AluOp::Add:
    case AluOp::Sub: return std::min(known_multiple(e.src(0)), known_multiple(e.src(1)));
    default: return 1;
  }
}

std::vector<VecLoad> find_vec_loads(const std::vector<AluExp>& roots) {
  // Loads by (input, symbolic part, block of 4 offsets): lane = offset % 4.
  using Key = std::tuple<int, DType, std::string, int64_t>;  // the symbolic part as text
  std::map<Key, std::pair<AluExp, std::array<const AluNode*, 4>>> blocks;
  std::map<const AluNode*, bool> seen;
  std::vector<AluExp> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    AluExp e = stack.back();
    stack.pop_back();
    if (seen[e.get()]) continue;
    seen[e.get()] = true;
    for (int i = 0; i < int(e.node().src.size()); i++) stack.push_back(e.src(i));
    const DType d = e.dtype();
    if (e.op() != AluOp::Load || (d != DType::Float32 && d != DType::Int32 && d != DType::Uint32)) continue;
    auto [sym, off] = split_offset(e.src(0));
    if (sym && known_multiple(sym) % 4 != 0) continue;
    const int64_t m = off >= 0 ? off / 4 : -((-off + 3) / 4);
    auto& b = blocks[{e.node().arg, d, sym ? sym.to_string() : "", m}];
    if (!b.first) b.first = sym ? sym + m * 4 : AluExp::idx(m * 4);
    b.second[size_t(off - m * 4)] = e.get();
  }
  std::vector<VecLoad> out;
  for (auto& [key, b] : blocks)
    if (std::all_of(b.second.begin(), b.second.end(), [](const AluNode* n) { return n != nullptr; }))
      out.push_back(VecLoad{std::get<0>(key), b.first, b.second});
  return out;
}

}  // namespace kiln::webgpu
