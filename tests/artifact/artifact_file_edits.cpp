#include "artifact_file_edits.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "artifact/artifact_hex.h"
#include "artifact/artifact_seal.h"
#include "artifact/sha256.h"
#include "core/error.h"

namespace websd::test {

std::string read_text(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream << text;
  if (!stream) throw std::runtime_error("cannot write " + path);
}

void edit_manifest(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json manifest = nlohmann::json::parse(read_text(dir + "/manifest.json"));
  edit(manifest);
  const std::string text = manifest.dump(2);
  write_text(dir + "/manifest.json", text);
  reseal_manifest(dir);
}

void reseal_manifest(const std::string& dir) {
  const std::string text = read_text(dir + "/manifest.json");
  const std::string seal_path = dir + "/" + std::string(artifact::kSealFileName);
  artifact::ArtifactSeal seal = artifact::parse_seal(read_text(seal_path), seal_path);
  seal.manifest_sha256 = artifact::sha256(text);
  write_text(seal_path, artifact::seal_to_text(seal));
}

void edit_index_consistently(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json index = nlohmann::json::parse(read_text(dir + "/weights/index.json"));
  edit(index);
  const std::string text = index.dump(1);
  write_text(dir + "/weights/index.json", text);
  const auto digest = artifact::sha256(text);
  edit_manifest(dir, [&](nlohmann::json& manifest) {
    manifest["sections"]["weights"]["index_sha256"] = artifact::hex_encode(digest);
  });
}

void flip_byte(const std::string& path, std::size_t offset) {
  std::string bytes = read_text(path);
  bytes.at(offset) = static_cast<char>(bytes.at(offset) ^ 0x01);
  write_text(path, bytes);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    EXPECT_EQ(message.rfind("[artifact] ", 0), 0u) << message;
    return message;
  }
  ADD_FAILURE() << "expected a websd::Error";
  return "";
}

}  // namespace websd::test
