// websd's bundled copy of the CLIP ViT-L/14 BPE tokenizer: the tokenizer of SD 1.x and 2.x, for
// checkpoints that ship none (single-file *.safetensors in the CompVis layout).
//
// Data: third_party/openai-clip/merges.txt, cut from OpenAI's clip/bpe_simple_vocab_16e6.txt.gz
// (github.com/openai/CLIP, MIT licence, see third_party/openai-clip/README.md and LICENSE) and compiled
// in as text by embed_text_file.cmake. Only the merges are stored: the vocabulary is derived from them
// as CLIP's SimpleTokenizer does (256 byte symbols in bytes_to_unicode() order, the same 256 with
// "</w>", one token per merge, then <|startoftext|> and <|endoftext|>: 49408 tokens), which is token
// for token the vocab.json that Hugging Face ships for openai/clip-vit-large-patch14.
//
// Thread-safety: every function may be called concurrently. The merges are parsed and the vocabulary
// built once, on first use, into a function-local static that lives until exit (about 25 ms on this
// project's machine; later calls only copy the spec, 4-10 ms).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "pipeline/tokenizer/clip_tokenizer.h"

namespace websd {

// How errors and specs name the bundled data.
inline constexpr const char* kBundledClipVocabOrigin = "websd's bundled CLIP vocabulary (third_party/openai-clip)";

// The text of third_party/openai-clip/merges.txt ("#version: 0.2" + 48894 merges); generated source.
std::string_view bundled_clip_merges_txt();

// The spec of the bundled tokenizer padding with `pad_token`: "<|endoftext|>" for SD 1.x, "!" for
// SD 2.x. Throws websd::Error when `pad_token` is not in the vocabulary.
ClipTokenizerSpec bundled_clip_tokenizer_spec(const std::string& pad_token);

// The same tokenizer as the files of a Hugging Face tokenizer folder, name -> content: vocab.json
// (compact, in id order), merges.txt, tokenizer_config.json and special_tokens_map.json.
// load_clip_tokenizer() on a folder holding exactly these files gives the same ids. Throws like
// bundled_clip_tokenizer_spec.
std::map<std::string, std::string> bundled_clip_tokenizer_files(const std::string& pad_token);

}  // namespace websd
