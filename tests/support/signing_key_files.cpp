#include "support/signing_key_files.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <array>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>

namespace websd::test {
namespace {

void write_pem(const std::string& path, const std::function<int(FILE*)>& write) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!file || write(file.get()) != 1) throw std::runtime_error("cannot write " + path);
}

}  // namespace

SigningKeyFiles write_signing_key_files(const std::string& dir, std::uint8_t seed) {
  std::array<unsigned char, 32> secret{};
  for (std::size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<unsigned char>(seed * 31 + i);
  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, secret.data(), secret.size()), &EVP_PKEY_free);
  if (!key) throw std::runtime_error("EVP_PKEY_new_raw_private_key failed");
  const std::string tag = std::to_string(seed);
  SigningKeyFiles files{dir + "/sign-" + tag + ".pem", dir + "/trust-" + tag + ".pem"};
  write_pem(files.private_pem,
            [&](FILE* file) { return PEM_write_PrivateKey(file, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  write_pem(files.public_pem, [&](FILE* file) { return PEM_write_PUBKEY(file, key.get()); });
  return files;
}

}  // namespace websd::test
