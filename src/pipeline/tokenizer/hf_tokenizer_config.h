// Reader of the special-token settings that Hugging Face writes beside a tokenizer:
// tokenizer_config.json (transformers 4 and 5 layouts) and special_tokens_map.json.
// Pure function, thread-safe. Errors are websd::Error naming the file and key.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/tokenizer/tokenizer_types.h"

namespace websd {

struct HfTokenizerConfig {
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<std::string> unk_token;
  std::optional<std::string> pad_token;
  std::optional<int> model_max_length;
  std::vector<AddedToken> added_tokens;  // added_tokens_decoder: {"<id>": {content, special, ...}}
};

// Unknown keys (tokenizer_class, do_lower_case, backend, ...) are ignored.
HfTokenizerConfig read_tokenizer_config(const std::string& path);
// The same on a parsed file; `origin` names it in errors.
HfTokenizerConfig parse_tokenizer_config(const nlohmann::json& root, const std::string& origin);

}  // namespace websd
