// kiln::formats::inflate and gunzip: a small, strict DEFLATE (RFC 1951) and gzip (RFC 1952)
// decoder (bytes in, bytes out), so IDX files can be gzipped without a zlib dependency.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::formats {

// Decodes a raw DEFLATE stream (stored, fixed- and dynamic-Huffman blocks). `name` is used
// in error messages. Throws kiln::Error on any malformed or truncated input; bytes after
// the final block are left unread and their offset is stored in *consumed when given.
std::vector<uint8_t> inflate(const uint8_t* data, size_t size, const std::string& name,
                             size_t* consumed = nullptr);

// Decodes a gzip file: header (with FEXTRA, FNAME, FCOMMENT, FHCRC), the DEFLATE body, then
// checks the CRC-32 and ISIZE trailer. Concatenated members are decoded one after another,
// as gzip(1) does. Throws kiln::Error naming `name` for a bad magic, an unsupported method,
// reserved flags, a truncated stream, or a CRC/length mismatch.
std::vector<uint8_t> gunzip(const std::vector<uint8_t>& bytes, const std::string& name);

// True when the bytes start with the gzip magic 1f 8b.
bool is_gzip(const std::vector<uint8_t>& bytes);

// CRC-32 (ISO 3309, as gzip and zlib use), continuing from `crc` (0 to start).
uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc = 0);

}  // namespace kiln::formats
