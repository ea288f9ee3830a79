// Register-tiled contractions: a float32 sum of products whose operand indices are linear in
// (row i, column j, ridx r) gets an MR x (NR x f32x4) tile of accumulators over the r loop.
#pragma once
#include <cstdint>
#include <optional>

#include "backend/wasm/wasm_simd_emitter.h"

namespace kiln::wasm {

// index = c0 + ci * i + cj * j + cr * r over the output grid (i, j) of the schedule.
struct LinearIndex {
  int64_t c0 = 0, ci = 0, cj = 0, cr = 0;
};

// What the tiled loop needs to know about a contraction kernel.
struct Contraction {
  int64_t m = 0, n = 0, k = 0;  // output rows, columns (gidx = i * n + j), reduction length
  int a_arg = 0, b_arg = 0;     // the input splat per row (cj == 0) and the one loaded as rows (cj == 1)
  LinearIndex a, b;
  int64_t a_lo = 0, a_hi = 0, b_lo = 0, b_hi = 0;  // index ranges over the whole grid
};

// The contraction structure of k, if its body is load * load with such indices.
std::optional<Contraction> find_contraction(const Kernel& k);

struct TileShape {
  int rows = 4;     // MR
  int vecs = 2;     // NR: f32x4 accumulators per row
  int panel = 1 << 24;   // cache block: output columns per panel (a multiple of 4 NR)
  int kblock = 1 << 24;  // cache block: reduction steps per pass (partial sums kept in the output)
  bool pack = false;  // copy each KC x NC block of B into per-thread scratch, 4 NR columns per strip
  bool fma = false;  // f32x4.relaxed_madd instead of mul + add (rounding differs)
};

// Packing B and the cache blocks used with it (tuned in docs/WASM.md). Packing pays when B
// does not fit the L2 comfortably and there are enough rows to amortize the copy.
constexpr int kPackPanel = 512;   // NC: output columns per packed block
constexpr int kPackKblock = 256;  // KC: reduction steps per packed block
bool pack_pays(const Contraction& c);

// Emits the tiled loop over the rows of [begin, end) that are whole and a multiple of MR,
// columns [0, n - n % (4 NR)); then every gidx not covered goes through `generic(from, to)`.
void emit_tiled(KernelEmitter& ke, SimdEmitter& se, const Contraction& c, const TileShape& t,
                const std::function<void(uint32_t, uint32_t)>& generic);

}  // namespace kiln::wasm
