// Fuzz target `ggml_blocks`: formats::dequantize on arbitrary bytes. Input: ggml type id (u8),
// n_values (u32 LE), then the blocks. A size mismatch must throw before anything is written.
#include <vector>

#include "formats/ggml_blocks.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

KILN_FUZZ_TARGET(ggml_blocks) {
  using namespace kiln::formats;
  if (size < 5) return 0;
  const auto type = GgmlType(data[0]);
  const int64_t n = int64_t(data[1]) | int64_t(data[2]) << 8 | int64_t(data[3]) << 16 |
                    int64_t(data[4]) << 24;
  std::span<const uint8_t> blocks(data + 5, size - 5);
  const GgmlTypeInfo* info = find_ggml_type(data[0]);
  const bool sizes_match = info && n % info->block_size == 0 &&
                           n / info->block_size * info->block_bytes == int64_t(blocks.size());
  // Sized exactly, so ASan reports any write past the n values.
  std::vector<float> out(sizes_match ? size_t(n) : 1, 0.0f);
  try {
    dequantize(type, blocks, n, out.data());
    kiln::fuzz::check(sizes_match && can_dequantize(type), "ggml_blocks: accepted a bad input");
  } catch (const kiln::Error&) {
    kiln::fuzz::check(!sizes_match || !can_dequantize(type), "ggml_blocks: rejected a good input");
    kiln::fuzz::check(out.empty() || out[0] == 0.0f, "ggml_blocks: wrote before failing");
  }
  return 0;
}
