// The cryptography of encrypted artifacts, behind a small interface so that the container code
// never names a crypto library: HMAC-SHA-256 (the key check value) and AES-256-GCM (optional
// weight encryption). Native builds implement it with OpenSSL's EVP API
// (artifact_crypto_openssl.cpp); the WebAssembly build implements none of it and uses only the
// types (see artifact_decryptor.h). Integrity checks need only SHA-256 (sha256.h), in every build.
// Streams are move-only, single-owner objects (not thread-safe); the free functions are thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "artifact/sha256.h"

namespace websd::artifact {

using AesKey = std::array<std::uint8_t, 32>;
using AesGcmIv = std::array<std::uint8_t, 12>;
using AesGcmTag = std::array<std::uint8_t, 16>;

Sha256Digest hmac_sha256(const AesKey& key, std::string_view message);

// AES-256-GCM encryption of one message written in pieces; ciphertext has the plaintext's size.
class AesGcmEncryptStream {
 public:
  AesGcmEncryptStream(const AesKey& key, const AesGcmIv& iv);
  ~AesGcmEncryptStream();
  AesGcmEncryptStream(AesGcmEncryptStream&&) noexcept;
  AesGcmEncryptStream& operator=(AesGcmEncryptStream&&) noexcept;

  // Encrypts `plain` into `cipher` (same size).
  void update(std::span<const std::byte> plain, std::span<std::byte> cipher);
  // Ends the message and returns its authentication tag.
  AesGcmTag finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Decrypts `cipher` into `plain` (same size) and checks the tag. Returns false, leaving `plain`
// unspecified, when the tag does not match (wrong key or altered data).
bool aes_256_gcm_decrypt(const AesKey& key, const AesGcmIv& iv, const AesGcmTag& tag, std::span<const std::byte> cipher,
                         std::span<std::byte> plain);

// Fills `out` from the system's cryptographically secure generator (IVs).
void random_bytes(std::span<std::uint8_t> out);

// Overwrites memory that held a key, in a way the compiler cannot drop.
void secure_zero(std::span<std::uint8_t> bytes) noexcept;

}  // namespace websd::artifact
