// DEFLATE and gzip decoding: an LSB-first bit reader, canonical Huffman codes decoded
// through one flat lookup table per code, and the gzip member framing with CRC-32/ISIZE.
#include "formats/gzip.h"

#include <array>

#include "ir/error.h"

namespace kiln::formats {

namespace {

// Length and distance base values and extra bits (RFC 1951 section 3.2.5).
constexpr uint16_t kLenBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                   31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLenExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                   2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                    33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
// The order code-length code lengths are sent in (section 3.2.7).
constexpr uint8_t kClOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
constexpr int kMaxBits = 15;

// Reads bits LSB first; running past the end of the input is a "truncated" error.
class BitReader {
 public:
  BitReader(const uint8_t* p, size_t n, const std::string& name) : p_(p), n_(n), name_(name) {}

  uint32_t bits(int count) {  // count <= 32
    fill(count);
    if (have_ < count) truncated();
    uint32_t v = uint32_t(buf_ & ((uint64_t(1) << count) - 1));
    buf_ >>= count;
    have_ -= count;
    return v;
  }
  // Up to `count` bits without consuming them, zero-padded past the end of the input.
  uint32_t peek(int count) {
    fill(count);
    return uint32_t(buf_ & ((uint64_t(1) << count) - 1));
  }
  int available() const { return have_; }
  void skip(int count) {
    buf_ >>= count;
    have_ -= count;
  }
  void align() { skip(have_ % 8); }
  // Byte position of the next unread bit (after align()).
  size_t byte_pos() const { return pos_ - size_t(have_ / 8); }
  const uint8_t* data() const { return p_; }
  size_t size() const { return n_; }
  // Drops buffered bits and continues reading at byte `pos` (after a stored block's copy).
  void seek(size_t pos) {
    pos_ = pos;
    buf_ = 0;
    have_ = 0;
  }
  [[noreturn]] void truncated() const {
    fail("inflate", name_, ": truncated DEFLATE stream (input ends after ", n_, " bytes)");
  }
  [[noreturn]] void corrupt(const std::string& what) const {
    fail("inflate", name_, ": corrupt DEFLATE stream near byte ", byte_pos(), ": ", what);
  }

