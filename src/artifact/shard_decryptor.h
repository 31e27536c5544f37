// The decryption of an encrypted artifact's weight shards (AES-256-GCM; FORMAT.md, "Encryption")
// with a key that was checked against the manifest's key check value. Native builds decrypt with
// OpenSSL (shard_decryptor_openssl.cpp). The WebAssembly build has no AES-256-GCM
// (shard_decryptor_unavailable.cpp; the browser is to decrypt with WebCrypto): opening an encrypted
// artifact there fails with one clear error, while integrity checks (SHA-256) work everywhere.
// A decryptor is immutable; decrypt() may be called concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "artifact/weight_index.h"

namespace websd::artifact {

class ShardDecryptor {
 public:
  virtual ~ShardDecryptor() = default;
  // Decrypts `stored` (the shard's bytes, already checked against its SHA-256) into `plain`, of the
  // same size. False, leaving `plain` unspecified, when the GCM tag does not match.
  virtual bool decrypt(const WeightShard& shard, std::span<const std::byte> stored,
                       std::span<std::byte> plain) const = 0;
};

// The decryptor of the artifact at `where` whose manifest records `key_check`, with the key read
// from `key_file`. Throws websd::Error("artifact", ...) when no key file is given, for a key file
// that cannot be read or holds no key, for a wrong key, and always in a build that cannot decrypt.
std::unique_ptr<ShardDecryptor> open_shard_decryptor(const std::string& where,
                                                     const std::optional<std::string>& key_file,
                                                     const std::string& key_check);

}  // namespace websd::artifact
