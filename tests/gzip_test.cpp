// Checks kiln::io::inflate / gunzip against streams made by Python's zlib
// (tools/gen_gzip_fixtures.py), and that malformed or truncated streams are rejected.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/file_bytes.h"
#include "kiln/kiln.h"

namespace gzip_test {

namespace {

using Bytes = std::vector<uint8_t>;

std::string fixture(const std::string& name) {
  return std::string(KILN_FIXTURE_DIR) + "/gzip/" + name;
}

Bytes slurp(const std::string& path) {
  std::optional<Bytes> bytes = kiln::read_file_bytes(path);
  if (!bytes) ADD_FAILURE() << "cannot read " << path;
  return bytes.value_or(Bytes{});
}

// The kiln::Error text of decoding b as gzip, or "" when it decodes.
std::string gzip_error(const Bytes& b) {
  try {
    kiln::io::gunzip(b, "t.gz");
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

std::string inflate_error(const Bytes& b) {
  try {
    kiln::io::inflate(b.data(), b.size(), "t");
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR_HAS(text, part)                             \
  do {                                                           \
    std::string _t = (text);                                     \
    EXPECT_NE(_t.find(part), std::string::npos) << "got: " << _t; \
  } while (0)

TEST(Gzip, DecodesEveryFixture) {
  std::ifstream manifest(fixture("MANIFEST"));
  ASSERT_TRUE(manifest) << "missing " << fixture("MANIFEST");
  std::string line;
  int n = 0;
  while (std::getline(manifest, line)) {
    std::istringstream ls(line);
    std::string name, kind;
    ls >> name >> kind;
    Bytes want = slurp(fixture(name + ".bin"));
    Bytes got;
    if (kind == "gz") {
      got = kiln::io::gunzip(slurp(fixture(name + ".gz")), name);
    } else {
      Bytes raw = slurp(fixture(name + ".deflate"));
      size_t used = 0;
      got = kiln::io::inflate(raw.data(), raw.size(), name, &used);
      EXPECT_EQ(used, raw.size()) << name;
    }
    EXPECT_EQ(got.size(), want.size()) << line;
    EXPECT_TRUE(got == want) << line;
    ++n;
  }
  EXPECT_EQ(n, 12);
}

TEST(Gzip, Crc32MatchesKnownValue) {
  // The standard check value of CRC-32/ISO-HDLC.
  std::string s = "123456789";
  EXPECT_EQ(kiln::io::crc32(reinterpret_cast<const uint8_t*>(s.data()), s.size()), 0xcbf43926u);
  // Continuing a CRC over a split buffer gives the whole buffer's CRC.
  uint32_t part = kiln::io::crc32(reinterpret_cast<const uint8_t*>(s.data()), 4);
  EXPECT_EQ(kiln::io::crc32(reinterpret_cast<const uint8_t*>(s.data()) + 4, 5, part), 0xcbf43926u);
}

TEST(Gzip, ReadIdxReadsGzippedFiles) {
  kiln::Array a = kiln::io::read_idx(fixture("idx_images.gz"));
  kiln::Array b = kiln::io::parse_idx(slurp(fixture("idx_images.bin")), "idx_images.bin");
  EXPECT_EQ(a.shape(), (kiln::Shape{3, 4, 5}));
  EXPECT_EQ(a.to_vector<int32_t>(), b.to_vector<int32_t>());
}

TEST(Gzip, RejectsEveryTruncation) {
  // Every proper prefix of a valid file must fail with an error (never crash or succeed).
  for (const char* name : {"hello_fixed.gz", "header_fields.gz", "rle.gz", "stored.gz"}) {
    Bytes good = slurp(fixture(name));
    size_t step = good.size() > 2000 ? 97 : 1;
    for (size_t n = 0; n < good.size(); n += step) {
      Bytes cut(good.begin(), good.begin() + long(n));
      std::string e = gzip_error(cut);
      EXPECT_NE(e, "") << name << " cut to " << n << " bytes decoded";
      EXPECT_NE(e.find("t.gz"), std::string::npos) << e;
    }
  }
  EXPECT_EQ(gzip_error(slurp(fixture("empty.gz"))), "");
  Bytes hello = slurp(fixture("hello_fixed.gz"));
  EXPECT_ERROR_HAS(gzip_error(Bytes(hello.begin(), hello.end() - 3)), "truncated gzip trailer");
  EXPECT_ERROR_HAS(gzip_error(Bytes(hello.begin(), hello.begin() + 12)), "truncated DEFLATE");
  EXPECT_ERROR_HAS(gzip_error(Bytes(hello.begin(), hello.begin() + 5)), "truncated gzip header");
}

TEST(Gzip, RejectsMalformedFiles) {
  Bytes hello = slurp(fixture("hello_fixed.gz"));
  Bytes b = hello;
  b[1] = 0x8c;
  EXPECT_ERROR_HAS(gzip_error(b), "bad magic");
  b = hello;
  b[2] = 7;
  EXPECT_ERROR_HAS(gzip_error(b), "compression method 7");
  b = hello;
  b[3] = 0x20;
  EXPECT_ERROR_HAS(gzip_error(b), "reserved header flags");
  b = hello;
  b[b.size() - 8] ^= 1;  // CRC-32
  EXPECT_ERROR_HAS(gzip_error(b), "CRC-32");
  b = hello;
  b[b.size() - 4] ^= 1;  // ISIZE
  EXPECT_ERROR_HAS(gzip_error(b), "ISIZE");
  b = slurp(fixture("header_fields.gz"));
  b[12 + 6] ^= 1;  // a byte of the file name, covered by FHCRC
  EXPECT_ERROR_HAS(gzip_error(b), "header CRC");
  // Garbage after a member that is not another member.
  b = hello;
  b.push_back(0);
  b.push_back(0);
  EXPECT_ERROR_HAS(gzip_error(b), "truncated gzip header");
  b.insert(b.end(), 10, 0);
  EXPECT_ERROR_HAS(gzip_error(b), "bad magic");
  // A damaged body: flipping bits must give an error or a CRC mismatch, never other output.
  Bytes text = slurp(fixture("dynamic_text.gz"));
  for (size_t at : {size_t(12), size_t(40), size_t(1000), text.size() / 2}) {
    Bytes d = text;
    d[at] ^= 0x5a;
    EXPECT_NE(gzip_error(d), "") << "flipped byte " << at;
  }
}

TEST(Gzip, RejectsMalformedDeflateBlocks) {
  // BFINAL=1, BTYPE=11: reserved.
  EXPECT_ERROR_HAS(inflate_error(Bytes{0x07}), "reserved block type 3");
  // Stored block whose NLEN is not ~LEN.
  EXPECT_ERROR_HAS(inflate_error(Bytes{0x01, 0x05, 0x00, 0x00, 0x00}), "does not match");
  // Stored block claiming 5 bytes with 2 present.
  EXPECT_ERROR_HAS(inflate_error(Bytes{0x01, 0x05, 0x00, 0xfa, 0xff, 'a', 'b'}), "truncated");
  // Fixed block: a length/distance pair at the very start reaches before the output.
  // Bits: BFINAL 1, BTYPE 01, length symbol 257 (7-bit code 0000001), distance code 0.
  EXPECT_ERROR_HAS(inflate_error(Bytes{0x03, 0x02, 0x00}), "before the start of the output");
  // Fixed block with length symbol 286 (invalid): 8-bit code 11000110.
  EXPECT_ERROR_HAS(inflate_error(Bytes{0x1b, 0x03}), "invalid length symbol 286");
  // Dynamic block header with HLIT = 287 codes.
  EXPECT_ERROR_HAS(inflate_error(Bytes{0xf5, 0x00, 0x00}), "too many literal/length codes");
  // Dynamic block whose code-length code is over-subscribed (all 19 lengths are 1).
  EXPECT_ERROR_HAS(inflate_error(Bytes{0x05, 0xe0, 0x93, 0x24, 0x49, 0x92, 0x24, 0x49, 0x92, 0x00}),
                   "over-subscribed code-length");
  EXPECT_ERROR_HAS(inflate_error(Bytes{}), "truncated");
}

TEST(Gzip, RealFashionMnistWhenPresent) {
  const char* dir = std::getenv("KILN_FASHION_MNIST_DIR");
  if (!dir || !*dir)
    GTEST_SKIP() << "set KILN_FASHION_MNIST_DIR to dataset-fashion-mnist's directory";
  kiln::Array labels = kiln::io::read_idx(std::string(dir) + "/t10k-labels-idx1-ubyte.gz");
  EXPECT_EQ(labels.shape(), (kiln::Shape{10000}));
  EXPECT_EQ(labels.to_vector<int32_t>()[0], 9);  // the first test item is an ankle boot
}

}  // namespace

}  // namespace gzip_test
