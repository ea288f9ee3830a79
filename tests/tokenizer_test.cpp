// Tests of kiln::models::Tokenizer on small hand-built vocabularies (merge order, byte fallback,
// special tokens, streaming decode, errors), the chat templates, and llama.cpp's fixtures.
#include "models/tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "ir/error.h"
#include "ir/file_bytes.h"
#include "models/chat_template.h"
#include "models/tokenizer_spec_gguf.h"
#include "tests/error_of.h"

namespace tokenizer_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::models::ChatFormat;
using kiln::models::ChatMessage;
using kiln::models::StreamDecoder;
using kiln::models::Tokenizer;
using kiln::models::TokenizerSpec;
using Ids = std::vector<int32_t>;

const std::string kG = "\xC4\xA0";  // "Ġ": byte-level BPE's spelling of a space

// Byte-level BPE vocabulary: a b c, their merges, a spelled space, two specials.
TokenizerSpec bpe_spec(std::vector<std::string> merges) {
  TokenizerSpec s;
  s.model = "gpt2";
  s.pre = "smollm";
  s.tokens = {"<|endoftext|>", "a",      "b", "c", "ab", "bc", "abc", kG, kG + "a", "1", "2",
              "<|im_start|>",  "<tool>", "aa"};
  s.token_types = {3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 4, 1};
  s.merges = std::move(merges);
  s.bos_id = 0;
  s.eos_id = 0;
  return s;
}

TokenizerSpec default_bpe_spec() { return bpe_spec({"a b", "b c", "ab c", kG + " a", "a a"}); }

// SentencePiece vocabulary with scores and the 256 byte tokens at the end.
TokenizerSpec spm_spec() {
  TokenizerSpec s;
  s.model = "llama";
  s.pre = "default";
  s.tokens = {"<pad>",
              "<eos>",
              "<bos>",
              "<unk>",
              "\xE2\x96\x81",
              "a",
              "b",
              "c",
              "ab",
              "bc",
              "\xE2\x96\x81"
              "a",
              "<start_of_turn>",
              "<end_of_turn>",
              "\n",
              "\n\n"};
  s.scores = {0, 0, 0, 0, -1, -2, -2, -2, -3, -1, -0.5f, 0, 0, -1, -1};
  s.token_types = {3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 3, 3, 4, 4};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    s.tokens.push_back(name);
    s.scores.push_back(0);
    s.token_types.push_back(6);
  }
  s.pad_id = 0;
  s.eos_id = 1;
  s.bos_id = 2;
  s.unk_id = 3;
  s.add_bos = true;
  return s;
}

int32_t byte_token(int b) { return 15 + b; }

TEST(TokenizerBpe, MergesApplyInRankOrder) {
  // "a b" outranks "b c": abc = (ab)c.
  Tokenizer first_ab(bpe_spec({"a b", "b c", "ab c"}));
  EXPECT_EQ(first_ab.encode("abc", false, false), Ids({6}));
  EXPECT_EQ(first_ab.encode("ab", false, false), Ids({4}));
  // Without "ab c", (ab) stays and c follows.
  Tokenizer no_abc(bpe_spec({"a b", "b c"}));
  EXPECT_EQ(no_abc.encode("abc", false, false), Ids({4, 3}));
  // "b c" first: a(bc), and there is no "a bc" merge.
  Tokenizer first_bc(bpe_spec({"b c", "a b", "ab c"}));
  EXPECT_EQ(first_bc.encode("abc", false, false), Ids({1, 5}));
}

TEST(TokenizerBpe, EqualRanksMergeLeftmostFirst) {
  Tokenizer tok(default_bpe_spec());
  EXPECT_EQ(tok.encode("aaa", false, false), Ids({13, 1}));
  EXPECT_EQ(tok.encode("aaaa", false, false), Ids({13, 13}));
}

