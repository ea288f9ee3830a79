// spec_from_gguf: the TokenizerSpec a GGUF file's tokenizer.* metadata describes, so a model
// file alone is enough to build its models::Tokenizer.
#pragma once
#include "formats/gguf.h"
#include "models/tokenizer.h"

namespace kiln::models {

// Reads tokenizer.ggml.{model, pre, tokens, scores, token_type, merges, *_token_id,
// add_bos_token, add_eos_token, add_space_prefix} and tokenizer.chat_template. Optional keys
// take llama.cpp's defaults (no scores/types/merges, ids -1, add_bos as the model type's
// default: on for SentencePiece, off for byte-level BPE). Missing tokens or model: the
// getters' kiln::Error ("gguf: metadata key ... is missing").
TokenizerSpec spec_from_gguf(const formats::Gguf& gguf);

}  // namespace kiln::models
