// Fields that Hugging Face tokenizer files share: added-token entries and special-token values.
// Pure functions, thread-safe. Errors name `where` (a file and key) and the bad value.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pipeline/tokenizer/bpe_model.h"
#include "pipeline/tokenizer/tokenizer_types.h"

namespace websd {

// One entry of tokenizer.json's `added_tokens` or tokenizer_config.json's `added_tokens_decoder`
// ({content, special, normalized, lstrip, rstrip, single_word}). lstrip/rstrip only move whitespace,
// which CLIP's pre-tokenizer drops anyway, so they change no id; single_word is refused.
AddedToken parse_added_token(const nlohmann::json& entry, TokenId id, const std::string& where);

// A special-token value: a string, an {"content": ...} object (older AddedToken form), or null
// (returns nullopt).
std::optional<std::string> parse_special_token(const nlohmann::json& value, const std::string& where);

// A token id: an integer in [0, 2^31).
TokenId parse_token_id(const nlohmann::json& value, const std::string& where);

// A maximum sequence length (model_max_length, truncation.max_length): an integer of at least 2 (BOS
// and EOS). Values above 1e6 are Hugging Face's "no limit" marker (int(1e30)) and give nullopt.
std::optional<int> parse_max_length(const nlohmann::json& value, const std::string& where);

// A {token: id} object (vocab.json, tokenizer.json's model.vocab).
BpeVocab parse_vocab(const nlohmann::json& value, const std::string& where);

}  // namespace websd
