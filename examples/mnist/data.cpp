// Loading and batching of the MNIST-format data sets; file names follow the original
// distribution (train-images-idx3-ubyte and so on, with .gz for Fashion-MNIST).
#include "data.h"

#include <cstring>
#include <fstream>

namespace mnist {

namespace {

// The file as named, or with ".gz" appended when only the compressed one exists (either
// data set may be given gzipped or not; read_idx detects gzip by its magic).
std::string find_file(const std::string& path) {
  if (std::ifstream(path).good()) return path;
  if (std::ifstream(path + ".gz").good()) return path + ".gz";
  return path;  // read_idx reports it missing
}

Split read_split(const std::string& dir, const std::string& prefix) {
  kiln::Array images = kiln::io::read_idx(find_file(dir + "/" + prefix + "-images-idx3-ubyte"));
  kiln::Array labels = kiln::io::read_idx(find_file(dir + "/" + prefix + "-labels-idx1-ubyte"));
  if (images.ndim() != 3 || images.shape(1) != 28 || images.shape(2) != 28)
    kiln::fail("mnist::load", dir, "/", prefix, ": images have shape ",
               kiln::shape_str(images.shape()), ", expected (n, 28, 28)");
  if (labels.ndim() != 1 || labels.shape(0) != images.shape(0))
    kiln::fail("mnist::load", dir, "/", prefix, ": labels have shape ",
               kiln::shape_str(labels.shape()), ", expected (", images.shape(0), ",)");
  Split s;
  std::vector<int32_t> pixels = images.to_vector<int32_t>();
  s.images.resize(pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) s.images[i] = float(pixels[i]) / 255.0f;
  s.labels = labels.to_vector<int32_t>();
  for (int32_t l : s.labels)
    if (l < 0 || l > 9) kiln::fail("mnist::load", dir, "/", prefix, ": label ", l, ", expected 0..9");
  return s;
}

}  // namespace

Dataset load(const std::string& name, const std::string& dir) {
  if (name != "fashion" && name != "mnist")
    kiln::fail("mnist::load", "unknown data set '", name, "', expected mnist or fashion");
  Dataset d;
  d.name = name;
  d.train = read_split(dir, "train");
  d.test = read_split(dir, "t10k");
  return d;
}

std::string default_dir(const std::string& name) {
#if defined(KILN_DATA_DIR) && defined(KILN_FASHION_DIR)
  return name == "fashion" ? KILN_FASHION_DIR : KILN_DATA_DIR;
#else
  (void)name;
  return ".";
#endif
}

std::pair<kiln::Array, kiln::Array> batch(const Split& s, const std::vector<int32_t>& order,
                                          int64_t begin, int64_t end) {
  const int64_t n = end - begin, px = 28 * 28;
  std::vector<float> x(static_cast<size_t>(n * px));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t row = order[size_t(begin + i)];
    std::memcpy(&x[size_t(i * px)], &s.images[size_t(row * px)], sizeof(float) * size_t(px));
    y[size_t(i)] = s.labels[size_t(row)];
  }
  return {kiln::numpy::array(x, {n, 1, 28, 28}), kiln::numpy::array(y, {n})};
}

}  // namespace mnist
