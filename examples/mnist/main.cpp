// kiln_mnist: trains the MNIST CNN (or the MLP) with Adam under jit and prints a progress
// bar, then each epoch's test accuracy and time, and optionally exports the trained model
// (ONNX, StableHLO). `kiln_mnist --help` lists the options.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backend/backend.h"
#include "data.h"
#include "kiln/export.h"
#include "train.h"

namespace {

struct Options {
  std::string data = "mnist", dir, device, model = "cnn", schedule = "cosine", export_onnx, export_stablehlo;
  int epochs = 5;
  int64_t batch_size = 64, train_limit = 0, test_limit = 0, hidden = 128;
  double learning_rate = 1e-3;
  int64_t seed = 0;
};

const char* kUsage =
    "usage: kiln_mnist [options]\n"
    "  --data mnist|fashion   data set (default mnist)\n"
    "  --data-dir DIR         where its IDX files are (default: where make installs them)\n"
    "  --model NAME           cnn (the issue's CNN, default), mlp (784-128-10) or small-cnn\n"
    "  --hidden N             the MLP's hidden width (default 128)\n"
    "  --epochs N             passes over the training set (default 5)\n"
    "  --batch-size N         examples per Adam step (default 64)\n"
    "  --lr X                 Adam (peak) learning rate (default 0.001)\n"
    "  --schedule NAME        cosine (optax cosine_decay_schedule from --lr to 0 over all\n"
    "                         steps of all epochs, default) or constant\n"
    "  --device NAME          kiln device, e.g. cpu or wasm (default: kiln's default)\n"
    "  --seed N               PRNG seed for initialization and shuffling (default 0)\n"
    "  --train-limit N        train on the first N training examples only (0: all)\n"
    "  --test-limit N         evaluate on the first N test examples only (0: all)\n"
    "  --export-onnx FILE     write the trained model (images [1, 1, 28, 28] -> logits) as ONNX\n"
    "  --export-stablehlo FILE  ... and as a StableHLO MLIR module\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "kiln_mnist: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) usage_error("missing value after " + a);
    std::string v = argv[++i];
    auto num = [&](const char* what) {
      char* end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end) usage_error(std::string(what) + " expects a number, got " + v);
      return d;
    };
    if (a == "--data") o.data = v;
    else if (a == "--data-dir") o.dir = v;
    else if (a == "--model") o.model = v;
    else if (a == "--device") o.device = v;
    else if (a == "--schedule") o.schedule = v;
    else if (a == "--export-onnx") o.export_onnx = v;
    else if (a == "--export-stablehlo") o.export_stablehlo = v;
    else if (a == "--epochs") o.epochs = int(num("--epochs"));
    else if (a == "--batch-size") o.batch_size = int64_t(num("--batch-size"));
    else if (a == "--hidden") o.hidden = int64_t(num("--hidden"));
    else if (a == "--lr") o.learning_rate = num("--lr");
    else if (a == "--seed") o.seed = int64_t(num("--seed"));
    else if (a == "--train-limit") o.train_limit = int64_t(num("--train-limit"));
    else if (a == "--test-limit") o.test_limit = int64_t(num("--test-limit"));
    else usage_error("unknown option " + a);
  }
  if (o.epochs < 1 || o.batch_size < 1) usage_error("--epochs and --batch-size must be >= 1");
  if (o.schedule != "cosine" && o.schedule != "constant")
    usage_error("--schedule expects cosine or constant, got " + o.schedule);
  return o;
}

void truncate(mnist::Split& s, int64_t n) {
  if (n <= 0 || n >= s.size()) return;
  s.labels.resize(size_t(n));
  s.images.resize(size_t(n) * 28 * 28);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A one-line bar on stderr, redrawn in place: [=====>      ] 312/937  loss 0.2145  12.3 s
void draw_bar(int64_t step, int64_t steps, double loss, double secs) {
  const int width = 30;
  int filled = int(double(width) * double(step) / double(steps));
  std::string bar(size_t(filled), '=');
  if (filled < width) bar += '>';
  bar.resize(size_t(width), ' ');
  std::fprintf(stderr, "\r  [%s] %lld/%lld  loss %.4f  %.1f s", bar.c_str(), (long long)step,
               (long long)steps, loss, secs);
  if (step == steps) std::fputc('\n', stderr);
  std::fflush(stderr);
}

// The trained model as a function of the images alone: the parameters are closed over, so
// they become the exported file's constants (ONNX initializers).
void export_model(const Options& o, const mnist::Trainer& trainer) {
  const mnist::Model model = mnist::parse_model(o.model);
  const kiln::Tree params = trainer.params();
  const kiln::Fn forward = [model, params](const std::vector<kiln::Tree>& a) {
    return kiln::Tree(mnist::apply(model, params, a[0].array()));
  };
  const std::vector<kiln::Tree> example = {kiln::Tree(kiln::numpy::zeros({1, 1, 28, 28}))};
  auto write = [](const std::string& path, const auto& bytes) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    std::printf("wrote %s (%zu bytes)\n", path.c_str(), bytes.size());
  };
  if (!o.export_onnx.empty()) write(o.export_onnx, kiln::export_onnx(forward, example));
  if (!o.export_stablehlo.empty()) write(o.export_stablehlo, kiln::export_stablehlo(forward, example));
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  try {
    if (!o.device.empty()) kiln::set_default_device(o.device);
    std::string dir = o.dir.empty() ? mnist::default_dir(o.data) : o.dir;
    auto t0 = std::chrono::steady_clock::now();
    mnist::Dataset d = mnist::load(o.data, dir);
    truncate(d.train, o.train_limit);
    truncate(d.test, o.test_limit);
    std::printf("kiln_mnist: %s (%lld train, %lld test, loaded in %.2f s), model %s, device %s, "
                "Adam lr %g (%s), batch %lld, seed %lld\n",
                o.data.c_str(), (long long)d.train.size(), (long long)d.test.size(),
                seconds_since(t0), o.model.c_str(), kiln::default_device().c_str(),
                o.learning_rate, o.schedule.c_str(), (long long)o.batch_size, (long long)o.seed);
    // The cosine schedule spans exactly the steps train_epoch takes (partial batches dropped).
    const int64_t total_steps = int64_t(o.epochs) * (d.train.size() / o.batch_size);
    kiln::optax::ScalarOrSchedule lr = o.learning_rate;
    if (o.schedule == "cosine") lr = kiln::optax::cosine_decay_schedule(o.learning_rate, total_steps);
    mnist::Trainer trainer(mnist::parse_model(o.model), lr, o.seed, o.hidden);
    double total = 0;
    for (int e = 0; e < o.epochs; ++e) {
      auto start = std::chrono::steady_clock::now();
      double loss = trainer.train_epoch(d.train, o.batch_size, e, [&](int64_t s, int64_t n, double l) {
        if (s == n || s % 10 == 0) draw_bar(s, n, l, seconds_since(start));
      });
      double train_s = seconds_since(start);
      double acc = trainer.accuracy(d.test);
      double epoch_s = seconds_since(start);
      total += epoch_s;
      std::printf("epoch %d/%d: train loss %.4f, test accuracy %.2f%%, %.1f s (train %.1f s, "
                  "test %.1f s), total %.1f s\n",
                  e + 1, o.epochs, loss, 100 * acc, epoch_s, train_s, epoch_s - train_s, total);
      std::fflush(stdout);
    }
    export_model(o, trainer);
  } catch (const kiln::Error& err) {
    std::fprintf(stderr, "kiln_mnist: %s\n", err.what());
    return 1;
  }
  return 0;
}
