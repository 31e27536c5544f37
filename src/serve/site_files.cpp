#include "serve/site_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "artifact/artifact.h"
#include "artifact/artifact_hex.h"
#include "core/error.h"
#include "io/input_file.h"

namespace websd::serve {
namespace fs = std::filesystem;
namespace {

// The page every webgpu artifact carries (targets/webgpu/codegen/webgpu_target.cpp).
constexpr const char* kPage = "index.html";

// A URL segment from a folder name: letters, digits, '-', '_' and '.' kept, the rest '-'.
std::string url_name(const std::string& dir) {
  std::string name = fs::path(dir).lexically_normal().filename().string();
  if (name.empty()) name = fs::path(dir).lexically_normal().parent_path().filename().string();
  for (char& c : name) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!plain) c = '-';
  }
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) name = "artifact";
  return name;
}

// A regular file, not a symbolic link, of `bytes` bytes (when given); else websd::Error naming it.
void check_regular(const std::string& dir, const std::string& relative, std::optional<std::uint64_t> bytes) {
  const std::string path = dir + "/" + relative;
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) throw Error("serve", path + ": missing (rebuild the artifact)");
  if (S_ISLNK(info.st_mode)) {
    throw Error("serve", path + " is a symbolic link; websd serve publishes the artifact's own regular files only");
  }
  if (!S_ISREG(info.st_mode)) throw Error("serve", path + " is not a regular file");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (bytes && *bytes != size) {
    throw Error("serve", path + " has " + std::to_string(size) + " bytes, its manifest says " + std::to_string(*bytes) +
                             " (rebuild the artifact)");
  }
}

// The file opened under the input rule (io/input_file.h) and hashed; its CheckedFile remembers the
// identity it matched under. `sha256` empty: the file defines its own digest (manifest, seal, index,
// whose integrity Artifact::open checked).
SiteFile checked_site_file(const std::string& path, std::string sha256) {
  const InputFile input("serve", path, input_kinds::kArtifactFile);
  struct stat info {};
  if (::fstat(input.descriptor(), &info) != 0) throw Error("serve", path + ": cannot examine it");
  if (sha256.empty()) {
    const std::optional<std::string> digest = descriptor_sha256(input.descriptor(), input.size());
    if (!digest) throw Error("serve", path + ": cannot read it to its end");
    sha256 = *digest;
  }
  auto checked = std::make_shared<CheckedFile>();
  if (!checked->matches(input.descriptor(), info, sha256)) {
    throw Error("serve", path + " does not hold the bytes its artifact lists (SHA-256 " + sha256 +
                             "): it changed after the build; rebuild the artifact");
  }
  return {path, mime_type(path), std::move(sha256), input.size(), std::move(checked)};
}

}  // namespace

std::string mime_type(std::string_view file_name) {
  static const std::map<std::string, std::string, std::less<>> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".wasm", "application/wasm"},
      {".wgsl", "text/plain; charset=utf-8"},
      {".txt", "text/plain; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
  };
  const std::size_t dot = file_name.rfind('.');
  if (dot != std::string_view::npos) {
    if (const auto found = kTypes.find(file_name.substr(dot)); found != kTypes.end()) return found->second;
  }
  return "application/octet-stream";
}

const SiteFile* SiteFiles::find(std::string_view path) const {
  const auto found = files_.find(path);
  return found == files_.end() ? nullptr : &found->second;
}

std::uint64_t SiteFiles::total_bytes() const {
  std::uint64_t total = 0;
  for (const auto& [path, file] : files_) total += file.bytes;
  return total;
}

void SiteFiles::add(std::string path, SiteFile file) { files_.insert_or_assign(std::move(path), std::move(file)); }

std::string SiteFiles::artifacts_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const ServedArtifact& served : artifacts_) {
    list.push_back({{"name", served.name},
                    {"url", "/a/" + served.name + "/"},
                    {"model", served.model.value("name", std::string())},
                    {"sizes", served.model.value("sizes", nlohmann::json::array())}});
  }
  return list.dump();
}

SiteFiles site_files(const std::vector<std::string>& artifact_dirs) {
  SiteFiles site;
  std::map<std::string, int> taken;
  for (const std::string& dir : artifact_dirs) {
    const artifact::Artifact opened = artifact::Artifact::open(dir);
    if (opened.target() != "webgpu") {
      throw Error("serve", dir + " is a '" + opened.target() +
                               "' artifact; a browser runs webgpu artifacts: build one with websd build --model M "
                               "--target webgpu --out DIR");
    }
    const std::vector<std::string> listed = opened.file_paths();
    if (std::find(listed.begin(), listed.end(), kPage) == listed.end()) {
      throw Error("serve", dir +
                               " carries no page (index.html): it was built by an older websd; rebuild it with "
                               "websd build --target webgpu");
    }
    std::string name = url_name(dir);
    if (const int seen = taken[name]++; seen > 0) name += "-" + std::to_string(seen + 1);
    const std::string prefix = "/a/" + name + "/";
    const auto add = [&](const std::string& relative, const std::string& sha256, std::optional<std::uint64_t> bytes) {
      check_regular(dir, relative, bytes);
      site.add(prefix + relative, checked_site_file(dir + "/" + relative, sha256));
    };
    for (const char* own : {"manifest.json", "seal.json", "weights/index.json"}) add(own, "", std::nullopt);
    for (const auto& file : *opened.section("files")) {
      add(file.at("path").get<std::string>(), file.at("sha256").get<std::string>(),
          file.at("bytes").get<std::uint64_t>());
    }
    for (const artifact::WeightShard& shard : opened.shards()) {
      add("weights/" + shard.file, artifact::hex_encode(shard.sha256), shard.bytes);
    }
    const nlohmann::json* model = opened.section("model");
    site.add_artifact({name, dir, model != nullptr ? *model : nlohmann::json::object()});
  }
  return site;
}

}  // namespace websd::serve