 private:
  void fill(int count) {
    while (have_ < count && pos_ < n_) {
      buf_ |= uint64_t(p_[pos_++]) << have_;
      have_ += 8;
    }
  }
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
  uint64_t buf_ = 0;
  int have_ = 0;
  const std::string& name_;
};

// A canonical Huffman code as a table indexed by the next `bits` input bits (LSB first):
// each entry holds symbol << 4 | code length, or 0 where no code matches.
struct Huffman {
  std::vector<uint16_t> table;
  int bits = 0;
};

// Builds the code from per-symbol lengths (0 = unused). An over-subscribed set of lengths
// is corrupt; an incomplete one is allowed only as zlib allows it (a single code of length
// 1, or no codes at all for distances), and unmatched bit patterns are then decode errors.
Huffman build(const uint8_t* lengths, int n, BitReader& in, const char* which) {
  int count[kMaxBits + 1] = {};
  for (int s = 0; s < n; ++s) count[lengths[s]]++;
  count[0] = 0;
  int left = 1;
  for (int len = 1; len <= kMaxBits; ++len) {
    left = left * 2 - count[len];
    if (left < 0) in.corrupt(std::string("over-subscribed ") + which + " code lengths");
  }
  int max_len = 0;
  for (int len = 1; len <= kMaxBits; ++len)
    if (count[len]) max_len = len;
  // As zlib: an incomplete code is accepted only when it is a lone 1-bit code (or empty)
  // of literals or distances; a code-length code must be complete unless empty.
  bool lone = max_len == 0 || (max_len == 1 && std::string(which) != "code-length");
  if (left > 0 && !lone) in.corrupt(std::string("incomplete ") + which + " code lengths");
  Huffman h;
  h.bits = max_len == 0 ? 1 : max_len;
  h.table.assign(size_t(1) << h.bits, 0);
  // First canonical code of each length, then each symbol's code bit-reversed into the
  // table (the stream sends Huffman codes MSB first), replicated over the unused high bits.
  int next[kMaxBits + 1] = {};
  for (int len = 1, code = 0; len <= kMaxBits; ++len) {
    code = (code + count[len - 1]) << 1;
    next[len] = code;
  }
  for (int s = 0; s < n; ++s) {
    int len = lengths[s];
    if (!len) continue;
    int c = next[len]++;
    int rev = 0;
    for (int i = 0; i < len; ++i) rev |= ((c >> i) & 1) << (len - 1 - i);
    for (size_t i = size_t(rev); i < h.table.size(); i += size_t(1) << len)
      h.table[i] = uint16_t(s << 4 | len);
  }
  return h;
}

int decode(const Huffman& h, BitReader& in) {
  uint16_t e = h.table[in.peek(h.bits)];
  int len = e & 15;
  if (len == 0) {
    if (in.available() < h.bits) in.truncated();
    in.corrupt("bit pattern matches no Huffman code");
  }
  if (len > in.available()) in.truncated();
  in.skip(len);
  return e >> 4;
}

const Huffman& fixed_litlen(BitReader& in) {
  static const Huffman h = [&] {
    uint8_t l[288];
    for (int s = 0; s < 288; ++s) l[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    return build(l, 288, in, "fixed literal/length");
  }();
  return h;
}
const Huffman& fixed_dist(BitReader& in) {
  static const Huffman h = [&] {
    // 32 codes of 5 bits (a complete code); symbols 30 and 31 never occur in valid data.
    uint8_t l[32];
    for (auto& v : l) v = 5;
    return build(l, 32, in, "fixed distance");
  }();
  return h;
}

// Literals, lengths and distances of one Huffman block into `out`.
void inflate_codes(BitReader& in, const Huffman& lit, const Huffman& dist,
                   std::vector<uint8_t>& out) {
  for (;;) {
    int sym = decode(lit, in);
    if (sym < 256) {
      out.push_back(uint8_t(sym));
      continue;
    }
    if (sym == 256) return;
    sym -= 257;
    if (sym >= 29) in.corrupt("invalid length symbol " + std::to_string(sym + 257));
    size_t len = kLenBase[sym] + in.bits(kLenExtra[sym]);
    int ds = decode(dist, in);
    if (ds >= 30) in.corrupt("invalid distance symbol " + std::to_string(ds));
    size_t d = kDistBase[ds] + in.bits(kDistExtra[ds]);
    if (d > out.size())
      in.corrupt("distance " + std::to_string(d) + " reaches before the start of the output (" +
                 std::to_string(out.size()) + " bytes so far)");
    size_t from = out.size() - d;
    for (size_t i = 0; i < len; ++i) out.push_back(out[from + i]);  // may overlap itself
  }
}

void inflate_dynamic(BitReader& in, std::vector<uint8_t>& out) {
  int nlen = int(in.bits(5)) + 257, ndist = int(in.bits(5)) + 1, ncode = int(in.bits(4)) + 4;
  if (nlen > 286) in.corrupt("too many literal/length codes (" + std::to_string(nlen) + ")");
  if (ndist > 30) in.corrupt("too many distance codes (" + std::to_string(ndist) + ")");
  uint8_t cl[19] = {};
  for (int i = 0; i < ncode; ++i) cl[kClOrder[i]] = uint8_t(in.bits(3));
  Huffman clh = build(cl, 19, in, "code-length");
  uint8_t lengths[286 + 30] = {};
  int i = 0;
  while (i < nlen + ndist) {
    int sym = decode(clh, in);
    if (sym < 16) {
      lengths[i++] = uint8_t(sym);
      continue;
    }
    uint8_t value = 0;
    int repeat;
    if (sym == 16) {
      if (i == 0) in.corrupt("repeat of a previous code length with none before it");
      value = lengths[i - 1];
      repeat = 3 + int(in.bits(2));
    } else if (sym == 17) {
      repeat = 3 + int(in.bits(3));
    } else {
      repeat = 11 + int(in.bits(7));
    }
    if (i + repeat > nlen + ndist) in.corrupt("code length repeat runs past the end");
    while (repeat--) lengths[i++] = value;
  }
  if (lengths[256] == 0) in.corrupt("the end-of-block code has no length");
  Huffman lit = build(lengths, nlen, in, "literal/length");
  Huffman dist = build(lengths + nlen, ndist, in, "distance");
  inflate_codes(in, lit, dist, out);
}

}  // namespace

std::vector<uint8_t> inflate(const uint8_t* data, size_t size, const std::string& name,
                             size_t* consumed) {
  BitReader in(data, size, name);
  std::vector<uint8_t> out;
  out.reserve(size * 4);
  for (bool last = false; !last;) {
    last = in.bits(1);
    uint32_t type = in.bits(2);
    if (type == 0) {  // stored: LEN, NLEN (ones' complement), then LEN raw bytes
      in.align();
      uint32_t len = in.bits(16), nlen = in.bits(16);
      if ((len ^ 0xffff) != nlen)
        in.corrupt("stored block length " + std::to_string(len) +
                   " does not match its complement " + std::to_string(nlen));
      size_t pos = in.byte_pos();
      if (pos + len > size) in.truncated();
      out.insert(out.end(), data + pos, data + pos + len);
      in.seek(pos + len);
    } else if (type == 1) {
      inflate_codes(in, fixed_litlen(in), fixed_dist(in), out);
    } else if (type == 2) {
      inflate_dynamic(in, out);
    } else {
      in.corrupt("reserved block type 3");
    }
  }
  in.align();
  if (consumed) *consumed = in.byte_pos();
  return out;
}

uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

bool is_gzip(const std::vector<uint8_t>& b) { return b.size() >= 2 && b[0] == 0x1f && b[1] == 0x8b; }

std::vector<uint8_t> gunzip(const std::vector<uint8_t>& b, const std::string& name) {
  const char* op = "gunzip";
  std::vector<uint8_t> out;
  size_t pos = 0;
  auto need = [&](size_t n, const char* what) {
    if (pos + n > b.size())
      fail(op, name, ": truncated gzip ", what, " at byte ", pos, " (the file has ", b.size(),
           " bytes)");
  };
  do {
    need(10, "header");
    if (b[pos] != 0x1f || b[pos + 1] != 0x8b)
      fail(op, name, ": bad magic ", int(b[pos]), " ", int(b[pos + 1]), " at byte ", pos,
           ", expected a gzip member starting with 31 139");
    if (b[pos + 2] != 8)
      fail(op, name, ": compression method ", int(b[pos + 2]), ", expected 8 (deflate)");
    uint8_t flags = b[pos + 3];
    if (flags & 0xe0) fail(op, name, ": reserved header flags set (", int(flags), ")");
    size_t start = pos;
    pos += 10;
    if (flags & 4) {  // FEXTRA
      need(2, "extra field length");
      size_t xlen = b[pos] | size_t(b[pos + 1]) << 8;
      pos += 2;
      need(xlen, "extra field");
      pos += xlen;
    }
    for (int f : {8, 16}) {  // FNAME, FCOMMENT: zero-terminated
      if (!(flags & f)) continue;
      while (true) {
        need(1, f == 8 ? "file name" : "comment");
        if (b[pos++] == 0) break;
      }
    }
    if (flags & 2) {  // FHCRC: low 16 bits of the header's CRC-32
      need(2, "header CRC");
      uint32_t want = b[pos] | uint32_t(b[pos + 1]) << 8;
      uint32_t got = crc32(b.data() + start, pos - start) & 0xffff;
      if (want != got) fail(op, name, ": header CRC ", got, " does not match the stored ", want);
      pos += 2;
    }
    size_t used = 0;
    std::vector<uint8_t> member = inflate(b.data() + pos, b.size() - pos, name, &used);
    pos += used;
    need(8, "trailer (CRC-32 and ISIZE)");
    auto le32 = [&](size_t p) {
      return uint32_t(b[p]) | uint32_t(b[p + 1]) << 8 | uint32_t(b[p + 2]) << 16 |
             uint32_t(b[p + 3]) << 24;
    };
    uint32_t crc = crc32(member.data(), member.size());
    if (crc != le32(pos))
      fail(op, name, ": CRC-32 of the data is ", crc, ", the trailer says ", le32(pos));
    if (uint32_t(member.size()) != le32(pos + 4))
      fail(op, name, ": decompressed ", member.size(), " bytes, the trailer says ISIZE ",
           le32(pos + 4), " (mod 2^32)");
    pos += 8;
    if (out.empty())
      out = std::move(member);
    else
      out.insert(out.end(), member.begin(), member.end());
  } while (pos < b.size());
  return out;
}

}  // namespace kiln::formats
