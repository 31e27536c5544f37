// The artifact's own SHA-256 against OpenSSL's, natively: random messages of every length from 0
// to 1000 bytes and of a few MiB, in one piece and streamed; and the block functions against each
// other (the x86 SHA-extensions one, where the CPU has it, is what sha256() uses here, so the
// portable one that the WebAssembly build uses is held to it block by block).
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <random>
#include <vector>

#include "artifact/sha256.h"
#include "artifact/sha256_blocks.h"

namespace websd::artifact {
namespace {

Sha256Digest openssl_sha256(std::span<const std::byte> bytes) {
  Sha256Digest digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size()) {
    ADD_FAILURE() << "OpenSSL's SHA-256 failed";
  }
  return digest;
}

std::vector<std::byte> random_bytes(std::mt19937& random, std::size_t size) {
  std::vector<std::byte> bytes(size);
  for (std::byte& byte : bytes) byte = static_cast<std::byte>(random() & 0xff);
  return bytes;
}

TEST(Sha256OpenSsl, EveryLengthUpTo1000Bytes) {
  std::mt19937 random(1);
  for (std::size_t size = 0; size <= 1000; ++size) {
    const std::vector<std::byte> message = random_bytes(random, size);
    ASSERT_EQ(sha256(message), openssl_sha256(message)) << size << " bytes";
  }
}

TEST(Sha256OpenSsl, MessagesOfAFewMebibytesInOnePieceAndStreamed) {
  std::mt19937 random(2);
  for (const std::size_t size : {std::size_t{1} << 20, (std::size_t{3} << 20) + 17, (std::size_t{5} << 20) - 1}) {
    const std::vector<std::byte> message = random_bytes(random, size);
    const Sha256Digest expected = openssl_sha256(message);
    EXPECT_EQ(sha256(message), expected) << size << " bytes";
    Sha256Stream stream;
    for (std::size_t done = 0; done < size;) {
      const std::size_t piece = std::min<std::size_t>(size - done, random() % 200000);
      stream.update(std::span<const std::byte>(message).subspan(done, piece));
      done += piece;
    }
    EXPECT_EQ(stream.finish(), expected) << size << " bytes, streamed";
  }
}

TEST(Sha256OpenSsl, BlockFunctionsAgreeOnRandomStatesAndBlocks) {
#if defined(__x86_64__)
  if (!sha256_blocks::x86_sha_supported()) GTEST_SKIP() << "this CPU has no SHA extensions";
  std::mt19937 random(3);
  for (int trial = 0; trial < 2000; ++trial) {
    sha256_blocks::State portable;
    for (std::uint32_t& word : portable) word = static_cast<std::uint32_t>(random());
    sha256_blocks::State extensions = portable;
    const std::size_t count = 1 + random() % 8;
    const std::vector<std::byte> blocks = random_bytes(random, 64 * count);
    const auto* data = reinterpret_cast<const std::uint8_t*>(blocks.data());
    sha256_blocks::compress_portable(portable, data, count);
    sha256_blocks::compress_x86_sha(extensions, data, count);
    ASSERT_EQ(portable, extensions) << "trial " << trial << ", " << count << " blocks";
  }
  EXPECT_EQ(sha256_blocks::fastest(), &sha256_blocks::compress_x86_sha);
#else
  EXPECT_EQ(sha256_blocks::fastest(), &sha256_blocks::compress_portable);
#endif
}

}  // namespace
}  // namespace websd::artifact
