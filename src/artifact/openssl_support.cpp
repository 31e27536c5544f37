#include "artifact/openssl_support.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include "core/error.h"
#include "io/input_file.h"

namespace websd::artifact {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};

template <typename Read>
EvpPkey parse_pem(const std::string& text, Read read) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) fail_openssl("BIO_new_mem_buf");
  const auto no_passphrase = [](char*, int, int, void*) { return 0; };
  EvpPkey key(read(bio.get(), nullptr, +no_passphrase, nullptr));
  ERR_clear_error();  // "no key here" is an answer for the caller to word
  return key;
}

}  // namespace

void fail_openssl(const std::string& what) {
  char reason[256] = "unknown reason";
  if (const unsigned long code = ERR_get_error(); code != 0) ERR_error_string_n(code, reason, sizeof(reason));
  ERR_clear_error();
  throw Error("artifact", "crypto: " + what + " failed in OpenSSL: " + reason);
}

EvpMdContext new_md_context() {
  EvpMdContext context(EVP_MD_CTX_new());
  if (!context) fail_openssl("EVP_MD_CTX_new");
  return context;
}

EvpPkey parse_pem_public_key(const std::string& text) { return parse_pem(text, PEM_read_bio_PUBKEY); }

EvpPkey parse_pem_private_key(const std::string& text) { return parse_pem(text, PEM_read_bio_PrivateKey); }

std::string read_pem_file(const std::string& path, const char* role) {
  return input_file_read("artifact", path, input_kinds::kKeyFile, role);
}

Ed25519PublicKey ed25519_public_key(const std::string& path, const EVP_PKEY* key, const char* what) {
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    throw Error("artifact", path + ": holds a " + std::string(OBJ_nid2sn(EVP_PKEY_get_id(key))) + " " + what +
                                "; websd signs artifacts with Ed25519 (" + kMakeSigningKeys + ")");
  }
  Ed25519PublicKey bytes{};
  std::size_t length = bytes.size();
  if (EVP_PKEY_get_raw_public_key(key, bytes.data(), &length) != 1 || length != bytes.size()) {
    fail_openssl("EVP_PKEY_get_raw_public_key");
  }
  return bytes;
}

}  // namespace websd::artifact
