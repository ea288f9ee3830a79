// `.ptd` reading: the "FH01" header after the file identifier, the FlatTensor table (field
// numbers from ExecuTorch's extension/flat_tensor/serialize/flat_tensor.fbs), then the
// checks between the named data, the segments and the bytes of the file.
#include "formats/ptd.h"

#include <set>

#include "formats/flatbuffer_reader.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

constexpr const char* kOp = "ptd";
constexpr size_t kMaxRank = 16;  // ExecuTorch's kTensorDimensionLimit, as parse_pte
// Header: magic, length, then four uint64 (flatbuffer offset and size, segment base and size).
constexpr uint32_t kHeaderLength = 40;

namespace field {
enum FlatTensor { kVersion, kSegments, kNamedData };
enum Segment { kOffset, kSize };
enum NamedData { kKey, kSegmentIndex, kTensorLayout };
enum Layout { kScalarType, kSizes, kDimOrder };
}  // namespace field

void read_header(const FlatBuffer& fb, Ptd& ptd) {
  const std::span<const uint8_t> file = fb.bytes();
  if (file.size() < 16 || std::string_view(reinterpret_cast<const char*>(file.data() + 8), 4) != "FH01")
    fail(kOp, "no FH01 header after the file identifier");
  const uint32_t length = fb.read<uint32_t>(12, "header length");
  if (length < kHeaderLength) fail(kOp, "header: length ", length, " < ", kHeaderLength);
  fb.need(8, length, "header");
  const uint64_t fb_offset = fb.read<uint64_t>(16, "header flatbuffer_offset");
  ptd.flatbuffer_size = fb.read<uint64_t>(24, "header flatbuffer_size");
  ptd.segment_base_offset = fb.read<uint64_t>(32, "header segment_base_offset");
  ptd.segment_data_size = fb.read<uint64_t>(40, "header segment_data_size");
  // The exporter inserts this header into the FlatBuffer after the file identifier, so the
  // table offsets count from the start of the file as usual; flatbuffer_offset is the padded
  // header's end, where the serialized payload (flatbuffer_size bytes) resumes.
  if (fb_offset > file.size() || ptd.flatbuffer_size > file.size() - fb_offset)
    fail(kOp, "header: flatbuffer_size ", ptd.flatbuffer_size, " at ", fb_offset,
         " runs past the file's ", file.size(), " bytes");
  if (ptd.segment_base_offset > file.size() ||
      ptd.segment_data_size > file.size() - ptd.segment_base_offset)
    fail(kOp, "header: ", ptd.segment_data_size, " bytes of segment data at ",
         ptd.segment_base_offset, " do not fit in the ", file.size(), "-byte file");
}

// A TensorLayout: scalar type, sizes and dim order, checked as parse_pte checks a tensor.
void read_layout(const FlatTable& t, PtdEntry& e) {
  e.has_layout = true;
  const int8_t type = t.scalar<int8_t>(field::kScalarType, 0, "scalar_type");
  e.scalar_type = PteScalarType(type);
  if (pte_scalar_type_size(e.scalar_type) == 0)
    t.fail(t.what() + ": unsupported scalar_type " + std::to_string(type));
  const FlatVector sizes = t.vector(field::kSizes, 4, "sizes");
  if (sizes.count > kMaxRank) t.fail(t.what() + ": rank " + std::to_string(sizes.count) + " > 16");
  for (int32_t s : sizes.scalars<int32_t>()) {
    if (s < 0) t.fail(t.what() + ": negative size " + std::to_string(s));
    e.sizes.push_back(s);
  }
  e.dim_order = t.vector(field::kDimOrder, 1, "dim_order").scalars<uint8_t>();
  std::vector<bool> seen(e.sizes.size());
  for (uint8_t d : e.dim_order) {
    if (d >= e.sizes.size() || seen[d]) t.fail(t.what() + ": dim_order is not a permutation");
    seen[d] = true;
  }
  if (e.dim_order.size() != e.sizes.size()) t.fail(t.what() + ": dim_order is not a permutation");
}

}  // namespace

