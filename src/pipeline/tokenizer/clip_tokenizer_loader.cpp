#include "pipeline/tokenizer/clip_tokenizer_loader.h"

#include <filesystem>
#include <functional>
#include <optional>

#include "core/error.h"
#include "io/json_file.h"
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

// The tokenizer files of one folder, on disk or in memory, read by name.
struct TokenizerFiles {
  std::function<bool(const std::string&)> exists;
  std::function<nlohmann::json(const std::string&)> json;               // parsed
  std::function<std::vector<BpeMerge>(const std::string&)> merges_txt;  // parsed
  std::function<std::string(const std::string&)> origin;                // for messages
};

void read_bpe_files(const TokenizerFiles& files, ClipTokenizerSpec& spec) {
  if (files.exists("tokenizer.json")) {
    spec.origin = files.origin("tokenizer.json");
    spec.merges_origin = spec.origin;
    HfTokenizerJson file = parse_tokenizer_json(files.json("tokenizer.json"), spec.origin);
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
  spec.origin = files.origin("vocab.json");
  spec.vocab = parse_vocab_json(files.json("vocab.json"), spec.origin);
  spec.merges_origin = files.origin("merges.txt");
  spec.merges = files.merges_txt("merges.txt");
}

void apply_config(const TokenizerFiles& files, const std::string& name, ClipTokenizerSpec& spec) {
  if (!files.exists(name)) return;
  const std::string origin = files.origin(name);
  const HfTokenizerConfig config = parse_tokenizer_config(files.json(name), origin);
  override_with(spec.bos, config.bos_token, origin);
  override_with(spec.eos, config.eos_token, origin);
  override_with(spec.unk, config.unk_token, origin);
  override_with(spec.pad, config.pad_token, origin);
  if (config.model_max_length) spec.max_length = *config.model_max_length;
  add_tokens(spec.added_tokens, config.added_tokens);
}

ClipTokenizerSpec read_spec(const TokenizerFiles& files) {
  ClipTokenizerSpec spec;
  read_bpe_files(files, spec);
  apply_config(files, "special_tokens_map.json", spec);
  apply_config(files, "tokenizer_config.json", spec);
  return spec;
}

}  // namespace

const InputKind& tokenizer_file_kind(const std::string& name) {
  const bool vocabulary = name == "tokenizer.json" || name == "vocab.json" || name == "merges.txt";
  return vocabulary ? input_kinds::kTokenizerFile : input_kinds::kJsonConfig;
}

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
  const auto path = [tokenizer_folder](const std::string& name) { return (tokenizer_folder / name).string(); };
  return read_spec({[path](const std::string& name) { return fs::exists(path(name)); },
                    [path](const std::string& name) { return json_read_file(path(name), tokenizer_file_kind(name)); },
                    [path](const std::string& name) { return read_merges_txt(path(name)); }, path});
}

ClipTokenizerSpec read_clip_tokenizer_spec_from_files(const std::map<std::string, std::string>& files,
                                                      const std::string& origin) {
  const auto where = [origin](const std::string& name) { return origin + "/" + name; };
  const auto content = [&files, where](const std::string& name) -> const std::string& {
    const auto found = files.find(name);
    if (found == files.end()) {
      throw Error("tokenizer",
                  where(name) + ": missing (a tokenizer needs tokenizer.json, or vocab.json and merges.txt)");
    }
    return found->second;
  };
  return read_spec({[&files](const std::string& name) { return files.count(name) != 0; },
                    [content, where](const std::string& name) { return json_parse(content(name), where(name)); },
                    [content, where](const std::string& name) { return parse_merges_txt(content(name), where(name)); },
                    where});
}

ClipTokenizer load_clip_tokenizer(const std::string& folder) { return ClipTokenizer(read_clip_tokenizer_spec(folder)); }

}  // namespace websd
