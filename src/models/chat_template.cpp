// Chat rendering for the two template families kiln's models use: ChatML (SmolLM2, with its
// default system turn) and Gemma's turns (system text folded into the first user turn).
#include "models/chat_template.h"

#include "ir/error.h"

namespace kiln::models {

namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";
constexpr std::string_view kTurnStart = "<start_of_turn>";
constexpr std::string_view kTurnEnd = "<end_of_turn>";

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Jinja string literals may spell a newline as the two characters \n.
std::string unescape_newlines(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The system text a ChatML template writes when the first message is not a system message
// (SmolLM2: `{% if loop.first and messages[0]['role'] != 'system' %}` + a literal system turn).
std::string default_system_of(std::string_view jinja) {
  if (!contains(jinja, "!= 'system'") && !contains(jinja, "!= \"system\"")) return {};
  for (std::string_view newline : {std::string_view("\n"), std::string_view("\\n")}) {
    const std::string opener = std::string(kImStart) + "system" + std::string(newline);
    const size_t start = jinja.find(opener);
    if (start == std::string_view::npos) continue;
    const size_t body = start + opener.size();
    const size_t end = jinja.find(kImEnd, body);
    if (end == std::string_view::npos) continue;
    const std::string_view text = jinja.substr(body, end - body);
    // A literal, not an expression such as `' + message['content'] + '`.
    if (contains(text, "'") || contains(text, "\"") || contains(text, "{")) continue;
    return unescape_newlines(text);
  }
  return {};
}

std::string trim(std::string_view text) {
  const char* space = " \t\n\r\f\v";
  const size_t first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(space) - first + 1));
}

std::string render_chatml(const ChatTemplate& t, const std::vector<ChatMessage>& messages,
                          bool add_generation_prompt) {
  std::string out;
  const auto turn = [&](std::string_view role, std::string_view content) {
    out.append(kImStart).append(role).append("\n").append(content).append(kImEnd).append("\n");
  };
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i == 0 && messages[0].role != "system" && !t.default_system.empty())
      turn("system", t.default_system);
    turn(messages[i].role, messages[i].content);
  }
  if (add_generation_prompt) out.append(kImStart).append("assistant\n");
  return out;
}

// Gemma has no system role: system text opens the next user turn, followed by a blank line.
// Contents are trimmed and "assistant" is called "model", as Gemma's template does.
std::string render_gemma(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out, system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system += trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out.append(kTurnStart).append(role).append("\n");
    if (!system.empty() && role != "model") {
      out.append(system).append("\n\n");
      system.clear();
    }
    out.append(trim(m.content)).append(kTurnEnd).append("\n");
  }
  if (add_generation_prompt) out.append(kTurnStart).append("model\n");
  return out;
}

}  // namespace

ChatTemplate recognize_chat_template(std::string_view jinja) {
  if (contains(jinja, kImStart) && contains(jinja, kImEnd))
    return {ChatFormat::ChatML, default_system_of(jinja)};
  if (contains(jinja, kTurnStart) && contains(jinja, kTurnEnd)) return {ChatFormat::Gemma, {}};
  if (jinja.empty())
    fail("tokenizer", "the model has no chat template (tokenizer.chat_template is empty)");
  fail("tokenizer", "unrecognized chat template (", jinja.size(), " bytes starting '",
       jinja.substr(0, 60),
       "'); kiln renders ChatML (<|im_start|>) and Gemma (<start_of_turn>) templates");
}

ChatTemplate chat_template_for(const Tokenizer& tokenizer) {
  const std::string& jinja = tokenizer.spec().chat_template;
  if (!jinja.empty()) return recognize_chat_template(jinja);
  const auto is_control = [&](std::string_view text) {
    const int32_t id = tokenizer.find_token(text);
    return id >= 0 && tokenizer.token_type(id) == TokenType::Control;
  };
  if (is_control(kTurnStart) && is_control(kTurnEnd)) return {ChatFormat::Gemma, {}};
  if (is_control(kImStart) && is_control(kImEnd)) return {ChatFormat::ChatML, {}};
  return recognize_chat_template(jinja);  // fails, saying the template is empty
}

std::string render_chat(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt) {
  switch (chat_template.format) {
    case ChatFormat::ChatML:
      return render_chatml(chat_template, messages, add_generation_prompt);
    case ChatFormat::Gemma:
      return render_gemma(messages, add_generation_prompt);
  }
  fail("tokenizer", "unknown chat format");
}

}  // namespace kiln::models
