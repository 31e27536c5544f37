// artifact_crypto.h implemented with OpenSSL's EVP API (libcrypto).
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <string>

#include "artifact/artifact_crypto.h"
#include "artifact/openssl_support.h"
#include "core/error.h"

namespace websd::artifact {
namespace {

// EVP takes int lengths: feed large buffers in pieces well below INT_MAX.
constexpr std::size_t kMaxPiece = std::size_t{1} << 30;

const unsigned char* bytes_of(std::span<const std::byte> bytes) {
  return reinterpret_cast<const unsigned char*>(bytes.data());
}
unsigned char* bytes_of(std::span<std::byte> bytes) { return reinterpret_cast<unsigned char*>(bytes.data()); }

struct CipherContext {
  CipherContext() : context(EVP_CIPHER_CTX_new()) {
    if (context == nullptr) fail_openssl("EVP_CIPHER_CTX_new");
  }
  ~CipherContext() { EVP_CIPHER_CTX_free(context); }
  CipherContext(const CipherContext&) = delete;
  CipherContext& operator=(const CipherContext&) = delete;
  EVP_CIPHER_CTX* context;
};

// Sets up AES-256-GCM with a 12-byte IV for encryption (`encrypt`) or decryption.
void init_gcm(EVP_CIPHER_CTX* context, bool encrypt, const AesKey& key, const AesGcmIv& iv) {
  const int enc = encrypt ? 1 : 0;
  if (EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, enc) != 1 ||
      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr) != 1 ||
      EVP_CipherInit_ex(context, nullptr, nullptr, key.data(), iv.data(), enc) != 1) {
    fail_openssl("AES-256-GCM setup");
  }
}

void cipher_update(EVP_CIPHER_CTX* context, std::span<const std::byte> in, std::span<std::byte> out) {
  if (in.size() != out.size()) throw Error("artifact", "crypto: cipher input and output sizes differ");
  for (std::size_t done = 0; done < in.size();) {
    const std::size_t piece = std::min(kMaxPiece, in.size() - done);
    int written = 0;
    if (EVP_CipherUpdate(context, bytes_of(out.subspan(done, piece)), &written, bytes_of(in.subspan(done, piece)),
                         static_cast<int>(piece)) != 1 ||
        static_cast<std::size_t>(written) != piece) {
      fail_openssl("AES-256-GCM update");
    }
    done += piece;
  }
}

}  // namespace

Sha256Digest hmac_sha256(const AesKey& key, std::string_view message) {
  Sha256Digest digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(), &length) == nullptr ||
      length != digest.size()) {
    fail_openssl("HMAC-SHA-256");
  }
  return digest;
}

struct AesGcmEncryptStream::State {
  CipherContext cipher;
};

AesGcmEncryptStream::AesGcmEncryptStream(const AesKey& key, const AesGcmIv& iv) : state_(std::make_unique<State>()) {
  init_gcm(state_->cipher.context, true, key, iv);
}
AesGcmEncryptStream::~AesGcmEncryptStream() = default;
AesGcmEncryptStream::AesGcmEncryptStream(AesGcmEncryptStream&&) noexcept = default;
AesGcmEncryptStream& AesGcmEncryptStream::operator=(AesGcmEncryptStream&&) noexcept = default;

void AesGcmEncryptStream::update(std::span<const std::byte> plain, std::span<std::byte> cipher) {
  cipher_update(state_->cipher.context, plain, cipher);
}

AesGcmTag AesGcmEncryptStream::finish() {
  unsigned char rest[EVP_MAX_BLOCK_LENGTH];
  int written = 0;
  AesGcmTag tag{};
  if (EVP_EncryptFinal_ex(state_->cipher.context, rest, &written) != 1 || written != 0 ||
      EVP_CIPHER_CTX_ctrl(state_->cipher.context, EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag.size()), tag.data()) !=
          1) {
    fail_openssl("AES-256-GCM final");
  }
  return tag;
}

bool aes_256_gcm_decrypt(const AesKey& key, const AesGcmIv& iv, const AesGcmTag& tag, std::span<const std::byte> cipher,
                         std::span<std::byte> plain) {
  CipherContext context;
  init_gcm(context.context, false, key, iv);
  cipher_update(context.context, cipher, plain);
  AesGcmTag expected = tag;  // EVP wants a mutable pointer
  if (EVP_CIPHER_CTX_ctrl(context.context, EVP_CTRL_GCM_SET_TAG, static_cast<int>(expected.size()), expected.data()) !=
      1) {
    fail_openssl("AES-256-GCM tag setup");
  }
  unsigned char rest[EVP_MAX_BLOCK_LENGTH];
  int written = 0;
  const bool authentic = EVP_DecryptFinal_ex(context.context, rest, &written) == 1;
  ERR_clear_error();  // a failed tag check is an answer here, not an error to report later
  return authentic;
}

void random_bytes(std::span<std::uint8_t> out) {
  if (!out.empty() && RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) fail_openssl("RAND_bytes");
}

void secure_zero(std::span<std::uint8_t> bytes) noexcept { OPENSSL_cleanse(bytes.data(), bytes.size()); }

}  // namespace websd::artifact
