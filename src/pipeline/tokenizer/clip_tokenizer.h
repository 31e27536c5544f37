// The CLIP BPE tokenizer of Stable Diffusion, reproducing Hugging Face's CLIPTokenizer (transformers 5,
// whose fast and slow forms agree on CLIP) id for id:
//   1. the prompt's bytes are decoded as UTF-8, ill-formed bytes becoming U+FFFD (Python's
//      errors="replace"), so no input is rejected;
//   2. added tokens typed in the prompt (<|startoftext|>, <|endoftext|>, and "!" where it is the SD 2.x
//      pad token) are split out and become their ids, as Hugging Face does (added_token_splitter.h):
//      "<|endoftext|>" typed by a user is id 49407, and for SD 2.x "hi!" ends with id 0;
//   3. each remaining segment is normalised (clip_normalizer.h), pre-tokenized (clip_pre_tokenizer.h)
//      and each piece encoded by byte-level BPE (bpe_model.h);
//   4. encode() adds BOS/EOS, truncates to max_length keeping both (at most max_length - 2 content
//      tokens) and pads with the pad id; encode_unpadded() adds BOS/EOS only.
// Ownership: owns its tables. Thread-safety: encode*, clear_cache and the accessors may be called
// concurrently (the BPE word cache is guarded by a mutex). Move-only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pipeline/tokenizer/added_token_splitter.h"
#include "pipeline/tokenizer/bpe_model.h"
#include "pipeline/tokenizer/tokenizer_types.h"

namespace websd {

// A special token's spelling and the file (or default) that chose it, named in errors.
struct SpecialTokenSetting {
  std::string content;
  std::string origin;
};

// Everything a ClipTokenizer is built from, already read from files (see clip_tokenizer_loader.h).
// The special-token defaults are those of Hugging Face's CLIPTokenizer class.
struct ClipTokenizerSpec {
  std::string origin;         // the vocabulary's file, named in errors
  std::string merges_origin;  // the merges' file (the same for tokenizer.json), named in errors
  BpeVocab vocab;
  std::vector<BpeMerge> merges;
  std::vector<AddedToken> added_tokens;
  SpecialTokenSetting bos{"<|startoftext|>", "the CLIPTokenizer default"};
  SpecialTokenSetting eos{"<|endoftext|>", "the CLIPTokenizer default"};
  SpecialTokenSetting unk{"<|endoftext|>", "the CLIPTokenizer default"};
  SpecialTokenSetting pad{"<|endoftext|>", "the CLIPTokenizer default"};
  int max_length = 77;
};

class ClipTokenizer {
 public:
  // Throws websd::Error when a special token is in neither the added tokens nor the vocabulary, when
  // max_length < 2, or when the merges do not fit the vocabulary.
  explicit ClipTokenizer(const ClipTokenizerSpec& spec);

  // Exactly max_length() ids: BOS, at most max_length() - 2 content ids, EOS, then pad ids.
  std::vector<TokenId> encode(std::string_view prompt) const;
  // BOS, every content id, EOS: no truncation, no padding.
  std::vector<TokenId> encode_unpadded(std::string_view prompt) const;

  TokenId bos_id() const { return bos_id_; }
  TokenId eos_id() const { return eos_id_; }
  TokenId pad_id() const { return pad_id_; }
  int max_length() const { return max_length_; }

  // Forgets the BPE results of words seen so far (a cold start for benchmarks).
  void clear_cache() const { bpe_.clear_cache(); }

 private:
  void append_content_ids(std::string_view prompt, std::vector<TokenId>& ids) const;
  void append_segment_ids(std::string_view raw_segment, std::vector<TokenId>& ids) const;

  TokenId bos_id_;
  TokenId eos_id_;
  TokenId pad_id_;
  int max_length_;
  AddedTokenSplitter added_tokens_;
  BpeModel bpe_;
};

}  // namespace websd
