// Loads a ClipTokenizer from the files Hugging Face writes. Accepts a tokenizer folder or a diffusers
// model folder (then its tokenizer/ subfolder is used).
//
// Which file wins:
// - tokenizer.json, when present, is the tokenizer (it is what transformers loads first); vocab.json and
//   merges.txt beside it are then ignored. Without it, vocab.json and merges.txt are both required.
// - Special tokens (bos/eos/unk/pad) and model_max_length: tokenizer_config.json overrides
//   special_tokens_map.json, which overrides tokenizer.json (post_processor cls/sep, padding.pad_token,
//   model.unk_token, truncation.max_length), which overrides CLIPTokenizer's defaults
//   (<|startoftext|>, <|endoftext|> for the others, 77). So an SD 2.x folder pads with "!" (id 0) when
//   its tokenizer_config.json says so.
// - Added tokens: tokenizer.json's added_tokens plus tokenizer_config.json's added_tokens_decoder.
// Thread-safe (no shared state). Errors are websd::Error naming the folder or file.
#pragma once

#include <map>
#include <string>

#include "io/input_file.h"
#include "pipeline/tokenizer/clip_tokenizer.h"

namespace websd {

// The input rule's kind (io/input_file.h) for a tokenizer folder's file `name`: tokenizer.json and
// vocab.json hold the vocabulary (megabytes), merges.txt too; the others are small configs.
const InputKind& tokenizer_file_kind(const std::string& name);

// The folder holding the tokenizer files: `folder` itself, or `folder`/tokenizer for a model folder.
std::string find_tokenizer_folder(const std::string& folder);

// The spec that load_clip_tokenizer builds from; exposed so the file precedence can be inspected.
ClipTokenizerSpec read_clip_tokenizer_spec(const std::string& folder);

ClipTokenizer load_clip_tokenizer(const std::string& folder);

// The same precedence on the files of a tokenizer folder held in memory (file name -> content), as a
// single-file checkpoint written by websd carries them; `origin` names them in errors ("<origin>/vocab.json").
ClipTokenizerSpec read_clip_tokenizer_spec_from_files(const std::map<std::string, std::string>& files,
                                                      const std::string& origin);

}  // namespace websd
