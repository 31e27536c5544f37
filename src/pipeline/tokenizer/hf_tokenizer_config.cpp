#include "pipeline/tokenizer/hf_tokenizer_config.h"

#include <charconv>

#include "core/error.h"
#include "core/message_text.h"
#include "io/json_file.h"
#include "pipeline/tokenizer/hf_token_fields.h"

namespace websd {
namespace {

std::optional<std::string> special_token(const nlohmann::json& root, const char* key, const std::string& path) {
  const auto found = root.find(key);
  if (found == root.end()) return std::nullopt;
  return parse_special_token(*found, path + ": " + key);
}

TokenId parse_id_key(const std::string& key, const std::string& where) {
  TokenId id = -1;
  const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
  if (error != std::errc() || end != key.data() + key.size() || id < 0) {
    throw Error("tokenizer", where + ": key " + message_quote(key, 60) + " is not a token id (fix the file)");
  }
  return id;
}

}  // namespace

HfTokenizerConfig read_tokenizer_config(const std::string& path) {
  return parse_tokenizer_config(json_read_file(path), path);
}

HfTokenizerConfig parse_tokenizer_config(const nlohmann::json& root, const std::string& path) {
  if (!root.is_object()) throw Error("tokenizer", path + ": not a JSON object (is this a tokenizer config?)");
  HfTokenizerConfig config;
  config.bos_token = special_token(root, "bos_token", path);
  config.eos_token = special_token(root, "eos_token", path);
  config.unk_token = special_token(root, "unk_token", path);
  config.pad_token = special_token(root, "pad_token", path);
  if (root.contains("model_max_length")) {
    config.model_max_length = parse_max_length(root["model_max_length"], path + ": model_max_length");
  }
  const auto decoder = root.find("added_tokens_decoder");
  if (decoder != root.end() && !decoder->is_null()) {
    const std::string where = path + ": added_tokens_decoder";
    if (!decoder->is_object()) throw Error("tokenizer", where + " is not an object (fix the file)");
    for (const auto& [key, entry] : decoder->items()) {
      config.added_tokens.push_back(
          parse_added_token(entry, parse_id_key(key, where), where + "[\"" + message_safe(key, 60) + "\"]"));
    }
  }
  return config;
}

}  // namespace websd
