// The decoder: config from GGUF metadata, weights packed onto the device, and one forward
// step (RMSNorm, RoPE, grouped-query attention over the KV cache, SwiGLU, output projection).
#include "models/transformer.h"

#include <cmath>

#include "formats/ggml_blocks.h"
#include "library/nn.h"
#include "library/numpy.h"
#include "models/kv_cache.h"

namespace kiln::models {

namespace np = kiln::numpy;

namespace {

int64_t meta_int(const formats::Gguf& g, const std::string& key) {
  const formats::GgufValue* v = g.find(key);
  if (!v) fail("llm", "metadata key '", key, "' is missing");
  return v->type == formats::GgufValueType::U32 || v->type == formats::GgufValueType::U64
             ? int64_t(v->uint)
             : v->sint;
}

float meta_float_or(const formats::Gguf& g, const std::string& key, float fallback) {
  return g.find(key) ? g.get_f32(key) : fallback;
}

Array rms_norm(const Array& x, const Array& weight, float eps) {
  const Array mean_sq = np::mean(np::square(x), -1, true);
  return x * np::rsqrt(mean_sq + Array(eps)) * weight;
}

// x [T, heads, head_dim] rotated by position: the first rope_dim dims in pairs, the rest kept.
Array rope(const TransformerConfig& c, const Array& x, const Array& positions) {
  const int64_t T = x.shape(0), heads = x.shape(1), half = c.rope_dim / 2;
  // theta_i = pos * base^(-2i/rope_dim), the per-pair factor built by repeated float
  // multiplication as llama.cpp's rope cache does.
  std::vector<float> inv_freq(static_cast<size_t>(half));
  const float step = std::pow(c.rope_base, -2.0f / float(c.rope_dim));
  float f = 1.0f;
  for (int64_t i = 0; i < half; ++i, f *= step) inv_freq[size_t(i)] = f;
  const Array theta = np::reshape(positions.astype(DType::Float32), {T, 1, 1}) *
                      np::array(inv_freq, {1, 1, half});
  const Array cos = np::cos(theta), sin = np::sin(theta);
  Array rot = np::index(x, {Slice{}, Slice{}, Slice{0, c.rope_dim, {}}});
  Array x0, x1;
  if (c.rope == RopeStyle::AdjacentPairs) {
    rot = np::reshape(rot, {T, heads, half, 2});
    x0 = np::index(rot, {ellipsis, int64_t(0)});
    x1 = np::index(rot, {ellipsis, int64_t(1)});
  } else {
    x0 = np::index(rot, {ellipsis, Slice{0, half, {}}});
    x1 = np::index(rot, {ellipsis, Slice{half, c.rope_dim, {}}});
  }
  const Array y0 = x0 * cos - x1 * sin, y1 = x0 * sin + x1 * cos;
  Array out = c.rope == RopeStyle::AdjacentPairs
                  ? np::reshape(np::stack({y0, y1}, -1), {T, heads, c.rope_dim})
                  : np::concatenate({y0, y1}, -1);
  if (c.rope_dim == c.head_dim) return out;
  return np::concatenate({out, np::index(x, {Slice{}, Slice{}, Slice{c.rope_dim, {}, {}}})}, -1);
}

// Grouped-query attention of q [T, H, D] over the cache's keys/values [C, Hkv, D] (where
// `cached` allows) and the step's own new ones [T, Hkv, D] (where `fresh` allows), one softmax
// over both; query head h reads kv head h / (H / Hkv), as llama.cpp broadcasts. Keeping the
// two apart lets the cache stay an argument the runtime extends in place, never a copy with
// the new rows placed. Returns [T, H * D].
Array attention(const TransformerConfig& c, const Array& q, const Array& cache_k,
                const Array& cache_v, const Array& k, const Array& v, const Array& cached,
                const Array& fresh) {
  const int64_t T = q.shape(0), C = cache_k.shape(0), G = c.n_head / c.n_head_kv, D = c.head_dim;
  const Array qg = np::transpose(np::reshape(q, {T, c.n_head_kv, G, D}), std::vector<int>{1, 2, 0, 3});
  auto heads_first = [](const Array& a) { return np::transpose(a, std::vector<int>{1, 0, 2}); };
  const float scale = c.attention_scale > 0 ? c.attention_scale : 1.0f / std::sqrt(float(D));
  auto scores = [&](const Array& keys, const Array& allowed) {  // [Hkv, G, T, keys]
    const Array s = np::einsum("hgtd,hcd->hgtc", {qg, heads_first(keys)}) * Array(scale);
    return np::where(allowed, s, Array(-INFINITY));
  };
  const Array p = nn::softmax(np::concatenate({scores(cache_k, cached), scores(k, fresh)}, -1), -1);
  const Array p_cache = np::index(p, {ellipsis, Slice{0, C, {}}});
  const Array p_new = np::index(p, {ellipsis, Slice{C, C + T, {}}});
  const Array out = np::einsum("hgtc,hcd->hgtd", {p_cache, heads_first(cache_v)}) +
                    np::einsum("hgtc,hcd->hgtd", {p_new, heads_first(v)});  // [Hkv, G, T, D]
  return np::reshape(np::transpose(out, std::vector<int>{2, 0, 1, 3}), {T, c.n_head * D});
}

// A matrix of the traced parameters with its static type and sizes.
struct Layers {
  const TransformerWeights& w;
  const Tree& params;
  QuantizedWeight matrix(const std::string& name) const {
    QuantizedWeight m = w.matrices.at(name);
    m.parts = params[name];
    return m;
  }
  Array linear(const std::string& name, const Array& x) const {
    return quantized_linear(x, matrix(name));
  }
  Array vector(const std::string& name) const { return params[name].array(); }
};

}  // namespace

TransformerConfig config_from_gguf(const formats::Gguf& g) {
  TransformerConfig c;
  c.arch = g.get_string("general.architecture");
  if (c.arch != "llama")
    fail("llm", "architecture '", c.arch, "' is not implemented yet (supported: llama)");
  const std::string a = c.arch + ".";
  c.n_layer = meta_int(g, a + "block_count");
  c.n_embd = meta_int(g, a + "embedding_length");
  c.n_head = meta_int(g, a + "attention.head_count");
  c.n_head_kv = g.find(a + "attention.head_count_kv") ? meta_int(g, a + "attention.head_count_kv")
                                                       : c.n_head;
  c.head_dim = g.find(a + "attention.key_length") ? meta_int(g, a + "attention.key_length")
                                                  : c.n_embd / c.n_head;
  c.n_ff = meta_int(g, a + "feed_forward_length");
  c.n_ctx_train = meta_int(g, a + "context_length");
  c.rope_dim = g.find(a + "rope.dimension_count") ? meta_int(g, a + "rope.dimension_count")
                                                  : c.head_dim;
  c.rms_eps = meta_float_or(g, a + "attention.layer_norm_rms_epsilon", 1e-5f);
  c.rope_base = meta_float_or(g, a + "rope.freq_base", 10000.0f);
  c.n_vocab = int64_t(g.get_string_array("tokenizer.ggml.tokens").size());
  if (c.n_head % c.n_head_kv != 0 || c.rope_dim > c.head_dim || c.rope_dim % 2 != 0)
    fail("llm", "inconsistent attention metadata: ", c.n_head, " heads, ", c.n_head_kv,
         " kv heads, head dim ", c.head_dim, ", rope dim ", c.rope_dim);
  return c;
}

TransformerWeights load_weights(const formats::Gguf& g, std::span<const uint8_t> file,
                                const TransformerConfig& c) {
  TransformerWeights w;
  Tree::Dict params;
  for (const formats::GgufTensorInfo& info : g.tensors) {
    const std::span<const uint8_t> bytes = formats::gguf_tensor_data(file, info);
    const int64_t cols = int64_t(info.dims[0]);
    if (info.dims.size() == 1) {
      std::vector<float> values(static_cast<size_t>(cols));
      formats::dequantize(info.type, bytes, cols, values.data());
      params[info.name] = np::array(values, {cols});
      continue;
    }
    const int64_t rows = int64_t(info.dims[1]);
    QuantizedWeight m = upload(pack_tensor(info.name, info.type, rows, cols, bytes));
    params[info.name] = m.parts;
    w.matrices[info.name] = std::move(m);
  }
  w.tied_output = !w.matrices.count("output.weight");
  for (const char* name : {"token_embd.weight", "output_norm.weight"})
    if (!params.count(name)) fail("llm", "tensor '", name, "' is missing");
  if (w.matrices.at("token_embd.weight").cols != c.n_embd)
    fail("llm", "token_embd.weight has rows of ", w.matrices.at("token_embd.weight").cols,
         " values, expected embedding_length ", c.n_embd);
  w.params = Tree(std::move(params));
  return w;
}

Tree transformer_step(const TransformerConfig& c, const TransformerWeights& weights,
                      const Tree& params, const Array& tokens, const Array& start,
                      const Array& cache, const Array* last) {
  const Layers L{weights, params};
  const int64_t T = tokens.shape(0), n_ctx = cache.shape(2);
  const Array positions = np::arange(T, DType::Int32) + start;
  const Array cached = cache_mask(start, T, n_ctx, 0), fresh = new_rows_mask(T, 0);
  Array x = dequantize_rows(L.matrix("token_embd.weight"), tokens);
  if (c.embedding_scale != 1.0f) x = x * Array(c.embedding_scale);
  std::vector<Array> new_kv;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const Array h = rms_norm(x, L.vector(p + "attn_norm.weight"), c.rms_eps);
    const Array q = rope(c, np::reshape(L.linear(p + "attn_q.weight", h), {T, c.n_head, c.head_dim}), positions);
    const Array k = rope(c, np::reshape(L.linear(p + "attn_k.weight", h), {T, c.n_head_kv, c.head_dim}), positions);
    const Array v = np::reshape(L.linear(p + "attn_v.weight", h), {T, c.n_head_kv, c.head_dim});
    const Array heads = attention(c, q, cache[l][0], cache[l][1], k, v, cached, fresh);
    x = x + L.linear(p + "attn_output.weight", heads);
    const Array f = rms_norm(x, L.vector(p + "ffn_norm.weight"), c.rms_eps);
    const Array gate = L.linear(p + "ffn_gate.weight", f);
    const Array act = c.activation == FfnActivation::SiLU ? nn::silu(gate) : nn::gelu(gate, true);
    x = x + L.linear(p + "ffn_down.weight", act * L.linear(p + "ffn_up.weight", f));
    new_kv.push_back(np::stack({k, v}, 0));  // [2, T, Hkv, D]
  }
  if (last) x = np::take(x, *last, 0);
  x = rms_norm(x, L.vector("output_norm.weight"), c.rms_eps);
  const Array logits =
      L.linear(weights.tied_output ? "token_embd.weight" : "output.weight", x);
  return Tree(Tree::List{Tree(logits), Tree(np::stack(new_kv, 0))});
}

}  // namespace kiln::models
