#include "artifact/sha256.h"

#include <algorithm>
#include <bit>

#include "artifact/sha256_blocks.h"

namespace websd::artifact {
namespace {

// FIPS 180-4 5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8
// primes.
constexpr std::array<std::uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::size_t kBlockBytes = 64;

std::uint32_t load_big_endian(const std::uint8_t* bytes) {
  return std::uint32_t{bytes[0]} << 24 | std::uint32_t{bytes[1]} << 16 | std::uint32_t{bytes[2]} << 8 | bytes[3];
}

// One round of FIPS 180-4 6.2.2 step 3, written so that the caller rotates the names of the eight
// working variables instead of moving their values: only d and h change.
inline void compress_round(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t& d, std::uint32_t e,
                           std::uint32_t f, std::uint32_t g, std::uint32_t& h, std::uint32_t constant_plus_word) {
  const std::uint32_t t1 =
      h + (std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25)) + ((e & f) ^ (~e & g)) + constant_plus_word;
  d += t1;
  h = t1 + (std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
}

}  // namespace

namespace sha256_blocks {

void compress_portable(State& state, const std::uint8_t* blocks, std::size_t count) {
  for (; count > 0; --count, blocks += kBlockBytes) {
    std::array<std::uint32_t, 64> w;  // the message schedule
    for (std::size_t t = 0; t < 16; ++t) w[t] = load_big_endian(blocks + 4 * t);
    for (std::size_t t = 16; t < 64; ++t) {
      const std::uint32_t sigma0 = std::rotr(w[t - 15], 7) ^ std::rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t sigma1 = std::rotr(w[t - 2], 17) ^ std::rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = sigma1 + w[t - 7] + sigma0 + w[t - 16];
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (std::size_t t = 0; t < 64; t += 8) {
      compress_round(a, b, c, d, e, f, g, h, kRoundConstants[t] + w[t]);
      compress_round(h, a, b, c, d, e, f, g, kRoundConstants[t + 1] + w[t + 1]);
      compress_round(g, h, a, b, c, d, e, f, kRoundConstants[t + 2] + w[t + 2]);
      compress_round(f, g, h, a, b, c, d, e, kRoundConstants[t + 3] + w[t + 3]);
      compress_round(e, f, g, h, a, b, c, d, kRoundConstants[t + 4] + w[t + 4]);
      compress_round(d, e, f, g, h, a, b, c, kRoundConstants[t + 5] + w[t + 5]);
      compress_round(c, d, e, f, g, h, a, b, kRoundConstants[t + 6] + w[t + 6]);
      compress_round(b, c, d, e, f, g, h, a, kRoundConstants[t + 7] + w[t + 7]);
    }
    state[0] += a, state[1] += b, state[2] += c, state[3] += d;
    state[4] += e, state[5] += f, state[6] += g, state[7] += h;
  }
}

Function fastest() {
#if defined(__x86_64__)
  if (x86_sha_supported()) return compress_x86_sha;
#endif
  return compress_portable;
}

}  // namespace sha256_blocks

namespace {

void compress(sha256_blocks::State& state, const std::uint8_t* blocks, std::size_t count) {
  static const sha256_blocks::Function function = sha256_blocks::fastest();
  if (count > 0) function(state, blocks, count);
}

}  // namespace

Sha256Stream::Sha256Stream() : state_(kInitialState) {}

void Sha256Stream::update(std::span<const std::byte> bytes) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t size = bytes.size();
  message_bytes_ += size;
  if (block_bytes_ > 0) {
    const std::size_t taken = std::min(size, kBlockBytes - block_bytes_);
    std::copy_n(data, taken, block_.begin() + static_cast<std::ptrdiff_t>(block_bytes_));
    block_bytes_ += taken;
    data += taken;
    size -= taken;
    if (block_bytes_ < kBlockBytes) return;
    compress(state_, block_.data(), 1);
    block_bytes_ = 0;
  }
  // Whole blocks are compressed where they lie, without a copy.
  compress(state_, data, size / kBlockBytes);
  block_bytes_ = size % kBlockBytes;
  std::copy_n(data + size - block_bytes_, block_bytes_, block_.begin());
}

Sha256Digest Sha256Stream::finish() {
  // FIPS 180-4 5.1.1: a 1 bit, zeros up to 56 bytes mod 64, then the length in bits, big-endian.
  const std::uint64_t message_bits = message_bytes_ * 8;
  block_[block_bytes_++] = 0x80;
  if (block_bytes_ > kBlockBytes - 8) {
    std::fill(block_.begin() + static_cast<std::ptrdiff_t>(block_bytes_), block_.end(), std::uint8_t{0});
    compress(state_, block_.data(), 1);
    block_bytes_ = 0;
  }
  std::fill(block_.begin() + static_cast<std::ptrdiff_t>(block_bytes_), block_.end() - 8, std::uint8_t{0});
  for (std::size_t i = 0; i < 8; ++i) block_[kBlockBytes - 1 - i] = static_cast<std::uint8_t>(message_bits >> (8 * i));
  compress(state_, block_.data(), 1);

  Sha256Digest digest;
  for (std::size_t i = 0; i < 32; ++i) digest[i] = static_cast<std::uint8_t>(state_[i / 4] >> (24 - 8 * (i % 4)));
  return digest;
}

Sha256Digest sha256(std::span<const std::byte> bytes) {
  Sha256Stream stream;
  stream.update(bytes);
  return stream.finish();
}

Sha256Digest sha256(std::string_view text) {
  return sha256(std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

}  // namespace websd::artifact