TEST(TokenizerBpe, SpacesAreByteLevelEncoded) {
  Tokenizer tok(default_bpe_spec());
  EXPECT_EQ(tok.encode(" a", false, false), Ids({8}));
  EXPECT_EQ(tok.encode("a a", false, false), Ids({1, 8}));
  EXPECT_EQ(tok.decode({1, 8, 7}), "a a ");
}

TEST(TokenizerBpe, ByteMapRoundTripsEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const std::string encoded = kiln::models::byte_level_encode(all);
  EXPECT_EQ(encoded.find(' '), std::string::npos);
  EXPECT_EQ(kiln::models::byte_level_decode(encoded), all);
  EXPECT_EQ(kiln::models::byte_level_encode(" \n!"), kG + "\xC4\x8A!");
}

TEST(TokenizerBpe, PiecesOutsideTheVocabularyFallBackToSingleByteTokens) {
  Tokenizer tok(default_bpe_spec());
  // "d" is no token and has no byte token in this vocabulary: llama.cpp drops it.
  EXPECT_EQ(tok.encode("adb", false, false), Ids({1, 2}));
}

TEST(TokenizerBpe, DigitsAreSplitOneByOne) {
  Tokenizer tok(default_bpe_spec());
  EXPECT_EQ(tok.encode("12", false, false), Ids({9, 10}));
}

TEST(TokenizerPreTokenizer, SmolLMSplitsLikeLlamaCpp) {
  const auto& pre = kiln::models::find_pre_tokenizer("smollm");
  using Words = std::vector<std::string>;
  EXPECT_EQ(kiln::models::pre_tokenize(pre, "I'm 12 apples  x"),
            Words({"I", "'m", " ", "1", "2", " apples", " ", " x"}));
  // Only a space (not a tab) joins the word after it.
  EXPECT_EQ(kiln::models::pre_tokenize(pre, "x\t\ty  "), Words({"x", "\t", "\t", "y", "  "}));
  EXPECT_EQ(kiln::models::pre_tokenize(pre, "日本語 テスト, ok?!"),
            Words({"日本語", " テスト", ",", " ok", "?!"}));
  // Arabic-Indic and circled digits are numbers (N*); accents alone are not letters.
  EXPECT_EQ(kiln::models::pre_tokenize(pre, "٣٤①"), Words({"٣", "٤", "①"}));
  // Contractions are matched in lower case only, as in the GPT-2 pattern.
  EXPECT_EQ(kiln::models::pre_tokenize(pre, "DON'T it's"), Words({"DON", "'", "T", " it", "'s"}));
  // Invalid UTF-8 becomes U+FFFD, as llama.cpp's pre-tokenizer reads it.
  EXPECT_EQ(kiln::models::pre_tokenize(pre, "a\xFF"), Words({"a", "\xEF\xBF\xBD"}));
}

TEST(TokenizerSentencePiece, MergesByScoreWithSpacePrefix) {
  Tokenizer tok(spm_spec());
  // "bc" (-1) beats "ab" (-3): a(bc).
  EXPECT_EQ(tok.encode("abc", false, false), Ids({5, 9}));
  EXPECT_EQ(tok.encode("ab", false, false), Ids({8}));
  EXPECT_EQ(tok.encode("b a", false, false), Ids({6, 10}));
  EXPECT_EQ(tok.encode("a", true, false), Ids({2, 5}));  // add_bos
  TokenizerSpec prefixed = spm_spec();
  prefixed.add_space_prefix = true;
  Tokenizer with_prefix(prefixed);
  EXPECT_EQ(with_prefix.encode("a", false, false), Ids({10}));
  EXPECT_EQ(with_prefix.decode({10, 6}), "ab");      // the added space is dropped again
  EXPECT_EQ(with_prefix.decode({2, 10, 6}), " ab");  // not after a BOS, as in llama.cpp
}

