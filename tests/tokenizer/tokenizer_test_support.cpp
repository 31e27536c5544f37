#include "tokenizer_test_support.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/json_file.h"
#include "io/safetensors_reader.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

IdRows json_rows(const nlohmann::json& value) {
  IdRows rows;
  for (const auto& row : value) rows.push_back(row.get<std::vector<TokenId>>());
  return rows;
}

TokenizerRefs load_refs() {
  const nlohmann::json json = json_read_file(fixture_path("refs/tokenizer.json"));
  TokenizerRefs refs;
  refs.prompts = json.at("prompts").get<std::vector<std::string>>();
  refs.sd1_unpadded = json_rows(json.at("sd1_raw_ids"));
  refs.sd2_unpadded = json_rows(json.at("sd2_raw_ids"));
  const std::string ids = fixture_path("refs/tokenizer.safetensors");
  refs.sd1_padded = read_id_rows(ids, "tok_sd1.visible.ids");
  refs.sd2_padded = read_id_rows(ids, "tok_sd2.visible.ids");
  return refs;
}

}  // namespace

const TokenizerRefs& tokenizer_refs() {
  static const TokenizerRefs refs = load_refs();
  return refs;
}

IdRows read_id_rows(const std::string& safetensors_path, const std::string& key) {
  const SafetensorsFile file(safetensors_path);
  const SafetensorsEntry& entry = file.at(key);
  if (entry.shape.size() != 2) throw std::runtime_error(key + " is not a 2-D tensor");
  const std::vector<std::int64_t> values = file.read_i64(key);
  const auto cols = static_cast<std::size_t>(entry.shape[1]);
  IdRows rows;
  for (std::size_t begin = 0; begin < values.size(); begin += cols) {
    rows.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(begin),
                      values.begin() + static_cast<std::ptrdiff_t>(begin + cols));
  }
  return rows;
}

std::string make_linked_folder(const std::string& tag, const std::map<std::string, std::string>& links) {
  const std::string folder = make_temp_dir(tag);
  for (const auto& [name, relative] : links) {
    std::filesystem::create_symlink(fixture_path(relative), std::filesystem::path(folder) / name);
  }
  return folder;
}

void write_text_file(const std::string& folder, const std::string& name, const std::string& text) {
  std::ofstream stream(std::filesystem::path(folder) / name, std::ios::binary);
  stream << text;
  if (!stream) throw std::runtime_error("cannot write " + folder + "/" + name);
}

}  // namespace websd::test
