// Replays every committed fuzz input (fuzz/corpus/<target>/ seeds and fuzz/regressions/
// <target>/ crashes found) through the fuzz targets' entry points, so make test needs no clang.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "ir/file_bytes.h"

namespace fuzz_replay_test {

namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> slurp(const fs::path& p) {
  return kiln::read_file_bytes(p.string()).value_or(std::vector<uint8_t>{});
}

// Runs `target` on every file of `dir` (if it exists); returns how many ran.
int replay(const std::string& name, kiln::fuzz::Target target, const fs::path& dir) {
  if (!fs::is_directory(dir)) return 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::vector<uint8_t> bytes = slurp(e.path());
    try {
      target(bytes.data(), bytes.size());
    } catch (const std::exception& ex) {
      ADD_FAILURE() << name << " on " << e.path().filename() << ": " << ex.what();
    }
    ++n;
  }
  return n;
}

TEST(FuzzReplay, EveryTargetIsRegistered) {
  // One target per fuzz/*_fuzz.cpp file; a file that failed to register would replay nothing.
  int files = 0;
  for (const auto& e : fs::directory_iterator(KILN_FUZZ_DIR)) {
    std::string f = e.path().filename().string();
    if (f.size() > 9 && f.substr(f.size() - 9) == "_fuzz.cpp") {
      ++files;
      EXPECT_EQ(kiln::fuzz::targets().count(f.substr(0, f.size() - 9)), 1u) << f;
    }
  }
  EXPECT_EQ(size_t(files), kiln::fuzz::targets().size());
}

TEST(FuzzReplay, CorpusAndRegressionsRunClean) {
  ASSERT_FALSE(kiln::fuzz::targets().empty());
  for (const auto& [name, target] : kiln::fuzz::targets()) {
    const fs::path root = KILN_FUZZ_DIR;
    int seeds = replay(name, target, root / "corpus" / name);
    replay(name, target, root / "regressions" / name);
    EXPECT_GT(seeds, 0) << "no seed corpus in fuzz/corpus/" << name;
  }
}

}  // namespace

}  // namespace fuzz_replay_test
