// Readers of the Hugging Face files that hold a CLIP BPE tokenizer: vocab.json + merges.txt (the
// "slow" layout SD checkpoints ship) and the single-file tokenizer.json (the "fast" layout).
// Pure functions, thread-safe. Every error is a websd::Error naming the file (and key or line).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/tokenizer/bpe_model.h"
#include "pipeline/tokenizer/tokenizer_types.h"

namespace websd {

// {token: id}.
BpeVocab read_vocab_json(const std::string& path);
// One "left right" pair a line, in rank order; a leading "#version" line and blank lines are skipped.
std::vector<BpeMerge> read_merges_txt(const std::string& path);
// The same from text already in memory (e.g. websd's bundled copy); `origin` names it in errors.
std::vector<BpeMerge> parse_merges_txt(std::string_view text, const std::string& origin);

// What tokenizer.json says about a CLIP tokenizer. The normalizer and pre-tokenizer sections are not
// interpreted: websd always applies CLIP's (see clip_tokenizer.h); the model must be a BPE with
// end_of_word_suffix "</w>".
struct HfTokenizerJson {
  BpeVocab vocab;                        // model.vocab
  std::vector<BpeMerge> merges;          // model.merges, "a b" strings or ["a", "b"] pairs
  std::vector<AddedToken> added_tokens;  // added_tokens
  std::optional<std::string> unk_token;  // model.unk_token
  std::optional<std::string> bos_token;  // post_processor.cls (RobertaProcessing / BertProcessing)
  std::optional<std::string> eos_token;  // post_processor.sep
  std::optional<std::string> pad_token;  // padding.pad_token
  std::optional<int> max_length;         // truncation.max_length
};
HfTokenizerJson read_tokenizer_json(const std::string& path);

// The same readers on content already in memory; `origin` names it in errors.
BpeVocab parse_vocab_json(const nlohmann::json& root, const std::string& origin);
HfTokenizerJson parse_tokenizer_json(const nlohmann::json& root, const std::string& origin);

}  // namespace websd
