// kiln_chat: a GGUF chat model from the command line: streams the reply to one prompt (or a
// conversation read line by line with --interactive) and prints prefill and decode tok/s.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "kiln/llm.h"
#include "models/chat_template.h"

namespace {

struct Args {
  std::string model = "data/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  std::string prompt = "What is the capital of France?";
  std::string device = "native";
  int max_tokens = 128, threads = 0;
  int64_t n_ctx = 1024;  // decode attends over all n_ctx positions (masked), so not more
  float temperature = 0;
  bool raw = false, interactive = false;
};

void usage() {
  std::fprintf(stderr,
               "kiln_chat [--model FILE.gguf] [--prompt TEXT] [--max-tokens N] [--device "
               "native|cpu|wasm] [--threads N] [--ctx N] [--temperature T] [--raw] [--interactive]\n"
               "  --raw: complete the prompt as is (no chat template)\n");
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(), std::exit(2);
      return argv[++i];
    };
    if (k == "--model") a.model = value();
    else if (k == "--prompt") a.prompt = value();
    else if (k == "--device") a.device = value();
    else if (k == "--max-tokens") a.max_tokens = std::stoi(value());
    else if (k == "--threads") a.threads = std::stoi(value());
    else if (k == "--ctx") a.n_ctx = std::stoll(value());
    else if (k == "--temperature") a.temperature = std::stof(value());
    else if (k == "--raw") a.raw = true;
    else if (k == "--interactive") a.interactive = true;
    else usage(), std::exit(k == "--help" ? 0 : 2);
  }
  return a;
}

// One assistant turn: streams the reply and returns it.
std::string reply(kiln::llm::Model& model, const Args& a, const std::string& text) {
  kiln::llm::GenerateOptions opt;
  opt.max_tokens = a.max_tokens;
  opt.sampling.temperature = a.temperature;
  kiln::llm::GenerateStats st;
  const std::string out = model.generate(text, opt, [](int32_t, const std::string& piece) {
    std::fputs(piece.c_str(), stdout);
    std::fflush(stdout);
    return true;
  }, &st);
  std::fprintf(stderr, "\n[prefill %lld tokens %.1f tok/s, decode %lld tokens %.1f tok/s, stop: %s]\n",
               (long long)st.prompt_tokens, 1000.0 * double(st.prompt_tokens) / st.prefill_ms,
               (long long)st.generated_tokens,
               st.generated_tokens > 1 ? 1000.0 * double(st.generated_tokens - 1) / st.decode_ms : 0.0,
               st.stop_reason.c_str());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.threads > 0) setenv("KILN_NUM_THREADS", std::to_string(a.threads).c_str(), 1);
  try {
    kiln::llm::Model model = kiln::llm::Model::load(a.model, {a.device, a.n_ctx, 32});
    if (a.raw) {
      std::fputs(a.prompt.c_str(), stdout);
      reply(model, a, a.prompt);
      return 0;
    }
    const auto chat = kiln::models::chat_template_for(model.tokenizer());
    std::vector<kiln::models::ChatMessage> messages;
    std::string line = a.prompt;
    do {
      messages.push_back({"user", line});
      messages.push_back({"assistant", reply(model, a, kiln::models::render_chat(chat, messages, true))});
      if (a.interactive) std::fputs("> ", stderr);
    } while (a.interactive && std::getline(std::cin, line));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_chat: %s\n", e.what());
    return 1;
  }
  return 0;
}
