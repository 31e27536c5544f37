#include "pipeline/tokenizer/hf_tokenizer_files.h"

#include <limits>
#include <string_view>

#include "core/error.h"
#include "core/message_text.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "pipeline/tokenizer/hf_token_fields.h"

namespace websd {
namespace {

constexpr std::string_view kEndOfWordSuffix = "</w>";

// "left right" with exactly one space; nullopt otherwise.
std::optional<BpeMerge> split_merge(std::string_view line) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
      line.find(' ', space + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  return BpeMerge{std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
}

std::vector<BpeMerge> parse_json_merges(const nlohmann::json& value, const std::string& where) {
  if (!value.is_array()) throw Error("tokenizer", where + " is not an array of merges (fix the file)");
  std::vector<BpeMerge> merges;
  merges.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const nlohmann::json& entry = value[i];
    std::optional<BpeMerge> merge;
    if (entry.is_string()) {
      merge = split_merge(entry.get_ref<const std::string&>());
    } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string() &&
               !entry[0].get_ref<const std::string&>().empty() && !entry[1].get_ref<const std::string&>().empty()) {
      merge = BpeMerge{entry[0].get<std::string>(), entry[1].get<std::string>()};
    }
    if (!merge) {
      throw Error("tokenizer", where + "[" + std::to_string(i) + "] is " + json_preview(entry, 60) +
                                   ", not \"left right\" or [\"left\", \"right\"] (fix the file)");
    }
    merges.push_back(std::move(*merge));
  }
  return merges;
}

// The member `key` of `object`, or null when absent (without copying it, unlike json::value).
const nlohmann::json& member_or_null(const nlohmann::json& object, const char* key) {
  static const nlohmann::json null_value;
  const auto found = object.find(key);
  return found == object.end() ? null_value : *found;
}

const nlohmann::json* find_object(const nlohmann::json& parent, const char* key, const std::string& where) {
  const auto found = parent.find(key);
  if (found == parent.end() || found->is_null()) return nullptr;
  if (!found->is_object()) throw Error("tokenizer", where + ": '" + key + "' is not an object (fix the file)");
  return &*found;
}

void check_clip_bpe_model(const nlohmann::json& model, const std::string& path) {
  const auto text = [&](const char* key) {
    const auto found = model.find(key);
    return found != model.end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  if (model.contains("type") && text("type") != "BPE") {
    throw Error("tokenizer", path + ": model.type is " + message_quote(text("type"), 60) +
                                 ", not 'BPE' (websd reads CLIP BPE tokenizers)");
  }
  if (text("end_of_word_suffix") != kEndOfWordSuffix || !text("continuing_subword_prefix").empty()) {
    throw Error("tokenizer", path + ": model.end_of_word_suffix is " + message_quote(text("end_of_word_suffix"), 60) +
                                 " and continuing_subword_prefix " +
                                 message_quote(text("continuing_subword_prefix"), 60) +
                                 "; a CLIP tokenizer has '</w>' and '' (is this a CLIP tokenizer?)");
  }
}

// bos/eos from a RobertaProcessing/BertProcessing post-processor: "cls": [token, id], "sep": [token, id].
void read_post_processor(const nlohmann::json& root, const std::string& path, HfTokenizerJson& out) {
  const nlohmann::json* processor = find_object(root, "post_processor", path);
  if (processor == nullptr) return;
  const auto token_of = [&](const char* key) -> std::optional<std::string> {
    const auto found = processor->find(key);
    if (found == processor->end()) return std::nullopt;
    if (!found->is_array() || found->empty() || !(*found)[0].is_string()) {
      throw Error("tokenizer", path + ": post_processor." + key + " is not [token, id] (fix the file)");
    }
    return (*found)[0].get<std::string>();
  };
  out.bos_token = token_of("cls");
  out.eos_token = token_of("sep");
}

}  // namespace

BpeVocab read_vocab_json(const std::string& path) {
  return parse_vocab(json_read_file(path, input_kinds::kTokenizerFile), path);
}

BpeVocab parse_vocab_json(const nlohmann::json& root, const std::string& origin) { return parse_vocab(root, origin); }

std::vector<BpeMerge> parse_merges_txt(std::string_view text, const std::string& origin) {
  std::vector<BpeMerge> merges;
  std::size_t line_number = 0;
  bool has_header = false;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number == 1 && line.substr(0, 8) == "#version") {
      has_header = true;
      continue;
    }
    if (line.empty()) continue;
    std::optional<BpeMerge> merge = split_merge(line);
    if (!merge) {
      throw Error("tokenizer", origin + ": line " + std::to_string(line_number) + " is " + message_quote(line, 60) +
                                   ", not two symbols separated by one space (is this a BPE merges.txt?)");
    }
    merges.push_back(std::move(*merge));
  }
  // A header-only file is a valid vocabulary without merges (byte-level tokens only, as
  // `websd make-model` writes); an empty file is more likely a broken download.
  if (merges.empty() && !has_header) {
    throw Error("tokenizer",
                origin + ": no merges and no #version header (the file is empty; use the model's merges.txt)");
  }
  return merges;
}

std::vector<BpeMerge> read_merges_txt(const std::string& path) {
  return parse_merges_txt(input_file_read("tokenizer", path, input_kinds::kTokenizerFile), path);
}

HfTokenizerJson read_tokenizer_json(const std::string& path) {
  return parse_tokenizer_json(json_read_file(path, input_kinds::kTokenizerFile), path);
}

HfTokenizerJson parse_tokenizer_json(const nlohmann::json& root, const std::string& path) {
  if (!root.is_object()) throw Error("tokenizer", path + ": not a JSON object (is this a tokenizer.json?)");
  const nlohmann::json* model = find_object(root, "model", path);
  if (model == nullptr) throw Error("tokenizer", path + ": no 'model' section (is this a tokenizer.json?)");
  check_clip_bpe_model(*model, path);

  HfTokenizerJson out;
  out.vocab = parse_vocab(member_or_null(*model, "vocab"), path + ": model.vocab");
  out.merges = parse_json_merges(member_or_null(*model, "merges"), path + ": model.merges");
  if (model->contains("unk_token"))
    out.unk_token = parse_special_token((*model)["unk_token"], path + ": model.unk_token");

  const auto added = root.find("added_tokens");
  if (added != root.end() && !added->is_null()) {
    if (!added->is_array()) throw Error("tokenizer", path + ": 'added_tokens' is not an array (fix the file)");
    for (std::size_t i = 0; i < added->size(); ++i) {
      const std::string where = path + ": added_tokens[" + std::to_string(i) + "]";
      const nlohmann::json& entry = (*added)[i];
      out.added_tokens.push_back(
          parse_added_token(entry, parse_token_id(member_or_null(entry, "id"), where + ".id"), where));
    }
  }
  read_post_processor(root, path, out);
  if (const nlohmann::json* padding = find_object(root, "padding", path); padding && padding->contains("pad_token")) {
    out.pad_token = parse_special_token((*padding)["pad_token"], path + ": padding.pad_token");
  }
  if (const nlohmann::json* truncation = find_object(root, "truncation", path);
      truncation && truncation->contains("max_length")) {
    out.max_length = parse_max_length((*truncation)["max_length"], path + ": truncation.max_length");
  }
  return out;
}

}  // namespace websd
