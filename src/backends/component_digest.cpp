#include "backends/component_digest.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "app/version.h"
#include "artifact/artifact_hex.h"
#include "artifact/sha256.h"
#include "core/error.h"

namespace websd::backends {
namespace {

void hash_text(artifact::Sha256Stream& hash, const std::string& text) {
  // Length-prefixed, so that no two sequences of fields hash alike.
  const std::string field = std::to_string(text.size()) + ":" + text;
  hash.update(std::as_bytes(std::span<const char>(field)));
}

}  // namespace

std::string component_content_digest(const CheckpointComponent& component) {
  artifact::Sha256Stream hash;
  for (const auto& [name, location] : component.tensors()) {
    const SafetensorsEntry& entry = *location.entry;
    hash_text(hash, name);
    hash_text(hash, std::string(dtype_name(entry.dtype)));
    hash_text(hash, shape_to_string(entry.shape));
    // In 64 MiB pieces, each dropped from resident memory once hashed.
    constexpr std::uint64_t kPiece = 64ull << 20;
    const std::span<const std::byte> bytes = location.file->bytes(entry);
    for (std::uint64_t at = 0; at < bytes.size(); at += kPiece) {
      const std::uint64_t length = std::min<std::uint64_t>(kPiece, bytes.size() - at);
      hash.update(bytes.subspan(at, length));
      location.file->release_data_pages(entry.begin + at, entry.begin + at + length);
    }
    hash_text(hash, std::to_string(bytes.size()));
  }
  const artifact::Sha256Digest digest = hash.finish();
  return artifact::hex_encode(digest);
}

std::string component_file_identity(const CheckpointComponent& component) {
  std::string identity = "websd " + std::string(kVersion) + "\ncomponent " + component.name() + "\n";
  for (const auto& file : component.weight_files()) {
    std::error_code error;
    const std::filesystem::path path = std::filesystem::weakly_canonical(file->path(), error);
    struct stat status {};
    if (::stat(file->path().c_str(), &status) != 0) {
      const int saved = errno;
      throw Error("cache", file->path() + ": cannot examine: " + std::strerror(saved));
    }
    identity += (error ? file->path() : path.string()) + " dev " + std::to_string(status.st_dev) + " ino " +
                std::to_string(status.st_ino) + " size " + std::to_string(status.st_size) + " mtime " +
                std::to_string(status.st_mtim.tv_sec) + "." + std::to_string(status.st_mtim.tv_nsec) + " ctime " +
                std::to_string(status.st_ctim.tv_sec) + "." + std::to_string(status.st_ctim.tv_nsec) + "\n";
  }
  return identity;
}

}  // namespace websd::backends
