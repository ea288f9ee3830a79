// The decoder: config from GGUF metadata, weights packed onto the device, and one forward
// step (RMSNorm, RoPE, grouped-query attention over the KV cache, gated MLP, output projection).
#include "models/transformer.h"

#include <cmath>

#include "backend/backend.h"
#include "formats/ggml_blocks.h"
#include "library/decode_attention.h"
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

// cos and sin of each position's RoPE angles, [T, 1, rope_dim / 2]: computed once per step
// and RoPE base and shared by every layer's q and k (built per rope() call, they were 4 kernels
// per layer on webgpu: ~120 of a SmolLM2 decode step's ~830 dispatches).
struct RopeTables {
  Array cos, sin;
};

RopeTables rope_tables(const TransformerConfig& c, const Array& positions, float base) {
  const int64_t T = positions.shape(0), half = c.rope_dim / 2;
  // theta_i = pos * base^(-2i/rope_dim), the per-pair factor built by repeated float
  // multiplication as llama.cpp's rope cache does.
  std::vector<float> inv_freq(static_cast<size_t>(half));
  const float step = std::pow(base, -2.0f / float(c.rope_dim));
  float f = 1.0f;
  for (int64_t i = 0; i < half; ++i, f *= step) inv_freq[size_t(i)] = f;
  const Array theta = np::reshape(positions.astype(DType::Float32), {T, 1, 1}) *
                      np::array(inv_freq, {1, 1, half});
  // Computed as one array and sliced apart: jit fusion materializes both halves in one kernel
  // (a part of an expression is computed as its whole; docs/ARCHITECTURE.md, jit).
  const Array both = np::concatenate({np::cos(theta), np::sin(theta)}, -1);
  return {np::index(both, {ellipsis, Slice{0, half, {}}}), np::index(both, {ellipsis, Slice{half, {}, {}}})};
}