uint64_t PtdEntry::layout_nbytes() const {
  if (!has_layout) return 0;
  // Sizes are int32 and at most 16: only the product can overflow; read_layout's caller
  // compares against the segment, so saturate instead.
  uint64_t n = pte_scalar_type_size(scalar_type);
  for (int64_t s : sizes) n = (s && n > UINT64_MAX / uint64_t(s)) ? UINT64_MAX : n * uint64_t(s);
  return n;
}

const PtdEntry* Ptd::find(const std::string& key) const {
  for (const PtdEntry& e : named_data)
    if (e.key == key) return &e;
  return nullptr;
}

Ptd parse_ptd(std::span<const uint8_t> file) {
  if (file.size() < 8) fail(kOp, "file of ", file.size(), " bytes, expected at least 8");
  if (std::string_view(reinterpret_cast<const char*>(file.data() + 4), 4) != "FT01")
    fail(kOp, "file identifier is not FT01 (not an ExecuTorch named-data file of this version)");
  // As parse_pte: vectors may share storage, so bound what all of them may hold together.
  const FlatBuffer fb(file, kOp, 4 * uint64_t(file.size()) + 1024);
  Ptd ptd;
  read_header(fb, ptd);
  const FlatTable root = FlatTable::root(fb, "flat_tensor");
  ptd.version = root.scalar<uint32_t>(field::kVersion, 0, "version");
  ptd.segments = root.tables(field::kSegments, "segments", [&](const FlatTable& s, uint32_t i) {
    PteSegment seg{s.scalar<uint64_t>(field::kOffset, 0, "offset"), s.scalar<uint64_t>(field::kSize, 0, "size")};
    if (seg.offset > ptd.segment_data_size || seg.size > ptd.segment_data_size - seg.offset)
      fail(kOp, "segment ", i, ": ", seg.size, " bytes at ", seg.offset, " past the ",
           ptd.segment_data_size, " bytes of segment data");
    return seg;
  });
  std::set<std::string> keys;
  ptd.named_data = root.tables(field::kNamedData, "named_data", [&](const FlatTable& t, uint32_t i) {
    PtdEntry e;
    e.key = t.string(field::kKey, "key").value_or("");
    const std::string where = "named_data " + std::to_string(i) + " '" + e.key + "'";
    if (e.key.empty()) fail(kOp, where, ": no key");
    if (!keys.insert(e.key).second) fail(kOp, where, ": the key appears twice");
    e.segment_index = t.scalar<uint32_t>(field::kSegmentIndex, 0, "segment_index");
    if (e.segment_index >= ptd.segments.size())
      fail(kOp, where, ": segment_index ", e.segment_index, ", the file has ", ptd.segments.size(),
           " segments");
    const PteSegment& seg = ptd.segments[e.segment_index];
    e.data_offset = ptd.segment_base_offset + seg.offset;
    e.data_size = seg.size;
    if (std::optional<FlatTable> layout = t.table(field::kTensorLayout, "tensor_layout")) {
      read_layout(*layout, e);
      if (e.layout_nbytes() > e.data_size)
        fail(kOp, where, ": its layout needs ", e.layout_nbytes(), " bytes, segment ",
             e.segment_index, " has ", e.data_size);
    }
    return e;
  });
  return ptd;
}

std::span<const uint8_t> ptd_entry_data(std::span<const uint8_t> file, const PtdEntry& e) {
  if (e.data_offset > file.size() || e.data_size > file.size() - e.data_offset)
    fail(kOp, "'", e.key, "' (", e.data_size, " bytes at ", e.data_offset, ") is outside the ",
         file.size(), "-byte file");
  return file.subspan(e.data_offset, e.data_size);
}

}  // namespace kiln::formats
