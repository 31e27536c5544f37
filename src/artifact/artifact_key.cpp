#include "artifact/artifact_key.h"

#include <algorithm>
#include <vector>

#include "artifact/artifact_hex.h"
#include "core/error.h"
#include "io/input_file.h"

namespace websd::artifact {
namespace {

constexpr std::string_view kKeyCheckLabel = "websd-artifact key check v1";

std::string_view strip_line_end(std::string_view text) {
  if (text.ends_with("\r\n")) return text.substr(0, text.size() - 2);
  if (text.ends_with('\n')) return text.substr(0, text.size() - 1);
  return text;
}

}  // namespace

ArtifactKey read_artifact_key(const std::string& path) {
  std::string content = input_file_read("artifact", path, input_kinds::kKeyFile);
  ArtifactKey key;
  if (content.size() == key.bytes.size()) {
    std::copy(content.begin(), content.end(), reinterpret_cast<char*>(key.bytes.data()));
  } else {
    const std::string_view text = strip_line_end(content);
    auto decoded = text.size() == 2 * key.bytes.size() ? hex_decode(text) : std::nullopt;
    if (!decoded) {
      secure_zero({reinterpret_cast<std::uint8_t*>(content.data()), content.size()});
      throw Error("artifact", path + ": key file holds " + std::to_string(content.size()) +
                                  " bytes that are neither 32 raw bytes nor 64 hex digits (create one with "
                                  "'openssl rand -hex 32 > KEY')");
    }
    std::copy(decoded->begin(), decoded->end(), key.bytes.begin());
    secure_zero(*decoded);
  }
  secure_zero({reinterpret_cast<std::uint8_t*>(content.data()), content.size()});
  return key;
}

std::string artifact_key_check(const ArtifactKey& key) {
  return "hmac-sha256:" + hex_encode(hmac_sha256(key.bytes, kKeyCheckLabel));
}

}  // namespace websd::artifact