TEST(TokenizerSentencePiece, UnknownCharactersAreSpelledAsByteTokens) {
  Tokenizer tok(spm_spec());
  EXPECT_EQ(tok.encode("aé", false, false), Ids({5, byte_token(0xC3), byte_token(0xA9)}));
  EXPECT_EQ(tok.decode(tok.encode("é😀 x", false, false)), "é😀 x");
}

TEST(TokenizerSpecials, ControlTokensNeedParseSpecialUserDefinedDoNot) {
  Tokenizer tok(spm_spec());
  const Ids parsed = tok.encode("<start_of_turn>a\n\nb", false, true);
  EXPECT_EQ(parsed, Ids({11, 5, 14, 6}));  // "\n\n" (longer) wins over "\n"
  const Ids plain = tok.encode("<start_of_turn>a\n", false, false);
  EXPECT_NE(plain.front(), 11);
  EXPECT_EQ(plain.back(), 13);  // user-defined "\n" is matched anyway
  EXPECT_EQ(tok.decode(parsed), "a\n\nb");
  EXPECT_EQ(tok.decode(parsed, true), "<start_of_turn>a\n\nb");

  Tokenizer bpe(default_bpe_spec());
  EXPECT_EQ(bpe.encode("<|im_start|>ab<tool>", true, true), Ids({11, 4, 12}));  // add_bos is off
  EXPECT_EQ(bpe.decode({11, 4, 12}), "ab<tool>");
}

TEST(TokenizerSpecials, EndOfTurnSpellingsAreControlWhateverTheirType) {
  // Gemma 3's vocabulary lists "</s>" as user-defined; llama.cpp makes it a control token.
  TokenizerSpec spec = spm_spec();
  spec.tokens.push_back("</s>");
  spec.scores.push_back(0);
  spec.token_types.push_back(4);
  const int32_t end = static_cast<int32_t>(spec.tokens.size()) - 1;
  Tokenizer tok(spec);
  EXPECT_EQ(tok.token_type(end), kiln::models::TokenType::Control);
  EXPECT_EQ(tok.encode("a</s>", false, true), Ids({5, end}));
  const Ids plain = tok.encode("a</s>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), end), 0);
  EXPECT_EQ(tok.decode({5, end}), "a");
  // Generation ends at eos and at these spellings, not at other control tokens.
  EXPECT_TRUE(tok.is_end_of_generation(end));
  EXPECT_TRUE(tok.is_end_of_generation(1));
  EXPECT_TRUE(tok.is_end_of_generation(12));   // <end_of_turn>
  EXPECT_FALSE(tok.is_end_of_generation(11));  // <start_of_turn>
  EXPECT_FALSE(tok.is_end_of_generation(2));   // <bos>
}

TEST(TokenizerSpecials, CopiesOfATokenizerOutliveTheOriginal) {
  std::optional<Tokenizer> original(spm_spec());
  const Tokenizer copy = *original;
  original.reset();
  EXPECT_EQ(copy.encode("<start_of_turn>a\n", false, true), Ids({11, 5, 13}));
}

TEST(TokenizerSpecials, EmptyTokensAreRenamedAsInLlamaCpp) {
  TokenizerSpec spec = default_bpe_spec();
  spec.tokens.push_back("");
  spec.token_types.push_back(4);
  Tokenizer tok(spec);
  EXPECT_EQ(tok.decode({14}), "[EMPTY_14]");
  EXPECT_EQ(tok.encode("a[EMPTY_14]", false, false), Ids({1, 14}));
}

TEST(TokenizerStream, HoldsBackUtf8SplitOverTokens) {
  Tokenizer tok(spm_spec());
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(5), "a");
  EXPECT_EQ(stream.push(byte_token(0xF0)), "");
  EXPECT_EQ(stream.push(byte_token(0x9F)), "");
  EXPECT_EQ(stream.push(byte_token(0x98)), "");
  EXPECT_EQ(stream.push(byte_token(0x80)), "😀");
  EXPECT_EQ(stream.push(byte_token(0xC3)), "");
  EXPECT_EQ(stream.flush(), "\xC3");
  EXPECT_EQ(tok.token_bytes(byte_token(0xC3)), "\xC3");
}

