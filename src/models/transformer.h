// A generic decoder-only transformer described by GGUF metadata (llama and gemma3, one step
// with per-architecture switches), written with kiln arrays so jit fuses and compiles it.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "formats/gguf.h"
#include "frontend/array.h"
#include "frontend/pytree.h"
#include "models/quantized_weights.h"

namespace kiln::models {

// How RoPE pairs a head's dims: llama.cpp's NORM mode rotates adjacent pairs (2i, 2i+1), the
// convention of llama GGUFs (convert_hf_to_gguf permutes Q/K rows so that it reproduces HF's
// rotate-half); NEOX mode pairs i with i + rope_dim/2 (HF's rotate-half; gemma3, qwen2).
enum class RopeStyle { AdjacentPairs, Halves };
enum class FfnActivation { SiLU, GeluTanh };  // the MLP's gate: llama's SiLU, gemma's tanh GELU

// The hyperparameters of a decoder-only transformer as the GGUF metadata gives them (llama and
// gemma3 architectures), with the switches that tell the architectures apart.
struct TransformerConfig {
  std::string arch;  // general.architecture
  int64_t n_layer = 0, n_embd = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_ff = 0;
  int64_t n_vocab = 0, n_ctx_train = 0, rope_dim = 0;
  float rms_eps = 1e-5f, rope_base = 10000.0f;
  RopeStyle rope = RopeStyle::AdjacentPairs;
  FfnActivation activation = FfnActivation::SiLU;
  // gemma3's switches (config_from_gguf's rule table says which architecture sets which):
  float embedding_scale = 1.0f;  // token embeddings times sqrt(n_embd)
  bool qk_norm = false;          // RMSNorm of each q and k head
  bool post_norms = false;       // RMSNorm after attention and after the MLP
  int64_t sliding_window = 0;    // local layers attend to this many past positions
  std::vector<bool> sliding_layer;
  float rope_base_sliding = 0;   // the sliding layers' RoPE base (gemma3: 10000)
  float attention_scale = 0;     // 1/sqrt(head_dim) unless the model says otherwise
  float final_softcap = 0;       // logits = cap * tanh(logits / cap) when > 0
  // Not the file's: the caller's choice (llm::LoadOptions::fused_attention).
  bool fused_decode_attention = false;  // decode steps use lax::decode_attention where offered
};

// The config of `general.architecture`'s keys; kiln::Error for architectures not implemented.
TransformerConfig config_from_gguf(const formats::Gguf& gguf);

// Every tensor of the file on the current default device: 2-d ones packed (QuantizedWeight),
// 1-d ones as float32 arrays. `params` is the jit argument (a Tree::Dict by tensor name);
// `weights` keeps each matrix's static type and sizes.
struct TransformerWeights {
  std::map<std::string, QuantizedWeight> matrices;
  // Sibling projections of a layer that read the same input and have the same packed type and
  // row length are one matrix (load_weights' merge rules: q/k/v; gate/up on webgpu): each member's
  // name maps to the merged matrix and its rows there, and the member is not in `matrices`.
  struct Rows {
    std::string matrix;
    int64_t start = 0, count = 0;
  };
  std::map<std::string, Rows> merged;
  Tree params;
  bool tied_output = false;  // no output.weight: token_embd is the output projection
};
// Uploads every tensor of `file` (the bytes `gguf` was parsed from) as TransformerWeights,
// each layer's q/k/v projections (and on webgpu gate/up) merged where their types and row
// lengths match; kiln::Error("llm: ...") for a missing embedding or norm, mismatched sizes, or
// a weight type that cannot be packed.
TransformerWeights load_weights(const formats::Gguf& gguf, std::span<const uint8_t> file,
                                const TransformerConfig& config);

// One forward step over tokens (int32 [T]) at positions start + [0, T) (start: int32 []),
// attending to the KV cache's positions before start (float32 [n_layer, 2, n_ctx, n_head_kv,
// head_dim]; later positions are masked, so whatever they hold is ignored) and to its own
// tokens. Returns List{logits, new rows}: logits float32 [T, n_vocab], or [1, n_vocab] for
// the row `last` (int32 [1]) when it is given; new rows: one entry per layer, the keys and
// values the caller writes into the cache at start (kv_cache_write): List{keys, values}, each
// float32 [1, n_head_kv, head_dim], for one token, else one float32 [2, T, n_head_kv, head_dim]. Traced under jit: `params` are the traced weights.
// `empty_cache`: the caller promises start is 0 (a prefill into a fresh cache); the cache is
// then not read at all (the same values as masking all of it, without its n_ctx scores).
Tree transformer_step(const TransformerConfig& config, const TransformerWeights& weights,
                      const Tree& params, const Array& tokens, const Array& start,
                      const Array& cache, const Array* last, bool empty_cache = false);

}  // namespace kiln::models