// x [T, heads, head_dim] rotated by position: the first rope_dim dims in pairs, the rest kept.
Array rope(const TransformerConfig& c, const Array& x, const RopeTables& t) {
  const int64_t T = x.shape(0), heads = x.shape(1), half = c.rope_dim / 2;
  const Array& cos = t.cos;
  const Array& sin = t.sin;
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
// the new rows placed. The softmax is not taken over a concatenation of the two score parts:
// their maximum and exponential sums are combined (as flash attention merges blocks) and the
// sum divides the weighted values at the end, so no probability array is joined, normalized
// and sliced apart again (9 -> 7 kernels per layer in a decode step). Without a `cached`
// mask (a prefill into an empty cache) the cache part is left out: it would score every
// query against all n_ctx masked positions (at a 256-token prompt and n_ctx 384 more
// multiply-adds than the step's own scores) and add exact zeros. Returns [T, H * D].
Array attention(const TransformerConfig& c, const Array& q, const Array& cache_k,
                const Array& cache_v, const Array& k, const Array& v, const Array& cached,
                const Array& fresh) {
  const int64_t T = q.shape(0), G = c.n_head / c.n_head_kv, D = c.head_dim;
  const Array qg = np::transpose(np::reshape(q, {T, c.n_head_kv, G, D}), std::vector<int>{1, 2, 0, 3});
  auto heads_first = [](const Array& a) { return np::transpose(a, std::vector<int>{1, 0, 2}); };
  const float scale = c.attention_scale > 0 ? c.attention_scale : 1.0f / std::sqrt(float(D));
  auto scores = [&](const Array& keys, const Array& allowed) {  // [Hkv, G, T, keys]
    const Array s = np::einsum("hgtd,hcd->hgtc", {qg, heads_first(keys)}) * Array(scale);
    return np::where(allowed, s, Array(-INFINITY));
  };
  // A prompt's own scores with the keys as [Hkv, D, T] times the scale: jit computes that
  // product into a buffer (a reduction reads its broadcast), so the score kernel's SIMD lanes,
  // which run along the keys, load adjacent floats; from the [T, Hkv, D] rows they gathered
  // one float per row (SmolLM2 prefill: this kernel was a fifth of the time). With a power of
  // two scale (1/8 for head_dim 64, 1/16 for 256) q . (k * s) is (q . k) * s bit for bit.
  // The CPU devices only: webgpu's tiled matmul stages its operands through workgroup memory
  // and was not measured with this form.
  int scale_exp = 0;
  const bool exact_scale = std::frexp(scale, &scale_exp) == 0.5f;
  const bool cpu_lanes = !get_backend(default_device()).prefers_fewer_kernels();
  auto prompt_scores = [&](const Array& keys, const Array& allowed) {
    if (!exact_scale || !cpu_lanes || keys.shape(0) == 1) return scores(keys, allowed);
    const Array kt = np::transpose(keys, std::vector<int>{1, 2, 0}) * Array(scale);
    return np::where(allowed, np::einsum("hgtd,hdc->hgtc", {qg, kt}), Array(-INFINITY));
  };
  if (!cached.valid()) {
    // The cache part's maximum is -inf and its exponentials 0, so these are its values.
    const Array s_new = prompt_scores(k, fresh);
    const Array e = np::exp(s_new - np::max(s_new, -1, true));
    const Array total = np::sum(e, -1, true);
    const Array out = np::einsum("hgtc,hcd->hgtd", {e, heads_first(v)}) / total;
    return np::reshape(np::transpose(out, std::vector<int>{2, 0, 1, 3}), {T, c.n_head * D});
  }
  // The cache's scores first: traced in this order, jit computes a decode step's rotated q
  // and k heads as one buffer that both score kernels read.
  const Array s_cache = scores(cache_k, cached), s_new = prompt_scores(k, fresh);
  // Every query sees its own row (s <= t), so the maximum is finite. (The new rows' part
  // first: in a decode step it is one score, which the cache maximum's kernel then reads.)
  const Array top = np::maximum(np::max(s_new, -1, true), np::max(s_cache, -1, true));
  const Array e_cache = np::exp(s_cache - top), e_new = np::exp(s_new - top);
  const Array total = np::sum(e_cache, -1, true) + np::sum(e_new, -1, true);
  const Array out = (np::einsum("hgtc,hcd->hgtd", {e_cache, heads_first(cache_v)}) +
                     np::einsum("hgtc,hcd->hgtd", {e_new, heads_first(v)})) /
                    total;  // [Hkv, G, T, D]
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
  // x @ W^T of each named matrix, in order. A merged matrix's matvec is traced once and its
  // members are column slices of it: views, which the kernels that consume q, k, v (or gate
  // and up) read fused, so no copy kernel splits it. Each output row is still its own sum
  // over the same columns, so the values are those of the separate matvecs.
  std::vector<Array> linears(const std::vector<std::string>& names, const Array& x) const {
    std::map<std::string, Array> merged_out;
    std::vector<Array> out;
    for (const std::string& name : names) {
      const auto it = w.merged.find(name);
      if (it == w.merged.end()) {
        out.push_back(linear(name, x));
        continue;
      }
      const TransformerWeights::Rows& r = it->second;
      if (!merged_out.count(r.matrix)) merged_out.emplace(r.matrix, linear(r.matrix, x));
      out.push_back(np::index(merged_out.at(r.matrix), {ellipsis, Slice{r.start, r.start + r.count, {}}}));
    }
    return out;
  }
  Array vector(const std::string& name) const { return params[name].array(); }
};

// What an architecture fixes that its GGUF metadata does not say (llama.cpp's
// llama-model.cpp and its graph builders for that architecture).
struct ArchRules {
  const char* arch;
  RopeStyle rope;
  FfnActivation activation;
  bool embedding_scale;      // token embeddings times sqrt(n_embd)
  bool qk_norm, post_norms;  // the per-head q/k RMSNorm, the norms after attention and MLP
  int sliding_period;        // with a sliding window: every period-th layer is global
  float rope_base_sliding;   // the sliding layers' RoPE base unless the file has one
};

constexpr ArchRules kArchRules[] = {
    {"llama", RopeStyle::AdjacentPairs, FfnActivation::SiLU, false, false, false, 0, 0.0f},
    // llama.cpp: LLAMA_ROPE_TYPE_NEOX, LLM_FFN_GELU (tanh) with a parallel gate, swa pattern 6,
    // rope_freq_base_train_swa 10000.
    {"gemma3", RopeStyle::Halves, FfnActivation::GeluTanh, true, true, true, 6, 10000.0f},
};

}  // namespace

