// Ed25519 key files for the tests of signed artifacts, made with OpenSSL from a fixed seed so that
// every run writes the same keys.
#pragma once

#include <cstdint>
#include <string>

namespace websd::test {

struct SigningKeyFiles {
  std::string private_pem;  // for websd build --sign-key
  std::string public_pem;   // for --trust-key
};

// Writes sign-<seed>.pem and trust-<seed>.pem into `dir`.
SigningKeyFiles write_signing_key_files(const std::string& dir, std::uint8_t seed);

}  // namespace websd::test
