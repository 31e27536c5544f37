#include "artifact/artifact_key.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "artifact/artifact_hex.h"
#include "core/error.h"

namespace websd::artifact {
namespace {

constexpr std::string_view kKeyCheckLabel = "websd-artifact key check v1";
// Key files are tiny; anything larger is certainly not one (and is not read whole).
constexpr std::size_t kMaxKeyFileBytes = 1024;

std::string_view strip_line_end(std::string_view text) {
  if (text.ends_with("\r\n")) return text.substr(0, text.size() - 2);
  if (text.ends_with('\n')) return text.substr(0, text.size() - 1);
  return text;
}

}  // namespace

ArtifactKey read_artifact_key(const std::string& path) {
  // An ifstream opens a folder and reads it as empty: name it instead of "holds 0 bytes".
  std::error_code status_error;
  if (std::filesystem::is_directory(path, status_error)) {
    throw Error("artifact",
                path + ": is a folder, expected a key file (pass the file that holds the key, not its folder)");
  }
  errno = 0;
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    const std::string reason = errno != 0 ? std::string(": ") + std::strerror(errno) : "";
    throw Error("artifact", path + ": cannot open the key file" + reason + " (check the --key-file path)");
  }
  std::string content(kMaxKeyFileBytes + 1, '\0');
  stream.read(content.data(), static_cast<std::streamsize>(content.size()));
  content.resize(static_cast<std::size_t>(stream.gcount()));
  ArtifactKey key;
  if (content.size() == key.bytes.size()) {
    std::copy(content.begin(), content.end(), reinterpret_cast<char*>(key.bytes.data()));
  } else {
    const std::string_view text = strip_line_end(content);
    auto decoded = text.size() == 2 * key.bytes.size() ? hex_decode(text) : std::nullopt;
    if (!decoded) {
      secure_zero({reinterpret_cast<std::uint8_t*>(content.data()), content.size()});
      throw Error("artifact",
                  path + ": key file holds " +
                      (content.size() > kMaxKeyFileBytes ? "more than 1024" : std::to_string(content.size())) +
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
