// What websd's OpenSSL code shares (native builds only): owners for EVP objects, one error that
// carries OpenSSL's reason, PEM key files parsed without ever prompting, Ed25519 key checks.
// Thread-safe.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>

#include "artifact/artifact_seal.h"

namespace websd::artifact {

struct EvpPkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct EvpMdContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using EvpPkey = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;
using EvpMdContext = std::unique_ptr<EVP_MD_CTX, EvpMdContextFree>;

// Throws websd::Error("artifact", "crypto: <what> failed in OpenSSL: <reason>"), clearing OpenSSL's
// error queue.
[[noreturn]] void fail_openssl(const std::string& what);

EvpMdContext new_md_context();

// The key in PEM `text`: a public key (SubjectPublicKeyInfo) or a private key (PKCS#8 and the
// other forms OpenSSL reads); nullptr when it holds none of that kind. A private key protected by a
// passphrase gives nullptr too: no passphrase is ever asked for.
EvpPkey parse_pem_public_key(const std::string& text);
EvpPkey parse_pem_private_key(const std::string& text);

// How to make the Ed25519 key pair that signs artifacts, for messages.
inline constexpr const char* kMakeSigningKeys =
    "make a key pair with 'openssl genpkey -algorithm ed25519 -out sign.pem' and 'openssl pkey -in sign.pem -pubout "
    "-out trust.pem'";

// The text of the PEM key file at `path`, read by the input rule for key files (io/input_file.h);
// `role` names it in messages ("--trust-key").
std::string read_pem_file(const std::string& path, const char* role);

// `key`'s raw public key. Throws websd::Error naming `path` when `key` is not an Ed25519 key
// (`what`: "public key", "private key").
Ed25519PublicKey ed25519_public_key(const std::string& path, const EVP_PKEY* key, const char* what);

}  // namespace websd::artifact
