#include "models/tokenizer_folder.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "pipeline/tokenizer/clip_byte_unicode.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

// The code point of a one- or two-byte UTF-8 sequence (all that the byte table uses).
char32_t decode_short_utf8(const std::string& text) {
  const auto first = static_cast<unsigned char>(text[0]);
  if (first < 0x80) return first;
  return (static_cast<char32_t>(first & 0x1f) << 6) | (static_cast<unsigned char>(text[1]) & 0x3f);
}

// CLIP lists the byte symbols in code point order: printable bytes first (they stand for themselves),
// then the remapped ones (256, 257, ...). Hence id 0 is "!", the pad token of SD 2.x.
std::vector<std::string> byte_symbols_in_clip_order() {
  const auto& table = clip_byte_to_unicode();
  std::vector<std::string> symbols(table.begin(), table.end());
  std::sort(symbols.begin(), symbols.end(),
            [](const std::string& a, const std::string& b) { return decode_short_utf8(a) < decode_short_utf8(b); });
  return symbols;
}

void write_json(const fs::path& path, const nlohmann::ordered_json& value) {
  atomic_write_file(path.string(), [&](std::ostream& out) { out << value.dump(2) << "\n"; });
}

}  // namespace

void tokenizer_folder_copy(const std::string& from_dir, const std::string& to_dir) {
  if (!fs::is_directory(from_dir)) {
    throw Error("tokenizer", from_dir + ": not a directory (pass a Hugging Face tokenizer folder)");
  }
  // Each file read once under the input rule (a FIFO is refused, not skipped), and the bytes read are
  // the ones checked and written.
  std::map<std::string, std::string> files;
  for (const char* name : kTokenizerFileNames) {
    const fs::path source = fs::path(from_dir) / name;
    std::error_code error;
    if (!fs::exists(source, error)) continue;
    files[name] = input_file_read("tokenizer", source.string(), tokenizer_file_kind(name));
  }
  if (files.empty()) {
    throw Error("tokenizer", from_dir +
                                 ": no tokenizer files (expected vocab.json + merges.txt or tokenizer.json, "
                                 "with tokenizer_config.json)");
  }
  // Loaded as generate will load it, so a broken tokenizer is refused now, naming its file.
  [[maybe_unused]] const ClipTokenizer loaded(read_clip_tokenizer_spec_from_files(files, from_dir));
  for (const auto& [name, content] : files) {
    atomic_write_file((fs::path(to_dir) / name).string(), [&](std::ostream& out) { out << content; });
  }
}

void tokenizer_folder_write_minimal(const std::string& to_dir, const std::string& pad_token) {
  const fs::path dir(to_dir);
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  const auto symbols = byte_symbols_in_clip_order();
  int next_id = 0;
  for (const auto& symbol : symbols) vocab[symbol] = next_id++;
  for (const auto& symbol : symbols) vocab[symbol + "</w>"] = next_id++;
  vocab["<|startoftext|>"] = next_id++;
  vocab["<|endoftext|>"] = next_id++;
  write_json(dir / "vocab.json", vocab);
  atomic_write_file((dir / "merges.txt").string(), [](std::ostream& out) { out << "#version: 0.2\n"; });

  nlohmann::ordered_json special = {{"bos_token", "<|startoftext|>"},
                                    {"eos_token", "<|endoftext|>"},
                                    {"unk_token", "<|endoftext|>"},
                                    {"pad_token", pad_token}};
  write_json(dir / "special_tokens_map.json", special);
  nlohmann::ordered_json config = special;
  config["model_max_length"] = 77;
  config["do_lower_case"] = true;
  config["tokenizer_class"] = "CLIPTokenizer";
  config["add_prefix_space"] = false;
  config["errors"] = "replace";
  write_json(dir / "tokenizer_config.json", config);
}

}  // namespace websd
