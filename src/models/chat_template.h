// Chat prompts for instruct models: recognizes a GGUF chat template by its markers (ChatML's
// <|im_start|>, Gemma's <start_of_turn>) and renders messages the way that template does.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "models/tokenizer.h"

namespace kiln::models {

// One turn of a conversation.
struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// The chat formats kiln renders: ChatML (<|im_start|>role ... <|im_end|>, SmolLM2) and Gemma's
// (<start_of_turn>user ... <end_of_turn>).
enum class ChatFormat { ChatML, Gemma };

// A recognized chat template: its format and its default system prompt.
struct ChatTemplate {
  ChatFormat format;
  // ChatML templates that add a system turn when the conversation has none (SmolLM2's does).
  std::string default_system;
};

// The format of a Jinja chat template, told by its markers (this is no Jinja engine);
// kiln::Error naming `tokenizer` for a template of any other shape, or an empty one.
ChatTemplate recognize_chat_template(std::string_view jinja);

// The spec's template; when the file has none (Gemma 3 270M's GGUF ships without one), the
// format whose turn tokens the vocabulary holds as control tokens; else kiln::Error.
ChatTemplate chat_template_for(const Tokenizer& tokenizer);

// The prompt text (special tokens written out: encode it with parse_special), without BOS:
// encode with add_special for the BOS the vocabulary wants. add_generation_prompt opens the
// assistant's turn.
std::string render_chat(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt);

}  // namespace kiln::models
