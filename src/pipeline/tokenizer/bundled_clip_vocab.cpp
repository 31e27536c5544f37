#include "pipeline/tokenizer/bundled_clip_vocab.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "core/message_text.h"
#include "pipeline/tokenizer/clip_byte_unicode.h"
#include "pipeline/tokenizer/hf_tokenizer_files.h"

namespace websd {
namespace {

// CLIP's SimpleTokenizer keeps 49152 - 256 - 2 merges of the 262144 in OpenAI's file.
constexpr std::size_t kClipMergeCount = 48894;
constexpr std::size_t kClipVocabSize = 49408;
constexpr int kClipMaxLength = 77;

struct BundledVocab {
  std::vector<std::string> tokens;  // by id, for vocab.json
  ClipTokenizerSpec spec;           // pad token still the CLIPTokenizer default
};

// CLIP's bytes_to_unicode() lists the printable bytes (standing for themselves) first, then the others
// (standing for code points 256, 257, ... in byte order): ascending code points, i.e. ascending UTF-8.
std::vector<std::string> byte_symbols_in_clip_order() {
  std::vector<std::string> symbols(clip_byte_to_unicode().begin(), clip_byte_to_unicode().end());
  std::sort(symbols.begin(), symbols.end());
  return symbols;
}

BundledVocab build_bundled_vocab() {
  const std::string origin = kBundledClipVocabOrigin;
  BundledVocab out;
  out.spec.merges = parse_merges_txt(bundled_clip_merges_txt(), origin);
  if (out.spec.merges.size() != kClipMergeCount) {
    throw Error("tokenizer", origin + ": " + std::to_string(out.spec.merges.size()) + " merges, not " +
                                 std::to_string(kClipMergeCount) + " (rebuild websd from an intact checkout)");
  }
  const std::vector<std::string> symbols = byte_symbols_in_clip_order();
  out.tokens.reserve(kClipVocabSize);
  out.tokens.assign(symbols.begin(), symbols.end());
  for (const std::string& symbol : symbols) out.tokens.push_back(symbol + "</w>");
  for (const BpeMerge& merge : out.spec.merges) out.tokens.push_back(merge.first + merge.second);
  out.tokens.push_back("<|startoftext|>");
  out.tokens.push_back("<|endoftext|>");

  out.spec.vocab.reserve(out.tokens.size());
  for (std::size_t id = 0; id < out.tokens.size(); ++id) {
    out.spec.vocab.emplace(out.tokens[id], static_cast<TokenId>(id));
  }
  if (out.spec.vocab.size() != kClipVocabSize || out.tokens.size() != kClipVocabSize) {
    throw Error("tokenizer", origin + ": " + std::to_string(out.spec.vocab.size()) + " distinct tokens, not " +
                                 std::to_string(kClipVocabSize) + " (rebuild websd from an intact checkout)");
  }
  out.spec.origin = origin;
  out.spec.merges_origin = origin;
  for (SpecialTokenSetting* setting : {&out.spec.bos, &out.spec.eos, &out.spec.unk, &out.spec.pad}) {
    setting->origin = origin;
  }
  out.spec.max_length = kClipMaxLength;
  return out;
}

// Built once: parsing and hashing 49408 tokens is worth not repeating per tokenizer.
const BundledVocab& bundled_vocab() {
  static const BundledVocab vocab = build_bundled_vocab();
  return vocab;
}

void check_pad_token(const BundledVocab& vocab, const std::string& pad_token) {
  if (vocab.spec.vocab.count(pad_token) == 0) {
    throw Error("tokenizer", std::string(kBundledClipVocabOrigin) + ": pad token " + message_quote(pad_token, 80) +
                                 " is not in the vocabulary (SD 1.x pads with '<|endoftext|>', SD 2.x with '!')");
  }
}

// Written by hand, in id order as Hugging Face writes it: nlohmann::ordered_json would look up each
// of the 49408 keys by linear search.
std::string vocab_json(const std::vector<std::string>& tokens) {
  std::string out = "{";
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (id > 0) out += ',';
    out += nlohmann::json(tokens[id]).dump();
    out += ':';
    out += std::to_string(id);
  }
  out += "}\n";
  return out;
}

nlohmann::ordered_json special_tokens(const ClipTokenizerSpec& spec, const std::string& pad_token) {
  return {{"bos_token", spec.bos.content},
          {"eos_token", spec.eos.content},
          {"unk_token", spec.unk.content},
          {"pad_token", pad_token}};
}

}  // namespace

ClipTokenizerSpec bundled_clip_tokenizer_spec(const std::string& pad_token) {
  const BundledVocab& vocab = bundled_vocab();
  check_pad_token(vocab, pad_token);
  ClipTokenizerSpec spec = vocab.spec;
  spec.pad.content = pad_token;
  return spec;
}

std::map<std::string, std::string> bundled_clip_tokenizer_files(const std::string& pad_token) {
  const BundledVocab& vocab = bundled_vocab();
  check_pad_token(vocab, pad_token);
  // The keys of the tokenizer_config.json of openai/clip-vit-large-patch14 that websd and transformers read.
  nlohmann::ordered_json config = special_tokens(vocab.spec, pad_token);
  config["model_max_length"] = vocab.spec.max_length;
  config["do_lower_case"] = true;
  config["tokenizer_class"] = "CLIPTokenizer";
  config["add_prefix_space"] = false;
  config["errors"] = "replace";
  return {{"vocab.json", vocab_json(vocab.tokens)},
          {"merges.txt", std::string(bundled_clip_merges_txt())},
          {"tokenizer_config.json", config.dump(2) + "\n"},
          {"special_tokens_map.json", special_tokens(vocab.spec, pad_token).dump(2) + "\n"}};
}

}  // namespace websd
