// read_file_bytes: the whole file in one sized read, nullopt when it cannot be read.
#include "ir/file_bytes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

namespace file_bytes_test {

namespace {

std::string temp_path(const char* name) {
  // The process id keeps two test runs at once (two builds' suites) off each other's file.
  return (std::filesystem::temp_directory_path() / (std::string(name) + "." + std::to_string(::getpid()))).string();
}

TEST(FileBytes, ReadsEveryByteOfFilesAroundTheChunkSize) {
  // Sizes around the 1 MiB chunk and empty: the sized read and the chunked tail both land.
  for (size_t size : {size_t(0), size_t(1), size_t(1) << 20, (size_t(1) << 20) + 3, (size_t(3) << 20) - 1}) {
    std::vector<uint8_t> want(size);
    for (size_t i = 0; i < size; ++i) want[i] = uint8_t((i * 131) ^ (i >> 9));
    const std::string path = temp_path("kiln_file_bytes");
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(want.data()), std::streamsize(size));
    }
    const auto got = kiln::read_file_bytes(path);
    std::remove(path.c_str());
    ASSERT_TRUE(got.has_value()) << size;
    EXPECT_EQ(*got, want) << size;
  }
}

TEST(FileBytes, MissingFilesAndDirectoriesGiveNothing) {
  EXPECT_FALSE(kiln::read_file_bytes(temp_path("kiln_file_bytes_missing") + "/none").has_value());
  EXPECT_FALSE(kiln::read_file_bytes(std::filesystem::temp_directory_path().string()).has_value());
}

}  // namespace

}  // namespace file_bytes_test
