#include "web_runtime/js_artifact_source.h"

#include "core/error.h"
#include "web_runtime/web_host_imports.h"

namespace websd::web {
namespace {

std::string take_host_error() {
  std::string text(static_cast<std::size_t>(websd_host_error_bytes()) + 1, '\0');
  websd_host_error_take(text.data(), static_cast<int>(text.size()));
  text.resize(text.find('\0'));
  return text.empty() ? "the host failed without a message" : text;
}

}  // namespace

JsArtifactSource::JsArtifactSource() {
  std::string text(1024, '\0');
  const int length = websd_files_describe(text.data(), static_cast<int>(text.size()));
  if (length < 0) throw Error("web", take_host_error());
  text.resize(static_cast<std::size_t>(std::min<int>(length, static_cast<int>(text.size()) - 1)));
  describe_ = text;
}

std::optional<std::uint64_t> JsArtifactSource::size(std::string_view relative_path) const {
  const double bytes = websd_files_size(std::string(relative_path).c_str());
  if (bytes == -2) throw Error("artifact", where(relative_path) + ": " + take_host_error());
  if (bytes < 0) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::vector<std::byte> JsArtifactSource::read(std::string_view relative_path) const {
  const std::optional<std::uint64_t> bytes = size(relative_path);
  if (!bytes) throw Error("artifact", where(relative_path) + ": missing");
  std::vector<std::byte> data(*bytes);
  if (websd_files_read(std::string(relative_path).c_str(), data.data(), static_cast<double>(*bytes)) != 0) {
    throw Error("artifact", where(relative_path) + ": " + take_host_error());
  }
  return data;
}

std::optional<artifact::Sha256Digest> JsArtifactSource::read_digest(std::string_view relative_path) const {
  artifact::Sha256Digest digest{};
  const int given = websd_files_digest(std::string(relative_path).c_str(), digest.data());
  if (given < 0) throw Error("artifact", where(relative_path) + ": " + take_host_error());
  if (given == 0) return std::nullopt;
  return digest;
}

}  // namespace websd::web
