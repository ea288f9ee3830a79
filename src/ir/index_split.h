// Index-set splitting of pointwise kernels: a value that selects by ranges of its output
// index (a concatenation, a pad, a packed kernel's outputs) as one expression per range.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/kernel.h"

namespace kiln {

// One range of a split: its elements compute `exp`, the kernel's expression with every
// comparison of the output index with constants that is decided over the range removed, so
// only the selected branch is left.
struct IndexPiece {
  int64_t lo = 0, hi = 0;
  AluExp exp;
};

// The output index as rows of `period` elements (period == size: one row, the concatenated
// axis outermost). Piece i holds the elements whose gidx % period lies in [lo, hi), in order,
// covering [0, period). With one row, a piece's exp reads gidx as a variable of range
// [lo, hi - 1] (so its loads' index ranges are exact); with several, it reads plain gidx.
struct IndexSplit {
  int64_t period = 0;
  std::vector<IndexPiece> pieces;
};

// The split of a pointwise kernel (no reduction, no prelude), or nullopt when it would not
// save work: no comparison of gidx (or of gidx's position in a row) with constants changes
// value exactly once, more than kMaxIndexPieces pieces, a piece of a row narrower than
// kMinInnerPiece, or the pieces together compute at least kSplitWorkRatio of what the whole
// expression computes per element (counted in nodes). The longest period that splits wins.
// Each piece's arithmetic is the whole expression's with decided selects removed, so the
// values are bit-identical. Backends call it on the legalized kernel. $KILN_INDEX_SPLIT=0
// turns it off (read once per process).
std::optional<IndexSplit> split_index_ranges(const Kernel& k);

// At most this many pieces: each is a loop of its own in the generated code.
inline constexpr size_t kMaxIndexPieces = 16;
// Split only when the pieces' node count, weighted by their lengths, is below this share of
// the whole expression's per element.
inline constexpr double kSplitWorkRatio = 0.9;
// The narrowest piece of a row when there are several rows: each row then runs one short
// loop per piece. (Measured: docs/ARCHITECTURE.md, "Index-set splitting".)
inline constexpr int64_t kMinInnerPiece = 4;

}  // namespace kiln
