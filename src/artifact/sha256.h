// SHA-256 (FIPS 180-4), websd's own: the integrity checks of artifacts (index, weight shards,
// listed files) must give the same answer natively and in WebAssembly, where there is no OpenSSL.
// Portable C++, with the x86 SHA extensions where the CPU has them (sha256_blocks.h).
// Sha256Stream is a small value owned by one user at a time (not thread-safe); sha256() is
// thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace websd::artifact {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Incremental SHA-256, for data that is written or read in pieces.
class Sha256Stream {
 public:
  Sha256Stream();

  void update(std::span<const std::byte> bytes);
  // Pads the message and returns its digest; update() and finish() must not be called afterwards.
  Sha256Digest finish();

 private:
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> block_{};  // the message's bytes not yet compressed
  std::size_t block_bytes_ = 0;
  std::uint64_t message_bytes_ = 0;
};

Sha256Digest sha256(std::span<const std::byte> bytes);
// The digest of a text's bytes (a manifest, an index).
Sha256Digest sha256(std::string_view text);

}  // namespace websd::artifact
