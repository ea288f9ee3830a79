// Index-set splitting of pointwise kernels: a value that selects by ranges of its output
// index (a concatenation, a pad, a packed kernel's outputs) as one expression per range.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/kernel.h"

namespace kiln {

// out[gidx] for gidx in [lo, hi) is `exp`: the kernel's expression with gidx replaced by a
// variable of range [lo, hi - 1], so every select whose condition compares gidx with
// constants across the range is decided and only its branch is left.
struct IndexPiece {
  int64_t lo = 0, hi = 0;
  AluExp exp;
};

// The pieces of a pointwise kernel (no reduction, no prelude) covering [0, size) in order,
// or nullopt when splitting would not save work: no select is decided by a range of gidx,
// more than kMaxIndexPieces pieces, or the pieces together compute at least
// kSplitWorkRatio of what the whole expression computes per element (counted in nodes).
// Each piece's arithmetic is the whole expression's with decided selects removed, so the
// values are bit-identical. Backends call it on the legalized kernel. $KILN_INDEX_SPLIT=0
// turns it off (read once per process).
std::optional<std::vector<IndexPiece>> split_index_ranges(const Kernel& k);

// At most this many pieces: each is a loop of its own in the generated code.
inline constexpr size_t kMaxIndexPieces = 16;
// Split only when the pieces' node count, weighted by their lengths, is below this share of
// the whole expression's per element.
inline constexpr double kSplitWorkRatio = 0.9;

}  // namespace kiln
