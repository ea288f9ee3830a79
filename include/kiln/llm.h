// Public header: kiln::llm, GGUF language models (load, logits, streaming generation) and the
// tokenizer they carry.
#pragma once
#include "models/llm.h"
