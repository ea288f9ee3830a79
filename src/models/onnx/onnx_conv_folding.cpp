// Folding Conv -> BatchNormalization / Mul / Add chains at load (onnx_conv_folding.h). The
// values are computed by models::fold_affine, which the ExecuTorch importer shares.
#include "models/onnx/onnx_conv_folding.h"

#include <algorithm>
#include <optional>
#include <set>

#include "library/numpy.h"
#include "models/conv_folding.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

using formats::OnnxGraph;
using formats::OnnxNode;

namespace {

void count_node_reads(const OnnxGraph& g, std::map<std::string, int>& reads) {
  for (const OnnxNode& n : g.nodes) {
    for (const std::string& in : n.inputs) ++reads[in];
    for (const formats::OnnxAttribute& a : n.attributes)
      for (const OnnxGraph& sub : a.graphs) count_node_reads(sub, reads);
  }
}

bool default_domain(const OnnxNode& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

std::optional<int64_t> int_attr(const OnnxNode& n, const std::string& name) {
  const formats::OnnxAttribute* a = n.find_attribute(name);
  if (!a) return std::nullopt;
  return a->type == formats::OnnxAttributeType::Int ? std::optional<int64_t>(a->i) : std::optional<int64_t>(-1);
}

// The node's outputs past the first are all omitted.
bool single_output(const OnnxNode& n) {
  return !n.outputs.empty() && std::all_of(n.outputs.begin() + 1, n.outputs.end(), [](const auto& o) { return o.empty(); });
}

class Folder {
 public:
  Folder(OnnxGraph& g, std::map<std::string, Array>& constants, std::span<const uint8_t> file)
      : g_(g), constants_(constants), file_(file), reads_(count_value_reads(g)) {}

  void run() {
    std::map<std::string, size_t> reader;  // value -> the node that reads it (last one)
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      for (const std::string& in : g_.nodes[i].inputs) reader[in] = i;
      const OnnxNode& n = g_.nodes[i];
      const formats::OnnxAttribute* value = n.find_attribute("value");
      if (n.op_type == "Constant" && default_domain(n) && n.outputs.size() == 1 && n.attributes.size() == 1 &&
          value && value->type == formats::OnnxAttributeType::Tensor && value->tensors.size() == 1)
        constant_nodes_[n.outputs[0]] = i;
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      OnnxNode& conv = g_.nodes[i];
      if (removed.count(i) || conv.op_type != "Conv" || !default_domain(conv) || conv.inputs.size() < 2) continue;
      const Array* w = constant(conv.inputs[1]);
      const bool has_bias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
      const Array* b = has_bias ? constant(conv.inputs[2]) : nullptr;
      if (!w || w->dtype() != float32 || w->ndim() < 3 || (has_bias && !b)) continue;
      std::optional<models::FoldedConv> folded;
      std::vector<std::string> read;  // the constants the folded nodes read
      for (;;) {
        const std::string& out = conv.outputs.empty() ? std::string() : conv.outputs[0];
        auto r = reader.find(out);
        if (out.empty() || reads_[out] != 1 || r == reader.end() || removed.count(r->second)) break;
        const OnnxNode& next = g_.nodes[r->second];
        std::vector<std::string> operands;
        const std::optional<models::ChannelAffine> a = affine_of(next, out, w->shape(0), w->ndim(), operands);
        if (!a) break;
        const std::optional<Array> bias = folded ? std::optional<Array>(folded->bias) : b ? std::optional<Array>(*b) : std::nullopt;
        folded = models::fold_affine(folded ? folded->weight : *w, bias, *a);
        read.insert(read.end(), operands.begin(), operands.end());
        conv.outputs[0] = next.outputs[0];
        removed.insert(r->second);
      }
      if (!folded) continue;
      read.push_back(conv.inputs[1]);
      if (has_bias) read.push_back(conv.inputs[2]);
      const std::string tag = "\x1f(kiln: folded into " + conv.outputs[0] + ")";
      constants_[conv.inputs[1] + tag] = folded->weight;
      constants_["bias" + tag] = folded->bias;
      conv.inputs.resize(3);
      conv.inputs[1] += tag;
      conv.inputs[2] = "bias" + tag;
      for (const std::string& name : read)
        if (--reads_[name] == 0) {
          constants_.erase(name);
          if (auto c = constant_nodes_.find(name); c != constant_nodes_.end()) removed.insert(c->second);
        }
    }
    std::vector<OnnxNode> kept;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!removed.count(i)) kept.push_back(std::move(g_.nodes[i]));
    g_.nodes = std::move(kept);
  }

