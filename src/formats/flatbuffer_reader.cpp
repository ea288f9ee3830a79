// FlatBuffers access checks: a table's soffset to its vtable, the vtable's size and field
// offsets, and every uoffset to a sub-table, string or vector must land inside the bytes.
#include "formats/flatbuffer_reader.h"

#include "ir/error.h"

namespace kiln::formats {

void FlatBuffer::need(uint64_t pos, uint64_t size, const std::string& what) const {
  if (pos > bytes_.size() || size > bytes_.size() - pos)
    fail(op_, what, ": ", size, " bytes at offset ", pos, " run past the end of the ",
         bytes_.size(), "-byte buffer");
}

void FlatBuffer::charge(uint64_t n, const std::string& what) const {
  if (n > budget_)
    fail(op_, what, ": the file's vectors hold more elements in all than its size allows "
                    "(vectors shared by many offsets?)");
  budget_ -= n;
}

FlatTable::FlatTable(const FlatBuffer& buffer, uint64_t pos, std::string what)
    : buffer_(&buffer), pos_(pos), what_(std::move(what)) {
  const int32_t soffset = buffer.read<int32_t>(pos, what_ + " (table)");
  // The vtable is at pos - soffset; it may lie before or after the table.
  const int64_t vtable = int64_t(pos) - int64_t(soffset);
  if (vtable < 0) fail(what_ + ": vtable offset points before the buffer");
  vtable_ = uint64_t(vtable);
  vtable_size_ = buffer.read<uint16_t>(vtable_, what_ + " (vtable)");
  table_size_ = buffer.read<uint16_t>(vtable_ + 2, what_ + " (vtable)");
  if (vtable_size_ < 4 || vtable_size_ % 2 != 0)
    fail(what_ + ": vtable size " + std::to_string(vtable_size_) +
         ", expected an even number >= 4");
  buffer.need(vtable_, vtable_size_, what_ + " (vtable)");
  if (table_size_ < 4) fail(what_ + ": table size " + std::to_string(table_size_) + " < 4");
  buffer.need(pos_, table_size_, what_ + " (table)");
}

FlatTable FlatTable::root(const FlatBuffer& buffer, std::string what) {
  return FlatTable(buffer, buffer.read<uint32_t>(0, "root offset"), std::move(what));
}

void FlatTable::fail(const std::string& message) const { kiln::fail(buffer_->op(), message); }

uint64_t FlatTable::field_offset(int field) const {
  const uint64_t entry = 4 + 2 * uint64_t(field);
  if (entry + 2 > vtable_size_) return 0;  // fields past the vtable's end are absent
  return buffer_->read<uint16_t>(vtable_ + entry, what_ + " (vtable)");
}

void FlatTable::check_inline(uint64_t off, uint64_t size, const char* name) const {
  if (off + size > table_size_)
    fail(field_name(name) + ": field at offset " + std::to_string(off) + " (" +
         std::to_string(size) + " bytes) runs past its table's " + std::to_string(table_size_) +
         " bytes");
}

uint64_t FlatTable::follow(int field, const char* name) const {
  const uint64_t off = field_offset(field);
  check_inline(off, 4, name);
  const uint64_t at = pos_ + off;
  return at + buffer_->read<uint32_t>(at, field_name(name));
}

std::optional<FlatTable> FlatTable::table(int field, const char* name) const {
  if (!has(field)) return std::nullopt;
  return FlatTable(*buffer_, follow(field, name), field_name(name));
}

FlatTable FlatTable::required_table(int field, const char* name) const {
  std::optional<FlatTable> t = table(field, name);
  if (!t) fail(field_name(name) + ": missing");
  return *t;
}

std::optional<std::string> FlatTable::string(int field, const char* name) const {
  if (!has(field)) return std::nullopt;
  const uint64_t at = follow(field, name);
  const uint32_t length = buffer_->read<uint32_t>(at, field_name(name));
  buffer_->need(at + 4, uint64_t(length) + 1, field_name(name));  // + the terminating 0
  buffer_->charge(length, field_name(name));
  const char* chars = reinterpret_cast<const char*>(buffer_->bytes().data() + at + 4);
  return std::string(chars, length);
}

FlatVector FlatTable::vector(int field, uint32_t elem_size, const char* name) const {
  FlatVector v;
  v.buffer = buffer_;
  v.elem_size = elem_size;
  v.what = field_name(name);
  if (!has(field)) return v;
  const uint64_t at = follow(field, name);
  v.count = buffer_->read<uint32_t>(at, v.what);
  v.pos = at + 4;
  buffer_->need(v.pos, uint64_t(v.count) * elem_size, v.what);
  buffer_->charge(v.count, v.what);
  return v;
}

FlatTable FlatTable::table_at(const FlatVector& v, uint32_t i) const {
  const uint64_t at = v.pos + 4 * uint64_t(i);
  const std::string what = v.what + "[" + std::to_string(i) + "]";
  return FlatTable(*buffer_, at + buffer_->read<uint32_t>(at, what), what);
}

std::pair<uint8_t, std::optional<FlatTable>> FlatTable::union_value(int field,
                                                                     const char* name) const {
  const uint8_t type = scalar<uint8_t>(field, 0, name);
  if (type == 0) return {0, std::nullopt};
  std::optional<FlatTable> value = table(field + 1, name);
  if (!value) fail(field_name(name) + ": union of type " + std::to_string(type) +
                   " has no value");
  return {type, value};
}

}  // namespace kiln::formats
