// Reading a whole file into memory, for the loaders that take bytes (GGUF, ONNX, IDX).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

// The file's bytes, or nullopt when it cannot be opened (or is a directory) or a read fails.
// One sized read (then chunks, for files that grow or report no size) rather than a
// byte-by-byte istreambuf_iterator copy: that loop took most of the sanitized test build's
// time on the ~100 MB model files.
std::optional<std::vector<uint8_t>> read_file_bytes(const std::string& path);

}  // namespace kiln
