// SHA-256 against the test vectors of FIPS 180-2 / NIST's examples, in one piece and streamed in
// pieces of every awkward size. Runs natively and in the WebAssembly build (where the portable
// block function is the one used); sha256_openssl_test holds it against OpenSSL natively.
#include "artifact/sha256.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "artifact/artifact_hex.h"

namespace websd::artifact {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

std::string hex_sha256(std::string_view text) { return hex_encode(sha256(bytes_of(text))); }

// The digest of `text` fed in pieces of the given sizes, cycled until the text is used up.
std::string streamed_hex_sha256(std::string_view text, const std::vector<std::size_t>& pieces) {
  Sha256Stream stream;
  for (std::size_t i = 0; !text.empty(); ++i) {
    const std::size_t piece = std::min(text.size(), pieces[i % pieces.size()]);
    stream.update(bytes_of(text.substr(0, piece)));
    text.remove_prefix(piece);
  }
  return hex_encode(stream.finish());
}

const std::string kOneBlock = "abc";
const std::string k448Bits = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
const std::string k896Bits =
    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(hex_sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_sha256(kOneBlock), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding needs a second block.
  EXPECT_EQ(hex_sha256(k448Bits), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_sha256(k896Bits), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillionAs) {
  const std::string million(1000000, 'a');
  const std::string expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(hex_sha256(million), expected);
  EXPECT_EQ(streamed_hex_sha256(million, {1, 63, 64, 65, 1000, 4096 + 7}), expected);
}

TEST(Sha256, EverySplitOfAMessageGivesTheSameDigest) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += static_cast<char>((i * 37 + 11) & 0xff);
  const std::string whole = hex_sha256(text);
  for (std::size_t split = 0; split <= text.size(); ++split) {
    Sha256Stream stream;
    stream.update(bytes_of(std::string_view(text).substr(0, split)));
    stream.update(bytes_of(std::string_view(text).substr(split)));
    ASSERT_EQ(hex_encode(stream.finish()), whole) << "split at " << split;
  }
  EXPECT_EQ(streamed_hex_sha256(k896Bits, {1}), hex_sha256(k896Bits));
}

}  // namespace
}  // namespace websd::artifact