TransformerConfig config_from_gguf(const formats::Gguf& g) {
  TransformerConfig c;
  c.arch = g.get_string("general.architecture");
  const ArchRules* rules = nullptr;
  for (const ArchRules& r : kArchRules)
    if (c.arch == r.arch) rules = &r;
  if (!rules)
    fail("llm", "architecture '", c.arch, "' is not implemented yet (supported: llama, gemma3)");
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
  c.rope = rules->rope;
  c.activation = rules->activation;
  if (rules->embedding_scale) c.embedding_scale = std::sqrt(float(c.n_embd));
  c.qk_norm = rules->qk_norm;
  c.post_norms = rules->post_norms;
  c.final_softcap = meta_float_or(g, a + "final_logit_softcapping", 0.0f);
  if (rules->sliding_period > 0 && g.find(a + "attention.sliding_window")) {
    c.sliding_window = meta_int(g, a + "attention.sliding_window");
    c.rope_base_sliding = meta_float_or(g, a + "rope.freq_base_swa", rules->rope_base_sliding);
  }
  c.sliding_layer.assign(size_t(c.n_layer), false);
  for (int64_t l = 0; c.sliding_window > 0 && l < c.n_layer; ++l)
    c.sliding_layer[size_t(l)] = l % rules->sliding_period < rules->sliding_period - 1;
  // Gemma 3 27B (62 layers) scales queries by 1/sqrt(n_embd / n_head), the others by
  // 1/sqrt(head_dim): llama.cpp's rule, as the GGUF has no query_pre_attn_scalar.
  if (c.arch == "gemma3" && c.n_layer == 62) c.attention_scale = 1.0f / std::sqrt(float(c.n_embd / c.n_head));
  return c;
}

namespace {

// Projections of one layer that read the same input: merged into one matrix, they are one
// matvec kernel instead of several (a decode step's host cost is about its kernel count:
// SmolLM2 589 -> 529). Only members of one packed type and row length merge (a K-quant mix
// keeps some v in another type: then q and k merge and v stays apart). The MLP's gate and up
// merge only where the device prefers fewer kernels (Backend::prefers_fewer_kernels: webgpu),
// where jit fusion recomputes SiLU(gate) * up of the merged output inside the down matvec's
// loads; elsewhere their separate matvecs hold SiLU(gate) and the product in their epilogues,
// and after a merge that product was an elementwise kernel of its own (+-0 kernels, measured
// no faster; docs/ARCHITECTURE.md, LLM runtime).
struct MergeRule {
  const char* members[3];
  bool only_where_fewer_kernels;
};
constexpr MergeRule kMergeRules[] = {
    {{"attn_q.weight", "attn_k.weight", "attn_v.weight"}, false},  // all read the attention norm's h
    {{"ffn_gate.weight", "ffn_up.weight", nullptr}, true},         // both read the MLP norm's f
};

// The merged matrices of `g`: the merged name (members joined by '+') -> its members' tensors.
std::map<std::string, std::vector<const formats::GgufTensorInfo*>> merge_plan(const formats::Gguf& g,
                                                                             bool fewer_kernels) {
  std::map<std::string, const formats::GgufTensorInfo*> by_name;
  for (const formats::GgufTensorInfo& info : g.tensors) by_name[info.name] = &info;
  std::map<std::string, std::vector<const formats::GgufTensorInfo*>> plan;
  for (int64_t l = 0;; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    if (!by_name.count(p + "attn_norm.weight")) break;
    for (const MergeRule& rule : kMergeRules) {
      if (rule.only_where_fewer_kernels && !fewer_kernels) continue;
      std::vector<const formats::GgufTensorInfo*> members;
      for (const char* m : rule.members)
        if (m && by_name.count(p + m) && by_name[p + m]->dims.size() == 2) members.push_back(by_name[p + m]);
      std::vector<bool> taken(members.size(), false);
      for (size_t i = 0; i < members.size(); ++i) {  // one group per (type, row length)
        std::vector<const formats::GgufTensorInfo*> group;
        std::string name;
        for (size_t j = i; j < members.size(); ++j) {
          if (taken[j] || members[j]->type != members[i]->type || members[j]->dims[0] != members[i]->dims[0]) continue;
          taken[j] = true;
          group.push_back(members[j]);
          name += (name.empty() ? "" : "+") + members[j]->name.substr(p.size());
        }
        if (group.size() > 1 && can_pack(group[0]->type)) plan[p + name] = std::move(group);
      }
    }
  }
  return plan;
}

}  // namespace

