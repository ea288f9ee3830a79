// kiln::formats::FlatTable: checked read access to a FlatBuffers binary (tables, vtables,
// scalars, strings, vectors, unions) without a FlatBuffers library; every offset is verified.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::formats {

// The bytes of one FlatBuffers binary and the checks shared by every table read from it.
// `op` names the format in errors ("pte"). `budget` bounds the elements all vectors read
// from the buffer may hold together: two offsets may point at one shared vector, so a
// small file could otherwise describe an enormous tree.
class FlatBuffer {
 public:
  FlatBuffer(std::span<const uint8_t> bytes, const char* op, uint64_t budget)
      : bytes_(bytes), op_(op), budget_(budget) {}

  std::span<const uint8_t> bytes() const { return bytes_; }
  const char* op() const { return op_; }
  // Reads a little-endian T at `pos`; `what` names the field in the error if it does not fit.
  template <typename T>
  T read(uint64_t pos, const std::string& what) const {
    need(pos, sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos, sizeof(T));
    return v;
  }
  // Throws kiln::Error("<op>: <what>: ...") unless [pos, pos + size) lies inside the bytes.
  void need(uint64_t pos, uint64_t size, const std::string& what) const;
  // Counts `n` elements against the budget; throws once it is spent.
  void charge(uint64_t n, const std::string& what) const;

 private:
  std::span<const uint8_t> bytes_;
  const char* op_;
  mutable uint64_t budget_;
};

// A vector field: `count` elements of `elem_size` bytes starting at `pos` (already checked).
struct FlatVector {
  const FlatBuffer* buffer = nullptr;
  uint64_t pos = 0;
  uint32_t count = 0;
  uint32_t elem_size = 0;
  std::string what;  // the field's name, for errors about its elements

  template <typename T>
  T scalar(uint32_t i) const {
    return buffer->read<T>(pos + uint64_t(i) * sizeof(T), what);
  }
  template <typename T>
  std::vector<T> scalars() const {
    std::vector<T> out(count);
    for (uint32_t i = 0; i < count; ++i) out[i] = scalar<T>(i);
    return out;
  }
};

class FlatTable {
 public:
  // The table whose start is at `pos`; checks its vtable and extent.
  FlatTable(const FlatBuffer& buffer, uint64_t pos, std::string what);
  // The root table: the uoffset at byte 0.
  static FlatTable root(const FlatBuffer& buffer, std::string what);

  const std::string& what() const { return what_; }
  bool has(int field) const { return field_offset(field) != 0; }

  template <typename T>
  T scalar(int field, T fallback, const char* name) const {
    const uint64_t off = field_offset(field);
    if (!off) return fallback;
    check_inline(off, sizeof(T), name);
    return buffer_->read<T>(pos_ + off, field_name(name));
  }
  std::optional<FlatTable> table(int field, const char* name) const;
  // A required table: throws when absent.
  FlatTable required_table(int field, const char* name) const;
  std::optional<std::string> string(int field, const char* name) const;
  // A vector of scalars (elem_size bytes each) or of offsets (elem_size 4); absent = empty.
  FlatVector vector(int field, uint32_t elem_size, const char* name) const;
  // Element i of a vector of tables.
  FlatTable table_at(const FlatVector& v, uint32_t i) const;
  // A vector of tables read with `read_one(table, index)`.
  template <typename F>
  auto tables(int field, const char* name, F read_one) const {
    const FlatVector v = vector(field, 4, name);
    std::vector<decltype(read_one(table_at(v, 0), uint32_t(0)))> out;
    out.reserve(v.count);
    for (uint32_t i = 0; i < v.count; ++i) out.push_back(read_one(table_at(v, i), i));
    return out;
  }
  // A union: its type byte is field `field`, its table field `field + 1`. Returns the type
  // (0 = NONE) and the table when the type is not NONE.
  std::pair<uint8_t, std::optional<FlatTable>> union_value(int field, const char* name) const;
  [[noreturn]] void fail(const std::string& message) const;

 private:
  uint64_t field_offset(int field) const;
  void check_inline(uint64_t off, uint64_t size, const char* name) const;
  uint64_t follow(int field, const char* name) const;  // position an offset field points at
  std::string field_name(const char* name) const { return what_ + "." + name; }

  const FlatBuffer* buffer_;
  uint64_t pos_;
  uint64_t vtable_;
  uint16_t vtable_size_;
  uint16_t table_size_;
  std::string what_;
};

}  // namespace kiln::formats
