#include "serve/checked_file.h"

#include <unistd.h>

#include <cstddef>
#include <span>
#include <vector>

#include "artifact/artifact_hex.h"
#include "artifact/sha256.h"

namespace websd::serve {

FileIdentity file_identity(const struct stat& info) {
  constexpr std::int64_t kBillion = 1'000'000'000;
  return {static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
          static_cast<std::uint64_t>(info.st_size), info.st_mtim.tv_sec * kBillion + info.st_mtim.tv_nsec,
          info.st_ctim.tv_sec * kBillion + info.st_ctim.tv_nsec};
}

std::optional<std::string> descriptor_sha256(int fd, std::uint64_t bytes) {
  artifact::Sha256Stream hash;
  std::vector<std::byte> buffer(std::size_t{4} << 20);
  for (std::uint64_t at = 0; at < bytes;) {
    const ssize_t got =
        ::pread(fd, buffer.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), bytes - at)),
                static_cast<off_t>(at));
    if (got <= 0) return std::nullopt;  // an error, or the file shrank
    hash.update(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(got)));
    at += static_cast<std::uint64_t>(got);
  }
  return artifact::hex_encode(hash.finish());
}

bool CheckedFile::matches(int fd, const struct stat& info, const std::string& sha256) {
  const FileIdentity identity = file_identity(info);
  const std::lock_guard lock(mutex_);
  if (verified_ == identity) return true;
  const std::optional<std::string> digest = descriptor_sha256(fd, identity.bytes);
  struct stat after {};
  // A file written while it was hashed may hold bytes of either version: not proof of either.
  if (!digest || *digest != sha256 || ::fstat(fd, &after) != 0 || file_identity(after) != identity) return false;
  verified_ = identity;
  return true;
}

}  // namespace websd::serve