TEST(TokenizerErrors, BadSpecsAndIdsNameTheTokenizer) {
  auto with = [](auto edit) {
    return error_of([&] {
      TokenizerSpec s = default_bpe_spec();
      edit(s);
      Tokenizer tok(s);
    });
  };
  EXPECT_NE(with([](TokenizerSpec& s) {
              s.model = "wordpiece";
            }).find("tokenizer: unsupported tokenizer model 'wordpiece'"),
            std::string::npos);
  EXPECT_NE(
      with([](TokenizerSpec& s) { s.pre = "qwen9"; }).find("tokenizer: unsupported pre-tokenizer"),
      std::string::npos);
  EXPECT_NE(with([](TokenizerSpec& s) {
              s.merges.push_back("a zz");
            }).find("names 'zz', which is not a token"),
            std::string::npos);
  EXPECT_NE(with([](TokenizerSpec& s) { s.merges.push_back("abc"); }).find("not two tokens"),
            std::string::npos);
  EXPECT_NE(with([](TokenizerSpec& s) { s.merges.clear(); }).find("needs tokenizer.ggml.merges"),
            std::string::npos);
  EXPECT_NE(
      with([](TokenizerSpec& s) { s.scores = {1.0f}; }).find("tokenizer.ggml.scores has 1 entries"),
      std::string::npos);
  EXPECT_NE(with([](TokenizerSpec& s) { s.bos_id = 99; }).find("bos token id 99 is out of range"),
            std::string::npos);
  EXPECT_NE(with([](TokenizerSpec& s) { s.bos_id = -1, s.add_bos = true; }).find("no bos token"),
            std::string::npos);
  Tokenizer tok(default_bpe_spec());
  EXPECT_EQ(error_of([&] { tok.decode({1, 14}); }),
            "tokenizer: token id 14 is out of range for a vocabulary of 14 tokens");
  EXPECT_NE(error_of([&] { tok.decode({-1}); }).find("token id -1 is out of range"),
            std::string::npos);
}

// SmolLM2-135M-Instruct's tokenizer.chat_template, as its GGUF holds it.
const char* kSmolLM2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
    "'<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] "
    "+ "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' "
    "}}{% endif %}";

