#include "artifact/artifact_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace websd::artifact {

std::optional<MappedFile> ArtifactSource::map(std::string_view) const { return std::nullopt; }

std::optional<std::string> ArtifactSource::local_path(std::string_view) const { return std::nullopt; }

std::string ArtifactSource::where(std::string_view relative_path) const {
  return describe() + "/" + std::string(relative_path);
}

std::optional<std::uint64_t> FolderSource::size(std::string_view relative_path) const {
  struct stat info {};
  if (::stat(where(relative_path).c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(info.st_size);
}

std::vector<std::byte> FolderSource::read(std::string_view relative_path) const {
  const std::string path = where(relative_path);
  errno = 0;
  std::ifstream stream(path, std::ios::binary);
  const auto bytes = size(relative_path);
  if (!stream || !bytes) {
    const std::string reason = errno != 0 ? std::strerror(errno) : "not a regular file";
    throw Error("artifact", path + ": cannot be read: " + reason + " (copy the whole artifact again)");
  }
  std::vector<std::byte> content(static_cast<std::size_t>(*bytes));
  if (!stream.read(reinterpret_cast<char*>(content.data()), static_cast<std::streamsize>(content.size()))) {
    throw Error("artifact", path + ": cannot be read: it ended before its " + std::to_string(*bytes) +
                                " bytes (copy the whole artifact again)");
  }
  return content;
}

std::optional<MappedFile> FolderSource::map(std::string_view relative_path) const {
  return MappedFile(where(relative_path));
}

std::optional<std::string> FolderSource::local_path(std::string_view relative_path) const {
  return where(relative_path);
}

}  // namespace websd::artifact
