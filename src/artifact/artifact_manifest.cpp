#include "artifact/artifact_manifest.h"

#include <algorithm>

#include "artifact/artifact_hex.h"
#include "artifact/artifact_json.h"

namespace websd::artifact {
namespace {

constexpr const char* kNotArtifactFix = "not a websd artifact: point at a directory written by 'websd build'";
constexpr const char* kTamperedFix = "the manifest was edited or is corrupt: rebuild the artifact";
constexpr std::string_view kKeyCheckPrefix = "hmac-sha256:";

bool is_sha256_hex(std::string_view text) {
  const auto bytes = hex_decode(text);
  return bytes && bytes->size() == 32;
}

void check_format_version(const std::string& origin, std::int64_t version) {
  const std::string found = "format version " + std::to_string(version);
  if (version > kArtifactFormatVersion) {
    JsonFieldReader(origin, "upgrade websd to load this artifact")
        .fail(found + " is newer than this websd reads (" + std::to_string(kArtifactFormatVersion) + ")");
  }
  if (version < kOldestReadableFormatVersion) {
    JsonFieldReader(origin, "rebuild the artifact with this websd")
        .fail(found + " is older than this websd reads (" + std::to_string(kOldestReadableFormatVersion) + " to " +
              std::to_string(kArtifactFormatVersion) + ")");
  }
}

}  // namespace

ArtifactManifest parse_manifest(std::string_view text, const std::string& origin) {
  const JsonFieldReader not_artifact(origin, kNotArtifactFix);
  nlohmann::json root = not_artifact.parse(text);
  if (!root.is_object()) not_artifact.fail("holds " + json_kind(root) + ", expected a JSON object");
  const auto magic = root.find("magic");
  if (magic == root.end()) not_artifact.fail("no 'magic' field");
  if (!magic->is_string() || magic->get_ref<const std::string&>() != kArtifactMagic) {
    not_artifact.fail("magic is " + json_kind(*magic) + ", expected '" + std::string(kArtifactMagic) + "'");
  }

  const JsonFieldReader tampered(origin, kTamperedFix);
  ArtifactManifest manifest;
  // The version decides how to read everything else, so it is checked before any other field.
  manifest.format_version = tampered.integer(root, "format_version", "");
  check_format_version(origin, manifest.format_version);
  manifest.websd_version = tampered.string(root, "websd_version", "");
  manifest.target = tampered.string(root, "target", "");
  if (manifest.target.empty()) tampered.fail("field 'target' is empty");
  manifest.created = tampered.string(root, "created", "");
  manifest.encryption = tampered.string(root, "encryption", "");
  if (manifest.encryption == kEncryptionAesGcm) {
    manifest.key_check = tampered.string(root, "key_check", "");
    if (!manifest.key_check.starts_with(kKeyCheckPrefix) ||
        !is_sha256_hex(std::string_view(manifest.key_check).substr(kKeyCheckPrefix.size()))) {
      tampered.fail("field 'key_check' is " + json_kind(root.at("key_check")) +
                    ", expected 'hmac-sha256:' + 64 hex digits");
    }
  } else if (manifest.encryption != kEncryptionNone) {
    tampered.fail("field 'encryption' is " + json_kind(root.at("encryption")) + ", expected '" +
                  std::string(kEncryptionNone) + "' or '" + std::string(kEncryptionAesGcm) + "'");
  }
  tampered.object(root, "sections", "");
  // Moved, not copied: SD 1.5's launch lists make a tree of megabytes.
  manifest.sections = std::move(root["sections"]);
  const nlohmann::json& weights = tampered.object(manifest.sections, kWeightsSection, "sections");
  manifest.weights_index_sha256 = tampered.string(weights, "index_sha256", "sections.weights");
  if (!is_sha256_hex(manifest.weights_index_sha256)) {
    tampered.fail("field 'sections.weights.index_sha256' is " + json_kind(weights.at("index_sha256")) +
                  ", expected 64 hex digits");
  }
  manifest.sections.erase(std::string(kWeightsSection));
  return manifest;
}

std::string manifest_to_text(const ArtifactManifest& manifest) {
  nlohmann::ordered_json root;
  root["magic"] = std::string(kArtifactMagic);
  root["format_version"] = manifest.format_version;
  root["websd_version"] = manifest.websd_version;
  root["target"] = manifest.target;
  root["created"] = manifest.created;
  root["encryption"] = manifest.encryption;
  if (manifest.encrypted()) root["key_check"] = manifest.key_check;
  nlohmann::ordered_json sections = nlohmann::ordered_json::object();
  sections[std::string(kWeightsSection)] = {{"index_sha256", manifest.weights_index_sha256}};
  for (const auto& [name, content] : manifest.sections.items()) {
    if (name != kWeightsSection) sections[name] = content;
  }
  root["sections"] = std::move(sections);
  // Compact: SD 1.5's manifest (launch lists of every tier) is 7 MB so and 16 MB indented, and
  // every load parses and hashes it (in WebAssembly, at the page's and the Node runner's start).
  return root.dump() + "\n";
}

bool artifact_file_path_valid(std::string_view path) {
  if (path.empty() || path.size() > 200 || path.front() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (const char c : part) {
      const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                         c == '_' || c == '-';
      if (!plain) return false;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace websd::artifact
