// manifest.json: the artifact's entry point and its contract between compiler and runtime (see
// FORMAT.md). Parsing takes bytes, not a path, so a fuzzer can drive it. Value types and pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace websd::artifact {

inline constexpr std::string_view kArtifactMagic = "websd-artifact";
// The version this websd writes, and the oldest it still reads.
inline constexpr std::int64_t kArtifactFormatVersion = 3;
inline constexpr std::int64_t kOldestReadableFormatVersion = 3;
inline constexpr std::string_view kManifestFileName = "manifest.json";
inline constexpr std::string_view kEncryptionNone = "none";
inline constexpr std::string_view kEncryptionAesGcm = "aes-256-gcm";
// The section the container itself owns; the others are opaque to it.
inline constexpr std::string_view kWeightsSection = "weights";
// Files beside the weights (kernel libraries, tokenizer, scheduler config): [{path, bytes, sha256}].
inline constexpr std::string_view kFilesSection = "files";

// A path an artifact may hold a file at: relative, made of letters, digits, '.', '_', '-' and '/',
// without empty, "." or ".." parts.
bool artifact_file_path_valid(std::string_view path);

struct ArtifactManifest {
  std::int64_t format_version = kArtifactFormatVersion;
  std::string websd_version;
  std::string target;   // "cpu", "cuda", "webgpu"
  std::string created;  // UTC, ISO 8601: 2025-01-31T12:00:00Z
  std::string encryption{kEncryptionNone};
  std::string key_check;                               // artifact_key_check() of the key; empty when not encrypted
  std::string weights_index_sha256;                    // hex SHA-256 of weights/index.json (kept in sections.weights)
  nlohmann::json sections = nlohmann::json::object();  // every section but "weights"

  bool encrypted() const { return encryption == kEncryptionAesGcm; }
};

// Parses and checks manifest.json's bytes; `origin` (its path) starts every message. Throws
// websd::Error("artifact", ...) telling apart: not an artifact (not JSON, not an object, wrong or
// missing magic), a newer format (upgrade websd), an older one (rebuild the artifact), and fields
// of the wrong type or value (edited or corrupt manifest).
ArtifactManifest parse_manifest(std::string_view text, const std::string& origin);

// The manifest as indented JSON text, fields in a fixed order; parse_manifest reads it back.
std::string manifest_to_text(const ArtifactManifest& manifest);

}  // namespace websd::artifact
