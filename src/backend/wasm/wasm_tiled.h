// Register-tiled contractions: a float32 sum of products split as batch x rows x columns
// (ir/contraction.h) gets an MR x (NR x f32x4) tile of accumulators over the r loop. A factor
// that is a plain load with a linear index is read in place; any other factor (a padded
// convolution window, a strided or gathered operand) is evaluated into per-thread scratch
// once per cache block, so matmul, batched matmul and convolutions share one loop.
#pragma once
#include <cstdint>
#include <optional>

#include "backend/wasm/wasm_simd_emitter.h"
#include "ir/contraction.h"

namespace kiln::wasm {

// The contraction structure of k when the tiled loop can run it: float32, Add, indices in
// int32 byte range, at least one f32x4 of columns. Linear factors whose index can be
// negative are demoted to expressions (their loads are then bounds-checked).
std::optional<ContractionShape> find_contraction(const Kernel& k);

// Whether the tiled loop reads a factor in place: A as a row splat, B as column vectors.
inline bool a_in_place(const ContractionShape& c) { return c.a.linear; }
inline bool b_in_place(const ContractionShape& c) { return c.b.linear && c.b.cj == 1; }

struct TileShape {
  int rows = 4;     // MR
  int vecs = 2;     // NR: f32x4 accumulators per row
  int panel = 1 << 24;   // cache block: output columns per panel (a multiple of 4 NR)
  int kblock = 1 << 24;  // cache block: reduction steps per pass (partial sums kept in the output)
  bool pack = false;  // copy each KC x NC block of B into per-thread scratch, 4 NR columns per strip
  bool fma = false;  // f32x4.relaxed_madd instead of mul + add (rounding differs)
};

// Packing B and the cache blocks used with it (tuned in docs/WASM.md). Packing an in-place B
// pays when it does not fit the L2 comfortably and there are enough rows to amortize the
// copy; a B that is not in place is always packed.
constexpr int kPackPanel = 512;   // NC: output columns per packed block
constexpr int kPackKblock = 256;  // KC: reduction steps per packed block
bool pack_pays(const ContractionShape& c);
// Columns left over from whole tiles of 4 NR go to the generic loop, which runs a
// convolution's gathered factors in its scalar loop: the last 4 of 100 columns (conv 3x3 on
// 12x12 images) cost as much as the other 96. When the columns are a multiple of 4, a
// narrower tile that covers them exactly, with more rows to keep its accumulator count,
// runs them all tiled.
TileShape fit_tile_to_columns(const ContractionShape& c, TileShape t);
// Tiles never span two batches, so a batch of fewer rows than MR (grouped-query attention in
// a decode step: 3 query heads per kv head, each a row) tiled none of them and ran all in the
// generic loop. A tile of exactly those rows (2 or more; a matvec's single row keeps the
// generic loop) and as many accumulators at most covers them.
TileShape fit_tile_to_rows(const ContractionShape& c, TileShape t);
// Whether the tiled loop pays at all: it needs one whole column tile of outputs. With fewer
// rows than a register tile (a matvec: an LLM's decode step), packing a computed B (weights
// dequantized) costs as much as the product, so the SIMD loop reads B where it lies instead
// (SmolLM2's q4_1 matvec [1536 x 576]: 1.16 ms tiled, 1.12 ms in the SIMD loop before it
// unrolled its reduction, 0.27 ms after; Node 20, 1 thread, Zen 4).
bool tiling_pays(const ContractionShape& c, const TileShape& t);

// Emits the tiled loop over each batch's rows of [begin, end) that are whole and a multiple
// of MR, columns [0, n - n % (4 NR)); then every gidx not covered goes through
// `generic(from, to)`. `se` must have analyzed the kernel (it evaluates packed B factors).
// Returns the scratch bytes each thread running the kernel needs (0: none).
uint32_t emit_tiled(KernelEmitter& ke, SimdEmitter& se, const ContractionShape& c, const TileShape& t,
                const std::function<void(uint32_t, uint32_t)>& generic);

}  // namespace kiln::wasm
