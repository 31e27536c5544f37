#include "artifact/artifact_source.h"

#include <sys/stat.h>

#include "io/input_file.h"

namespace websd::artifact {

std::optional<MappedFile> ArtifactSource::map(std::string_view) const { return std::nullopt; }

std::optional<std::string> ArtifactSource::local_path(std::string_view) const { return std::nullopt; }

std::optional<Sha256Digest> ArtifactSource::read_digest(std::string_view) const { return std::nullopt; }

std::string ArtifactSource::where(std::string_view relative_path) const {
  return describe() + "/" + std::string(relative_path);
}

std::optional<std::uint64_t> FolderSource::size(std::string_view relative_path) const {
  struct stat info {};
  if (::stat(where(relative_path).c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(info.st_size);
}

std::vector<std::byte> FolderSource::read(std::string_view relative_path) const {
  return InputFile("artifact", where(relative_path), input_kinds::kArtifactFile).read_all_bytes();
}

std::optional<MappedFile> FolderSource::map(std::string_view relative_path) const {
  return MappedFile(where(relative_path), input_kinds::kArtifactFile);
}

std::optional<std::string> FolderSource::local_path(std::string_view relative_path) const {
  return where(relative_path);
}

}  // namespace websd::artifact
