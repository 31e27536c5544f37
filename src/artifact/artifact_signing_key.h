// The Ed25519 private key that signs an artifact (`websd build --sign-key K`, a PEM file as
// `openssl genpkey -algorithm ed25519 -out K` writes it); the compiler's side of
// artifact_signature.h. Native builds only (OpenSSL). Move-only; sign() may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "artifact/artifact_seal.h"

namespace websd::artifact {

class ArtifactSigningKey {
 public:
  // Throws websd::Error("artifact", ...) naming the file for one that cannot be read, holds no PEM
  // private key, holds one protected by a passphrase, or a key of another algorithm.
  static ArtifactSigningKey read(const std::string& path);

  ArtifactSigningKey(ArtifactSigningKey&&) noexcept;
  ArtifactSigningKey& operator=(ArtifactSigningKey&&) noexcept;
  ~ArtifactSigningKey();

  const Ed25519PublicKey& public_key() const { return public_key_; }
  Ed25519Signature sign(std::string_view message) const;

 private:
  struct State;
  ArtifactSigningKey() = default;

  std::unique_ptr<State> state_;
  Ed25519PublicKey public_key_{};
};

}  // namespace websd::artifact
