#include "pipeline/tokenizer/clip_tokenizer_loader.h"

#include <filesystem>
#include <optional>

#include "core/error.h"
#include "pipeline/tokenizer/hf_tokenizer_config.h"
#include "pipeline/tokenizer/hf_tokenizer_files.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

bool holds_tokenizer_files(const fs::path& folder) {
  std::error_code error;
  return fs::exists(folder / "tokenizer.json", error) || fs::exists(folder / "vocab.json", error) ||
         fs::exists(folder / "merges.txt", error);
}

void override_with(SpecialTokenSetting& setting, const std::optional<std::string>& value, const std::string& origin) {
  if (value) setting = SpecialTokenSetting{*value, origin};
}

// Later added tokens replace earlier ones of the same content.
void add_tokens(std::vector<AddedToken>& tokens, const std::vector<AddedToken>& more) {
  for (const AddedToken& token : more) {
    bool replaced = false;
    for (AddedToken& existing : tokens) {
      if (existing.content == token.content) {
        existing = token;
        replaced = true;
      }
    }
    if (!replaced) tokens.push_back(token);
  }
}

void read_bpe_files(const fs::path& folder, ClipTokenizerSpec& spec) {
  const fs::path tokenizer_json = folder / "tokenizer.json";
  if (fs::exists(tokenizer_json)) {
    spec.origin = tokenizer_json.string();
    spec.merges_origin = spec.origin;
    HfTokenizerJson file = read_tokenizer_json(spec.origin);
    spec.vocab = std::move(file.vocab);
    spec.merges = std::move(file.merges);
    spec.added_tokens = std::move(file.added_tokens);
    override_with(spec.bos, file.bos_token, spec.origin);
    override_with(spec.eos, file.eos_token, spec.origin);
    override_with(spec.unk, file.unk_token, spec.origin);
    override_with(spec.pad, file.pad_token, spec.origin);
    if (file.max_length) spec.max_length = *file.max_length;
    return;
  }
  spec.origin = (folder / "vocab.json").string();
  spec.vocab = read_vocab_json(spec.origin);
  spec.merges_origin = (folder / "merges.txt").string();
  spec.merges = read_merges_txt(spec.merges_origin);
}

void apply_config(const fs::path& path, ClipTokenizerSpec& spec) {
  if (!fs::exists(path)) return;
  const std::string origin = path.string();
  const HfTokenizerConfig config = read_tokenizer_config(origin);
  override_with(spec.bos, config.bos_token, origin);
  override_with(spec.eos, config.eos_token, origin);
  override_with(spec.unk, config.unk_token, origin);
  override_with(spec.pad, config.pad_token, origin);
  if (config.model_max_length) spec.max_length = *config.model_max_length;
  add_tokens(spec.added_tokens, config.added_tokens);
}

}  // namespace

std::string find_tokenizer_folder(const std::string& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    const char* what = fs::exists(folder, error) ? "is not a folder" : "does not exist";
    throw Error("tokenizer", folder + ": " + what + " (pass a tokenizer folder or a diffusers model folder)");
  }
  if (holds_tokenizer_files(folder)) return folder;
  const fs::path nested = fs::path(folder) / "tokenizer";
  if (fs::is_directory(nested, error) && holds_tokenizer_files(nested)) return nested.string();
  throw Error("tokenizer", folder +
                               ": no tokenizer.json or vocab.json + merges.txt here or in tokenizer/ (pass a "
                               "tokenizer folder or a diffusers model folder)");
}

ClipTokenizerSpec read_clip_tokenizer_spec(const std::string& folder) {
  const fs::path tokenizer_folder = find_tokenizer_folder(folder);
  ClipTokenizerSpec spec;
  read_bpe_files(tokenizer_folder, spec);
  apply_config(tokenizer_folder / "special_tokens_map.json", spec);
  apply_config(tokenizer_folder / "tokenizer_config.json", spec);
  return spec;
}

ClipTokenizer load_clip_tokenizer(const std::string& folder) { return ClipTokenizer(read_clip_tokenizer_spec(folder)); }

}  // namespace websd
