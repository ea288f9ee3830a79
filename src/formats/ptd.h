// kiln::formats::parse_ptd: ExecuTorch's `.ptd` named-data file (FlatTensor, schema "FT01"
// with the "FH01" header and its data segments), the file the exporter writes for a program
// exported with external constants, read into plain structs, every offset checked.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/pte.h"

namespace kiln::formats {

// One named blob of a `.ptd` file: its key (a tensor's fully qualified name, as the
// program's external tensors name it), where its bytes are, and the tensor layout if the
// file gives one.
struct PtdEntry {
  std::string key;
  uint32_t segment_index = 0;
  uint64_t data_offset = 0;  // from the start of the file
  uint64_t data_size = 0;    // the segment's valid bytes
  bool has_layout = false;
  PteScalarType scalar_type = PteScalarType::Float;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;  // a permutation of 0..rank-1
  uint64_t layout_nbytes() const;  // prod(sizes) * itemsize (0 without a layout)
};

struct Ptd {
  uint32_t version = 0;
  uint64_t flatbuffer_size = 0;
  uint64_t segment_base_offset = 0;
  uint64_t segment_data_size = 0;
  std::vector<PteSegment> segments;  // offsets from the segment base
  std::vector<PtdEntry> named_data;  // keys unique

  const PtdEntry* find(const std::string& key) const;  // nullptr when absent
};

// Parses a `.ptd` file. Checked: the FlatBuffer's offsets and vtables, the file identifier,
// the header (magic, length, flatbuffer and segment data inside the file), every segment
// inside the segment data, every entry's segment index, unique keys, layouts (known scalar
// type, rank <= 16, non-negative sizes, dim order a permutation) whose bytes fit the
// segment. Throws kiln::Error("ptd: <where>: ...").
Ptd parse_ptd(std::span<const uint8_t> file);

// The bytes of `entry` inside `file` (the buffer it was parsed from).
std::span<const uint8_t> ptd_entry_data(std::span<const uint8_t> file, const PtdEntry& entry);

}  // namespace kiln::formats