 private:
  // An initializer, or the value of a Constant node (PaddleOCR's exports hold every weight
  // in one), decoded here once when a fold reads it.
  const Array* constant(const std::string& name) {
    if (auto it = constants_.find(name); it != constants_.end()) return &it->second;
    if (auto it = decoded_.find(name); it != decoded_.end()) return &it->second;
    auto c = constant_nodes_.find(name);
    if (c == constant_nodes_.end() || removed.count(c->second)) return nullptr;
    const OnnxNode& n = g_.nodes[c->second];
    return &decoded_.emplace(name, tensor_to_array(file_, n.find_attribute("value")->tensors[0])).first->second;
  }

  // The per-channel affine `next` applies to `in` (a conv output of `channels` channels and
  // rank `rank`) with constant parameters, whose names go to `operands`; nothing otherwise.
  std::optional<models::ChannelAffine> affine_of(const OnnxNode& next, const std::string& in, int64_t channels,
                                                 int rank, std::vector<std::string>& operands) {
    if (!default_domain(next) || !single_output(next) || next.outputs[0].empty()) return std::nullopt;
    if (next.op_type == "BatchNormalization") {
      if (next.inputs.size() != 5 || next.inputs[0] != in || int_attr(next, "training_mode").value_or(0) != 0 ||
          int_attr(next, "spatial").value_or(1) != 1)
        return std::nullopt;
      std::vector<const Array*> p;
      for (size_t k = 1; k < 5; ++k) p.push_back(constant(next.inputs[k]));
      if (std::find(p.begin(), p.end(), nullptr) != p.end() || p[0]->ndim() != 1 || p[0]->shape(0) != channels)
        return std::nullopt;
      const formats::OnnxAttribute* eps = next.find_attribute("epsilon");
      if (eps && eps->type != formats::OnnxAttributeType::Float) return std::nullopt;
      operands.assign(next.inputs.begin() + 1, next.inputs.end());
      return models::batch_norm_affine(*p[2], *p[3], *p[0], *p[1], eps ? double(eps->f) : double(1e-5f));
    }
    if ((next.op_type != "Mul" && next.op_type != "Add") || next.inputs.size() != 2) return std::nullopt;
    const int at = next.inputs[0] == in ? 0 : 1;
    const std::string& other = next.inputs[size_t(1 - at)];
    if (next.inputs[size_t(at)] != in || other == in || !constant(other)) return std::nullopt;
    const std::optional<Array> c = models::per_channel_operand(*constant(other), channels, rank);
    if (!c) return std::nullopt;
    operands = {other};
    const Array zero = numpy::zeros({channels}), one = numpy::ones({channels});
    return next.op_type == "Mul" ? models::ChannelAffine{std::nullopt, *c, zero}
                                 : models::ChannelAffine{std::nullopt, one, *c};
  }

  OnnxGraph& g_;
  std::map<std::string, Array>& constants_;
  std::span<const uint8_t> file_;
  std::map<std::string, int> reads_;
  std::map<std::string, size_t> constant_nodes_;  // a Constant node's output -> the node
  std::map<std::string, Array> decoded_;          // their values, decoded by constant()
  std::set<size_t> removed;                       // folded nodes, and Constants none reads
};

}  // namespace

std::map<std::string, int> count_value_reads(const OnnxGraph& g) {
  std::map<std::string, int> reads;
  count_node_reads(g, reads);
  for (const auto* list : {&g.outputs, &g.inputs})
    for (const formats::OnnxValueInfo& v : *list) ++reads[v.name];
  return reads;
}

void fold_conv_affines(OnnxGraph& g, std::map<std::string, Array>& constants, std::span<const uint8_t> file) {
  Folder(g, constants, file).run();
}

}  // namespace kiln::onnx
