// What the key of an encrypted artifact does for the reader (FORMAT.md, "Encryption" and
// "Protections"): it authenticates the manifest (HMAC-SHA-256 over seal_message(manifest), kept in
// seal.json) and decrypts the weight shards (AES-256-GCM). The key is checked against the
// manifest's key check value first, so a wrong key is told apart from an altered manifest. Native
// builds use OpenSSL (artifact_decryptor_openssl.cpp). The WebAssembly build has neither
// (artifact_decryptor_unavailable.cpp; the browser is to decrypt with WebCrypto): opening an
// encrypted artifact there fails with one clear error, while integrity checks (SHA-256) work
// everywhere. A decryptor is immutable; its functions may be called concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "artifact/sha256.h"
#include "artifact/weight_index.h"

namespace websd::artifact {

class ArtifactDecryptor {
 public:
  virtual ~ArtifactDecryptor() = default;
  // HMAC-SHA-256 of `message` under the artifact's key.
  virtual Sha256Digest authenticate(std::string_view message) const = 0;
  // Decrypts `stored` (the shard's bytes, already checked against its SHA-256) into `plain`, of the
  // same size. False, leaving `plain` unspecified, when the GCM tag does not match.
  virtual bool decrypt(const WeightShard& shard, std::span<const std::byte> stored,
                       std::span<std::byte> plain) const = 0;
};

// The decryptor of the artifact at `where` whose manifest records `key_check`, with the key read
// from `key_file`. Throws websd::Error("artifact", ...) when no key file is given, for a key file
// that cannot be read or holds no key, for a wrong key, and always in a build that cannot decrypt.
std::unique_ptr<ArtifactDecryptor> open_artifact_decryptor(const std::string& where,
                                                           const std::optional<std::string>& key_file,
                                                           const std::string& key_check);

}  // namespace websd::artifact
