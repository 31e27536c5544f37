// artifact_decryptor.h for native builds: the key file and key check of artifact_key.h, and
// HMAC-SHA-256 and AES-256-GCM from artifact_crypto.h (OpenSSL).
#include "artifact/artifact_crypto.h"
#include "artifact/artifact_decryptor.h"
#include "artifact/artifact_key.h"
#include "core/error.h"

namespace websd::artifact {
namespace {

class AesGcmArtifactDecryptor final : public ArtifactDecryptor {
 public:
  explicit AesGcmArtifactDecryptor(ArtifactKey key) : key_(std::move(key)) {}

  Sha256Digest authenticate(std::string_view message) const override { return hmac_sha256(key_.bytes, message); }

  bool decrypt(const WeightShard& shard, std::span<const std::byte> stored, std::span<std::byte> plain) const override {
    return aes_256_gcm_decrypt(key_.bytes, shard.iv.value(), shard.tag.value(), stored, plain);
  }

 private:
  ArtifactKey key_;
};

}  // namespace

std::unique_ptr<ArtifactDecryptor> open_artifact_decryptor(const std::string& where,
                                                           const std::optional<std::string>& key_file,
                                                           const std::string& key_check) {
  if (!key_file) {
    throw Error("artifact", where + ": the artifact is encrypted (aes-256-gcm) but no key was given (pass --key-file)");
  }
  ArtifactKey key = read_artifact_key(*key_file);
  if (artifact_key_check(key) != key_check) {
    throw Error("artifact", where + ": wrong key: " + *key_file +
                                " is not the key this artifact was encrypted with (its key check value differs)");
  }
  return std::make_unique<AesGcmArtifactDecryptor>(std::move(key));
}

}  // namespace websd::artifact
