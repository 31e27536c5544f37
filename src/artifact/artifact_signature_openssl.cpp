// artifact_signature.h with OpenSSL's EVP API (libcrypto).
#include <openssl/err.h>

#include "artifact/artifact_signature.h"
#include "artifact/openssl_support.h"
#include "core/error.h"

namespace websd::artifact {

bool signature_checks_available() { return true; }

Ed25519PublicKey read_trust_key(const std::string& path) {
  const std::string text = read_pem_file(path, "--trust-key");
  const EvpPkey key = parse_pem_public_key(text);
  if (!key) {
    const bool private_key = text.find("PRIVATE KEY-----") != std::string::npos;
    throw Error("artifact", path + (private_key ? ": holds a private key; --trust-key takes the public key (write it "
                                                  "with 'openssl pkey -in KEY -pubout -out trust.pem')"
                                                : ": holds no PEM public key ('-----BEGIN PUBLIC KEY-----'; " +
                                                      std::string(kMakeSigningKeys) + ")"));
  }
  return ed25519_public_key(path, key.get(), "public key");
}

bool ed25519_verify(const Ed25519PublicKey& key, std::string_view message, const Ed25519Signature& signature) {
  const EvpPkey pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size()));
  if (!pkey) fail_openssl("EVP_PKEY_new_raw_public_key");
  const EvpMdContext context = new_md_context();
  if (EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) {
    fail_openssl("EVP_DigestVerifyInit");
  }
  const bool valid = EVP_DigestVerify(context.get(), signature.data(), signature.size(),
                                      reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  ERR_clear_error();  // a signature that does not verify is an answer here, not an error to report later
  return valid;
}

}  // namespace websd::artifact
