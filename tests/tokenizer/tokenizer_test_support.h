// Shared inputs of the tokenizer tests: the reference prompts and ids of the fixtures, and temporary
// tokenizer folders assembled from fixture files (symbolic links, nothing is copied).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pipeline/tokenizer/tokenizer_types.h"

namespace websd::test {

using IdRows = std::vector<std::vector<TokenId>>;

// refs/tokenizer.json + refs/tokenizer.safetensors.
struct TokenizerRefs {
  std::vector<std::string> prompts;
  IdRows sd1_unpadded;  // sd1_raw_ids
  IdRows sd2_unpadded;  // sd2_raw_ids
  IdRows sd1_padded;    // tok_sd1.visible.ids [30, 77]
  IdRows sd2_padded;    // tok_sd2.visible.ids [30, 77]
};
const TokenizerRefs& tokenizer_refs();

// Rows of an I64 [rows, cols] tensor of a safetensors fixture.
IdRows read_id_rows(const std::string& safetensors_path, const std::string& key);

// A fresh folder whose entries (name -> fixture-relative path) link to fixture files.
std::string make_linked_folder(const std::string& tag, const std::map<std::string, std::string>& links);
// Writes `text` to `folder`/`name`.
void write_text_file(const std::string& folder, const std::string& name, const std::string& text);

}  // namespace websd::test