TEST(TokenizerChat, SmolLM2ChatMLWithItsDefaultSystemTurn) {
  const auto t = kiln::models::recognize_chat_template(kSmolLM2Template);
  EXPECT_EQ(t.format, ChatFormat::ChatML);
  EXPECT_EQ(kiln::models::render_chat(t, {{"user", "Hi!"}}, true),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
            "Face<|im_end|>\n"
            "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(kiln::models::render_chat(
                t, {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello"}}, false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello<|im_end|>\n");
}

TEST(TokenizerChat, GemmaTurnsFoldTheSystemTextIntoTheFirstUserTurn) {
  const auto t = kiln::models::recognize_chat_template(
      "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + role + '\n' }}...{{ "
      "'<end_of_turn>\n' }}");
  EXPECT_EQ(t.format, ChatFormat::Gemma);
  EXPECT_EQ(
      kiln::models::render_chat(
          t, {{"system", " Be brief. "}, {"user", "Hi\n"}, {"assistant", "Hello"}, {"user", "Bye"}},
          true),
      "<start_of_turn>user\nBe "
      "brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n"
      "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n");
  // Gemma 3 270M's GGUF has no template: its vocabulary's turn tokens say which format.
  Tokenizer gemma(spm_spec());
  EXPECT_EQ(kiln::models::chat_template_for(gemma).format, ChatFormat::Gemma);
}

TEST(TokenizerChat, UnrecognizedTemplatesAreErrors) {
  EXPECT_NE(error_of([] {
              kiln::models::recognize_chat_template("{{ '[INST] ' + m + ' [/INST]' }}");
            }).find("tokenizer: unrecognized chat template"),
            std::string::npos);
  Tokenizer bpe(default_bpe_spec());  // <|im_start|> but no <|im_end|>, no template
  EXPECT_NE(error_of([&] { kiln::models::chat_template_for(bpe); }).find("has no chat template"),
            std::string::npos);
}

// ---- llama.cpp fixtures: tests/fixtures/llm/<model>_tokenize.txt, one line per corpus line:
// <utf-8 text as hex>\t<space-separated token ids> (no BOS), and detok\t<ids>\t<text as hex>
// lines (llama.cpp's detokenization), made by node-llama-cpp; # lines are the header.

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

// Encodes every fixture line and decodes the ids back; returns the number of lines checked.
size_t check_against_llama_cpp(const TokenizerSpec& spec, const std::string& fixture_path) {
  Tokenizer tok(spec);
  std::ifstream in(fixture_path);
  EXPECT_TRUE(in) << fixture_path;
  std::string line;
  size_t lines = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (line.compare(0, tab, "detok") == 0) {  // detok\t<ids>\t<llama.cpp's text as hex>
      const size_t tab2 = line.find('\t', tab + 1);
      Ids ids_in;
      std::istringstream ids(line.substr(tab + 1, tab2 - tab - 1));
      for (int32_t id; ids >> id;) ids_in.push_back(id);
      EXPECT_EQ(tok.decode(ids_in), from_hex(line.substr(tab2 + 1))) << "detok line " << lines + 1;
      ++lines;
      continue;
    }
    const std::string text = from_hex(line.substr(0, tab));
    Ids want;
    std::istringstream ids(tab == std::string::npos ? "" : line.substr(tab + 1));
    for (int32_t id; ids >> id;) want.push_back(id);
    EXPECT_EQ(tok.encode(text, false, false), want) << "line " << lines + 1 << ": '" << text << "'";
    EXPECT_EQ(tok.decode(want), text) << "line " << lines + 1;
    ++lines;
  }
  return lines;
}

// The spec as a model load builds it: the file read whole, parsed, its tokenizer.* keys.
std::optional<TokenizerSpec> spec_from_gguf_file(const std::string& gguf_path) {
  const std::vector<uint8_t> bytes = kiln::read_file_bytes(gguf_path).value_or(std::vector<uint8_t>{});
  return kiln::models::spec_from_gguf(kiln::formats::parse_gguf(bytes));
}

void run_llama_cpp_fixture(const std::string& gguf_name, const std::string& fixture_name) {
  const std::string gguf = std::string(KILN_FIXTURE_DIR) + "/../../data/models/" + gguf_name;
  const std::string fixture = std::string(KILN_FIXTURE_DIR) + "/llm/" + fixture_name;
  if (!std::filesystem::exists(gguf)) GTEST_SKIP() << gguf_name << " is missing (make models)";
  if (!std::filesystem::exists(fixture))
    GTEST_SKIP() << "tests/fixtures/llm/" << fixture_name << " is missing";
  const std::optional<TokenizerSpec> spec = spec_from_gguf_file(gguf);
  if (!spec) GTEST_SKIP() << "the GGUF reader is not wired into this test yet";
  EXPECT_GT(check_against_llama_cpp(*spec, fixture), 0u);
}

TEST(TokenizerLlamaCpp, SmolLM2MatchesFixture) {
  run_llama_cpp_fixture("SmolLM2-135M-Instruct.Q4_1.gguf", "smollm2_tokenize.txt");
}

TEST(TokenizerLlamaCpp, Gemma3MatchesFixture) {
  run_llama_cpp_fixture("gemma-3-270m-q4_k_m.gguf", "gemma3_tokenize.txt");
}

}  // namespace

}  // namespace tokenizer_test
