// The tokenizer/ folder of a generated checkpoint: either copied from an existing Hugging Face CLIP
// tokenizer folder, or a minimal byte-level BPE vocabulary that can encode any text (one token per
// byte, no merges). Thread-compatible (writes files).
#pragma once

#include <string>

namespace websd {

// Files copied by tokenizer_folder_copy, whichever exist.
inline constexpr const char* kTokenizerFileNames[] = {"vocab.json", "merges.txt", "tokenizer_config.json",
                                                      "special_tokens_map.json", "tokenizer.json"};

// Copies the tokenizer files of `from_dir` into the existing folder `to_dir`, each read under the input
// rule (io/input_file.h) and the whole loaded as `generate` loads it. Throws websd::Error if `from_dir`
// holds none of them, if one is not a regular file or over its cap, or if the tokenizer is broken
// (naming the file).
void tokenizer_folder_copy(const std::string& from_dir, const std::string& to_dir);

// Writes into the existing folder `to_dir`: vocab.json (the 256 byte symbols in CLIP's order, each again with "</w>",
// then
// <|startoftext|> and <|endoftext|>: 514 tokens), merges.txt (only the "#version" line),
// tokenizer_config.json and special_tokens_map.json with `pad_token` ("<|endoftext|>" or "!").
void tokenizer_folder_write_minimal(const std::string& to_dir, const std::string& pad_token);

}  // namespace websd
