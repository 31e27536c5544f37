#include "pipeline/tokenizer/hf_token_fields.h"

#include <limits>

#include "core/error.h"
#include "core/message_text.h"
#include "io/json_file.h"

namespace websd {
namespace {

std::string shown(const nlohmann::json& value) { return json_preview(value, 60); }

bool flag(const nlohmann::json& entry, const char* key, bool fallback, const std::string& where) {
  const auto found = entry.find(key);
  if (found == entry.end() || found->is_null()) return fallback;
  if (!found->is_boolean()) {
    throw Error("tokenizer", where + "." + key + " is " + shown(*found) + ", not true or false (fix the file)");
  }
  return found->get<bool>();
}

}  // namespace

AddedToken parse_added_token(const nlohmann::json& entry, TokenId id, const std::string& where) {
  if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string()) {
    throw Error("tokenizer", where + " is " + shown(entry) + ", not an added token {\"content\": ...} (fix the file)");
  }
  AddedToken token;
  token.content = entry["content"].get<std::string>();
  token.id = id;
  token.special = flag(entry, "special", false, where);
  token.normalized = flag(entry, "normalized", !token.special, where);
  if (flag(entry, "single_word", false, where)) {
    throw Error("tokenizer", where + ": added token " + message_quote(token.content, 80) +
                                 " has single_word=true, which websd does not support (set it to false)");
  }
  return token;
}

std::optional<std::string> parse_special_token(const nlohmann::json& value, const std::string& where) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  throw Error("tokenizer", where + " is " + shown(value) + ", not a token string (fix the file)");
}

TokenId parse_token_id(const nlohmann::json& value, const std::string& where) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
      value.get<std::int64_t>() > std::numeric_limits<TokenId>::max()) {
    throw Error("tokenizer", where + " is " + shown(value) + ", not a token id (a non-negative integer)");
  }
  return static_cast<TokenId>(value.get<std::int64_t>());
}

std::optional<int> parse_max_length(const nlohmann::json& value, const std::string& where) {
  constexpr double kNoLimitAbove = 1e6;
  if (value.is_null()) return std::nullopt;
  if (value.is_number() && value.get<double>() > kNoLimitAbove) return std::nullopt;
  if (!value.is_number_integer() || value.get<std::int64_t>() < 2) {
    throw Error("tokenizer", where + " is " + shown(value) + ", not a length of at least 2 tokens (CLIP uses 77)");
  }
  return static_cast<int>(value.get<std::int64_t>());
}

BpeVocab parse_vocab(const nlohmann::json& value, const std::string& where) {
  if (!value.is_object() || value.empty()) {
    throw Error("tokenizer", where + " is " + shown(value) + ", not a non-empty {token: id} object (fix the file)");
  }
  BpeVocab vocab;
  vocab.reserve(value.size());
  for (const auto& [token, id] : value.items()) {
    vocab.emplace(token, parse_token_id(id, where + "[\"" + message_safe(token, 80) + "\"]"));
  }
  return vocab;
}

}  // namespace websd
