// The sampler chain: penalties on recent tokens, top-k, temperature, top-p (nucleus), then a
// draw from the renormalized distribution with a seeded generator.
#include "models/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

namespace kiln::models {

namespace {

int32_t argmax(std::span<const float> v) {
  return int32_t(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

std::vector<double> log_softmax_row(std::span<const float> logits) {
  const double mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l) - mx);
  const double lse = mx + std::log(sum);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - lse;
  return out;
}

int32_t Sampler::sample(std::span<const float> logits_in, std::span<const int32_t> history) {
  std::vector<float> logits(logits_in.begin(), logits_in.end());
  const SamplerOptions& o = options_;
  if (o.penalizes()) {
    const size_t n = o.repeat_last_n < 0 ? history.size()
                                         : std::min(history.size(), size_t(o.repeat_last_n));
    std::unordered_set<int32_t> seen(history.end() - std::ptrdiff_t(n), history.end());
    for (int32_t id : seen) {
      if (id < 0 || size_t(id) >= logits.size()) continue;
      float& l = logits[size_t(id)];
      l = l > 0 ? l / o.repetition_penalty : l * o.repetition_penalty;
    }
  }
  if (o.temperature <= 0) return argmax(logits);
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  auto by_logit = [&](int32_t a, int32_t b) {
    return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
  };
  size_t keep = ids.size();
  if (o.top_k > 0 && size_t(o.top_k) < keep) keep = size_t(o.top_k);
  std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(keep), ids.end(), by_logit);
  ids.resize(keep);
  std::vector<double> p(keep);
  const double top = logits[size_t(ids[0])];
  double sum = 0;
  for (size_t i = 0; i < keep; ++i)
    sum += p[i] = std::exp((double(logits[size_t(ids[i])]) - top) / o.temperature);
  if (o.top_p < 1.0f) {
    double acc = 0;
    size_t n = 0;
    while (n < keep && acc < o.top_p * sum) acc += p[n++];
    keep = std::max<size_t>(n, 1);
    p.resize(keep);
    sum = std::accumulate(p.begin(), p.end(), 0.0);
  }
  const double u = std::uniform_real_distribution<double>(0.0, sum)(rng_);
  double acc = 0;
  for (size_t i = 0; i < keep; ++i)
    if ((acc += p[i]) > u) return ids[i];
  return ids[keep - 1];
}

}  // namespace kiln::models
