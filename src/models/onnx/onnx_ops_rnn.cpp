// ONNX recurrent layers (RNN, GRU, LSTM): the sequence unrolled step by step at trace time
// (its length is static), gates as matmuls and kiln::nn activations, per direction.
#include "library/nn.h"
#include "library/numpy.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;

enum class Cell { Rnn, Gru, Lstm };

using Activation = Array (*)(const Array&);
Array act_sigmoid(const Array& x) { return nn::sigmoid(x); }
Array act_tanh(const Array& x) { return np::tanh(x); }
Array act_relu(const Array& x) { return np::maximum(x, np::zeros_like(x)); }

std::vector<Activation> activations(const NodeContext& c, std::vector<std::string> defaults, int directions) {
  std::vector<std::string> names = defaults;
  if (c.has_attr("activations")) {
    names.clear();
    for (const std::string& s : c.node().find_attribute("activations")->strings) names.push_back(s);
  }
  std::vector<Activation> out;
  for (const std::string& n : names) {
    if (n == "Sigmoid") out.push_back(act_sigmoid);
    else if (n == "Tanh") out.push_back(act_tanh);
    else if (n == "Relu") out.push_back(act_relu);
    else c.fail("activation '", n, "' is not supported (supported: Sigmoid, Tanh, Relu)");
  }
  if (out.size() != defaults.size() * size_t(directions) && out.size() != defaults.size())
    c.fail(out.size(), " activations, expected ", defaults.size(), " per direction");
  return out;
}

// Gate block g ([hidden] rows g*hidden ...) of a [G*hidden, k] weight, transposed for x @ W^T.
Array gate(const Array& w, int64_t g, int64_t hidden) {
  return np::transpose(np::index(w, {Slice{g * hidden, (g + 1) * hidden, 1}}));
}

struct Step {
  Array h, c;
};

// One time step of one direction; `w`, `r`: [G*hidden, in/hidden]; `b`: [2*G*hidden] or empty.
Step cell_step(const NodeContext& c, Cell kind, const Array& x, const Step& prev, const Array& w, const Array& r,
               const std::optional<Array>& b, const std::optional<Array>& p, const Activation* act, int64_t hidden) {
  const int64_t gates = kind == Cell::Rnn ? 1 : kind == Cell::Gru ? 3 : 4;
  const double clip = c.attr_float("clip", 0.0f);
  auto bias = [&](int64_t k) { return np::index(*b, {Slice{k * hidden, (k + 1) * hidden, 1}}); };
  auto pre = [&](int64_t g, const Array& h) {
    Array v = np::matmul(x, gate(w, g, hidden)) + np::matmul(h, gate(r, g, hidden));
    if (b) v = v + bias(g) + bias(gates + g);
    return clip > 0 ? np::clip(v, Array(-clip), Array(clip)) : v;
  };
  if (kind == Cell::Rnn) return {act[0](pre(0, prev.h)), prev.c};
  if (kind == Cell::Gru) {
    const Array z = act[0](pre(0, prev.h)), rt = act[0](pre(1, prev.h));
    Array hx = np::matmul(x, gate(w, 2, hidden));
    if (b) hx = hx + bias(2);
    Array hh;
    if (c.attr_int("linear_before_reset", 0)) {
      Array rh = np::matmul(prev.h, gate(r, 2, hidden));
      if (b) rh = rh + bias(5);
      hh = act[1](hx + rt * rh);
    } else {
      Array rh = np::matmul(rt * prev.h, gate(r, 2, hidden));
      if (b) rh = rh + bias(5);
      hh = act[1](hx + rh);
    }
    return {(1.0 - z) * hh + z * prev.h, prev.c};
  }
  auto peep = [&](int64_t k) { return np::index(*p, {Slice{k * hidden, (k + 1) * hidden, 1}}); };
  Array i = pre(0, prev.h), o = pre(1, prev.h), f = pre(2, prev.h), g = pre(3, prev.h);
  if (p) i = i + peep(0) * prev.c, f = f + peep(2) * prev.c;
  i = act[0](i), f = act[0](f), g = act[1](g);
  const Array cell = f * prev.c + i * g;
  if (p) o = o + peep(1) * cell;
  return {act[0](o) * act[2](cell), cell};
}

template <Cell Kind>
std::vector<Array> recurrent(const NodeContext& c) {
  const bool batch_first = c.attr_int("layout", 0) != 0;
  const Array x = batch_first ? np::swapaxes(c.input(0), 0, 1) : c.input(0);  // [seq, batch, in]
  const std::string direction = c.attr_string("direction", "forward");
  const int dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.fail("direction '", direction, "', expected forward, reverse or bidirectional");
  const int64_t hidden = c.attr_int("hidden_size", c.input(2).shape(-1)), seq = x.shape(0), batch = x.shape(1);
  const std::vector<std::string> defaults = Kind == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
                                            : Kind == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  const std::vector<Activation> acts = activations(c, defaults, dirs);
  std::optional<Array> lens;
  if (c.has_input(4)) lens = np::reshape(cast_to(c.input(4), int32), {batch, 1});
  std::vector<Array> ys(size_t(seq * dirs)), hs, cs;
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    if (reverse && lens) c.fail("sequence_lens with a reverse direction is not supported");
    auto pick = [&](size_t i) { return c.has_input(i) ? std::optional<Array>(c.input(i)[d]) : std::nullopt; };
    const Array w = c.input(1)[d], r = c.input(2)[d];
    const std::optional<Array> b = pick(3), p = Kind == Cell::Lstm ? pick(7) : std::nullopt;
    Step s{pick(5).value_or(np::zeros({batch, hidden}, x.dtype())),
           (Kind == Cell::Lstm ? pick(6) : std::nullopt).value_or(np::zeros({batch, hidden}, x.dtype()))};
    const Activation* act = &acts[acts.size() == defaults.size() ? 0 : size_t(d) * defaults.size()];
    for (int64_t k = 0; k < seq; ++k) {
      const int64_t t = reverse ? seq - 1 - k : k;
      Step next = cell_step(c, Kind, x[t], s, w, r, b, p, act, hidden);
      if (lens) {
        const Array live = Array(int(t)) < *lens;
        next = {np::where(live, next.h, s.h), np::where(live, next.c, s.c)};
        ys[size_t(t * dirs + d)] = np::where(live, next.h, np::zeros_like(next.h));
      } else {
        ys[size_t(t * dirs + d)] = next.h;
      }
      s = next;
    }
    hs.push_back(s.h), cs.push_back(s.c);
  }
  Array y = np::reshape(np::stack(ys), {seq, dirs, batch, hidden});
  Array yh = np::stack(hs), yc = np::stack(cs);
  if (batch_first) y = np::transpose(y, std::vector<int>{2, 0, 1, 3}), yh = np::swapaxes(yh, 0, 1), yc = np::swapaxes(yc, 0, 1);
  return {y, yh, yc};
}

}  // namespace

std::vector<OpRule> rnn_rules() {
  const std::vector<const char*> common = {"activations", "clip", "direction", "hidden_size", "layout"};
  std::vector<const char*> gru = common;
  gru.push_back("linear_before_reset");
  return {
      {"RNN", 7, kMax, common, recurrent<Cell::Rnn>},
      {"GRU", 7, kMax, gru, recurrent<Cell::Gru>},
      {"LSTM", 7, kMax, common, recurrent<Cell::Lstm>},
  };
}

}  // namespace kiln::onnx
