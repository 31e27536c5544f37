// The AES-256 key that encrypts an artifact's weight shards, read from a key file, and the key
// check value that the manifest records so that a wrong key is told apart from a corrupt shard.
// ArtifactKey is a value type that wipes its bytes when destroyed; thread-compatible.
#pragma once

#include <string>

#include "artifact/artifact_crypto.h"

namespace websd::artifact {

struct ArtifactKey {
  AesKey bytes{};

  ArtifactKey() = default;
  explicit ArtifactKey(const AesKey& key) : bytes(key) {}
  ArtifactKey(const ArtifactKey&) = default;
  ArtifactKey& operator=(const ArtifactKey&) = default;
  ~ArtifactKey() { secure_zero(bytes); }
};

// A key file holds exactly 32 raw bytes, or 64 hex digits optionally followed by "\n" or "\r\n".
// Throws websd::Error("artifact", ...) naming the file and what it holds otherwise.
ArtifactKey read_artifact_key(const std::string& path);

// "hmac-sha256:" + hex of HMAC-SHA-256(key, a fixed label): reveals nothing about the key, yet
// differs for every other key, so a reader can say "wrong key" before touching any shard.
std::string artifact_key_check(const ArtifactKey& key);

}  // namespace websd::artifact
