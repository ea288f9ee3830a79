#include "ir/file_bytes.h"

#include <filesystem>
#include <fstream>

namespace kiln {

std::optional<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return std::nullopt;  // opens, then reads nothing
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  constexpr size_t kChunk = size_t(1) << 20;
  std::vector<uint8_t> out;
  size_t want = ec ? kChunk : size_t(size) + 1;  // +1: a file at its reported size reads to EOF at once
  while (in) {
    const size_t have = out.size();
    out.resize(have + want);
    in.read(reinterpret_cast<char*>(out.data() + have), std::streamsize(want));
    out.resize(have + size_t(in.gcount()));
    want = kChunk;
  }
  if (in.bad()) return std::nullopt;
  return out;
}

}  // namespace kiln