TransformerWeights load_weights(const formats::Gguf& g, std::span<const uint8_t> file,
                                const TransformerConfig& c) {
  TransformerWeights w;
  Tree::Dict params;
  auto put = [&](QuantizedWeight m, const std::string& name) {
    params[name] = m.parts;
    w.matrices[name] = std::move(m);
  };
  auto pack = [&](const formats::GgufTensorInfo& info) {
    return pack_tensor(info.name, info.type, int64_t(info.dims[1]), int64_t(info.dims[0]),
                       formats::gguf_tensor_data(file, info));
  };
  // Merged matrices first, packed member by member and concatenated on the host (concat_rows
  // frees each member as it copies it), then uploaded once.
  for (const auto& [name, members] : merge_plan(g, get_backend(default_device()).prefers_fewer_kernels())) {
    std::vector<PackedTensor> parts;
    int64_t start = 0;
    for (const formats::GgufTensorInfo* info : members) {
      parts.push_back(pack(*info));
      w.merged[info->name] = {name, start, parts.back().rows};
      start += parts.back().rows;
    }
    put(upload(concat_rows(name, std::move(parts))), name);
  }
  for (const formats::GgufTensorInfo& info : g.tensors) {
    if (w.merged.count(info.name)) continue;
    const int64_t cols = int64_t(info.dims[0]);
    if (info.dims.size() == 1) {
      std::vector<float> values(static_cast<size_t>(cols));
      formats::dequantize(info.type, formats::gguf_tensor_data(file, info), cols, values.data());
      params[info.name] = np::array(values, {cols});
      continue;
    }
    put(upload(pack(info)), info.name);
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

namespace {

// Whether layer l attends through the sliding window (and uses the sliding RoPE base).
bool is_sliding(const TransformerConfig& c, int64_t l) {
  return size_t(l) < c.sliding_layer.size() && c.sliding_layer[size_t(l)];
}

// Which cache positions and which of the step's own rows each query may attend. A decode
// step on a device that runs decode_attention as one kernel passes the start and the window
// instead (`fused`): the routine computes the same mask from them. A step into an empty cache
// has no `cached` mask: attention() leaves the cache out.
struct Masks {
  Array cached, fresh;
  bool fused = false;
  Array start;
  int64_t window = 0;
};

// The step's attention as the decode_attention routine (lax): q [T, H, D], the layer's cache
// keys/values [C, Hkv, D], its own k, v [T, Hkv, D]. The same values as attention() up to
// float reordering (its online softmax sums in another order). One token's operands go
// without the T axis (the form webgpu's split-K kernels were written for; same memory).
// Returns [T, H * D].
Array fused_decode_attention(const TransformerConfig& c, const Array& q, const Array& cache_k,
                             const Array& cache_v, const Array& k, const Array& v, const Masks& m) {
  const float scale = c.attention_scale > 0 ? c.attention_scale : 1.0f / std::sqrt(float(c.head_dim));
  const int64_t T = q.shape(0);
  auto rows = [&](const Array& a) { return T > 1 ? a : np::reshape(a, {a.shape(1), a.shape(2)}); };
  const Array out = lax::decode_attention(rows(q), cache_k, cache_v, rows(k), rows(v), m.start, scale, m.window);
  return np::reshape(out, {T, c.n_head * c.head_dim});
}

// A layer's new keys and values as the step returns them. One token's are List{keys,
// values}: views of the buffers the step computes anyway (the rotated heads, the q/k/v
// matvec), so no kernel packs them into an output of their own (SmolLM2: 8 kernels per
// decode step, 4 layers' rows to a kernel); the runtime copies each from its offset there
// (kv_cache_write). Several tokens' rows would be strided views of those buffers: they stay
// one stacked [2, T, Hkv, D], which jit packs with other layers' (a prefill's few kernels).
Tree new_rows(const Array& k, const Array& v) {
  if (k.shape(0) == 1) return Tree(Tree::List{Tree(k), Tree(v)});
  return Tree(np::stack({k, v}, 0));
}

// One layer's attention block: norms, q/k/v, optional per-head q/k norms, RoPE with the
// layer's base, attention over the cache with its mask, output projection (and post-norm).
// Returns the block's output and the layer's new keys and values, each [T, Hkv, D].

std::pair<Array, Tree> attention_block(const TransformerConfig& c, const Layers& L, int64_t l,
                                        const Array& x, const Array& cache,
                                        const RopeTables& angles, const Masks& allowed) {
  const std::string p = "blk." + std::to_string(l) + ".";
  const int64_t T = x.shape(0);
  const Array h = rms_norm(x, L.vector(p + "attn_norm.weight"), c.rms_eps);
  const std::vector<Array> qkv = L.linears({p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"}, h);
  Array q = np::reshape(qkv[0], {T, c.n_head, c.head_dim});
  Array k = np::reshape(qkv[1], {T, c.n_head_kv, c.head_dim});
  const Array v = np::reshape(qkv[2], {T, c.n_head_kv, c.head_dim});
  if (c.qk_norm) {
    q = rms_norm(q, L.vector(p + "attn_q_norm.weight"), c.rms_eps);
    k = rms_norm(k, L.vector(p + "attn_k_norm.weight"), c.rms_eps);
  }
  // q and k rotated together: one kernel over their H + Hkv heads instead of one each (the
  // rotation is per head and position, so the values are those of two rope() calls). Where q
  // and k are slices of one merged matvec the concatenation reads that buffer twice; the
  // rotated heads are materialized once (RoPE's pair select is) and q, k are views of them.
  const Array qk = rope(c, np::concatenate({q, k}, 1), angles);
  q = np::index(qk, {Slice{}, Slice{0, c.n_head, {}}});
  k = np::index(qk, {Slice{}, Slice{c.n_head, {}, {}}});
  const Array heads = allowed.fused ? fused_decode_attention(c, q, cache[l][0], cache[l][1], k, v, allowed)
                                    : attention(c, q, cache[l][0], cache[l][1], k, v, allowed.cached, allowed.fresh);
  Array out = L.linear(p + "attn_output.weight", heads);
  if (c.post_norms) out = rms_norm(out, L.vector(p + "post_attention_norm.weight"), c.rms_eps);
  return {out, new_rows(k, v)};
}

// One layer's gated MLP (SwiGLU or GeGLU), with the post-norm when the model has one.
Array mlp_block(const TransformerConfig& c, const Layers& L, int64_t l, const Array& x) {
  const std::string p = "blk." + std::to_string(l) + ".";
  const Array f = rms_norm(x, L.vector(p + "ffn_norm.weight"), c.rms_eps);
  const std::vector<Array> gate_up = L.linears({p + "ffn_gate.weight", p + "ffn_up.weight"}, f);
  const Array& gate = gate_up[0];
  const Array act = c.activation == FfnActivation::SiLU ? nn::silu(gate) : nn::gelu(gate, true);
  Array out = L.linear(p + "ffn_down.weight", act * gate_up[1]);
  if (c.post_norms) out = rms_norm(out, L.vector(p + "post_ffw_norm.weight"), c.rms_eps);
  return out;
}

}  // namespace

Tree transformer_step(const TransformerConfig& c, const TransformerWeights& weights,
                      const Tree& params, const Array& tokens, const Array& start,
                      const Array& cache, const Array* last, bool empty_cache) {
  const Layers L{weights, params};
  const int64_t T = tokens.shape(0), n_ctx = cache.shape(2);
  const Array positions = np::arange(T, DType::Int32) + start;
  // A decode step where the caller asks for it and the device runs the attention as its own
  // kernels (webgpu: a dispatch costs more host time than the kernel; docs/ARCHITECTURE.md,
  // "Fused decode attention") passes the routine the start and the window instead of masks;
  // so does a decode or prefill step on a CPU device whose routine beats the unfused kernels
  // (native with AVX2, wasm for decode: those score all n_ctx rows of a decode step, gathering
  // each key across the SIMD lanes, and every masked pair of a prompt;
  // $KILN_NATIVE_DECODE_ATTENTION=0, $KILN_NATIVE_PREFILL_ATTENTION=0 and
  // $KILN_WASM_DECODE_ATTENTION=0 turn each off). cpu keeps the unfused attention (the
  // reference loop would be no faster).
  const Backend& be = get_backend(default_device());
  const bool has = T == 1 ? be.has_decode_attention() : be.has_prefill_attention();
  const bool prefers = T == 1 ? be.prefers_decode_attention() : be.prefers_prefill_attention();
  const bool fused = has && (be.prefers_fewer_kernels() ? c.fused_decode_attention : prefers);
  Masks causal, windowed;
  if (fused) {
    causal = Masks{Array(), Array(), true, start, 0};
    windowed = Masks{Array(), Array(), true, start, c.sliding_window};
  } else if (empty_cache) {
    causal = Masks{Array(), new_rows_mask(T, 0), false, Array(), 0};
    windowed = c.sliding_window > 0 ? Masks{Array(), new_rows_mask(T, c.sliding_window), false, Array(), 0} : causal;
  } else {
    causal = windowed = Masks{cache_mask(start, T, n_ctx, 0), new_rows_mask(T, 0), false, Array(), 0};
    if (c.sliding_window > 0) {
      // Both cache masks as one array sliced apart: jit fusion computes them in one kernel.
      const Array both = np::concatenate({causal.cached, cache_mask(start, T, n_ctx, c.sliding_window)}, 0);
      causal.cached = np::index(both, {Slice{0, T, {}}});
      windowed = Masks{np::index(both, {Slice{T, {}, {}}}), new_rows_mask(T, c.sliding_window), false, Array(), 0};
    }
  }
  const RopeTables global_angles = rope_tables(c, positions, c.rope_base);
  const RopeTables sliding_angles =
      c.sliding_window > 0 ? rope_tables(c, positions, c.rope_base_sliding) : global_angles;
  Array x = dequantize_rows(L.matrix("token_embd.weight"), tokens);
  if (c.embedding_scale != 1.0f) x = x * Array(c.embedding_scale);
  Tree::List new_kv;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const bool sliding = is_sliding(c, l);
    auto [attn, kv] = attention_block(c, L, l, x, cache, sliding ? sliding_angles : global_angles,
                                      sliding ? windowed : causal);
    x = x + attn;
    x = x + mlp_block(c, L, l, x);
    new_kv.emplace_back(kv);
  }
  if (last) x = np::take(x, *last, 0);
  x = rms_norm(x, L.vector("output_norm.weight"), c.rms_eps);
  Array logits = L.linear(weights.tied_output ? "token_embd.weight" : "output.weight", x);
  if (c.final_softcap > 0)
    logits = np::tanh(logits * Array(1.0f / c.final_softcap)) * Array(c.final_softcap);
  return Tree(Tree::List{Tree(logits), Tree(std::move(new_kv))});
}

}  // namespace kiln::models
