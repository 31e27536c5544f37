// artifact_signing_key.h with OpenSSL's EVP API (libcrypto).
#include "artifact/artifact_signing_key.h"
#include "artifact/openssl_support.h"
#include "core/error.h"

namespace websd::artifact {

struct ArtifactSigningKey::State {
  EvpPkey key;
};

ArtifactSigningKey ArtifactSigningKey::read(const std::string& path) {
  const std::string text = read_pem_file(path, "--sign-key");
  EvpPkey key = parse_pem_private_key(text);
  if (!key) {
    std::string why =
        ": holds no PEM private key ('-----BEGIN PRIVATE KEY-----'; " + std::string(kMakeSigningKeys) + ")";
    if (text.find("ENCRYPTED PRIVATE KEY-----") != std::string::npos) {
      why =
          ": the private key is protected by a passphrase, which websd does not ask for (write an unprotected copy "
          "with 'openssl pkey -in KEY -out sign.pem' and protect the file instead)";
    } else if (text.find("PUBLIC KEY-----") != std::string::npos) {
      why = ": holds a public key; --sign-key takes the private key (" + std::string(kMakeSigningKeys) + ")";
    }
    throw Error("artifact", path + why);
  }
  ArtifactSigningKey signing;
  signing.public_key_ = ed25519_public_key(path, key.get(), "private key");
  signing.state_ = std::make_unique<State>(State{std::move(key)});
  return signing;
}

ArtifactSigningKey::ArtifactSigningKey(ArtifactSigningKey&&) noexcept = default;
ArtifactSigningKey& ArtifactSigningKey::operator=(ArtifactSigningKey&&) noexcept = default;
ArtifactSigningKey::~ArtifactSigningKey() = default;

Ed25519Signature ArtifactSigningKey::sign(std::string_view message) const {
  const EvpMdContext context = new_md_context();
  Ed25519Signature signature{};
  std::size_t length = signature.size();
  if (EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, state_->key.get()) != 1 ||
      EVP_DigestSign(context.get(), signature.data(), &length, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1 ||
      length != signature.size()) {
    fail_openssl("Ed25519 signing");
  }
  return signature;
}

}  // namespace websd::artifact
