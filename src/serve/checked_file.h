// The promise websd serve makes with every body, ETag and content-addressed URL: the bytes it sends
// are the bytes whose SHA-256 it names. A file's digest is computed when serve starts; before each
// response the opened file's identity (device, inode, size, modification and change times) is
// compared with the one under which its digest last matched, and a file whose identity moved is
// hashed again through the same descriptor that will be sent: matching, it is served (and the new
// identity kept); not matching, or changed while it was hashed, it is refused.
//
// Thread-safe: each CheckedFile guards its identity with its own lock.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace websd::serve {

struct FileIdentity {
  std::uint64_t device = 0, inode = 0, bytes = 0;
  std::int64_t modified_ns = 0, changed_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

FileIdentity file_identity(const struct stat& info);

// The lowercase hex SHA-256 of what descriptor `fd` holds, read with pread from offset 0 (the
// descriptor's position is left alone); nullopt when it cannot be read to its end.
std::optional<std::string> descriptor_sha256(int fd, std::uint64_t bytes);

class CheckedFile {
 public:
  // Whether the file open as `fd` (fstat gave `info`) holds the bytes whose digest is `sha256`.
  bool matches(int fd, const struct stat& info, const std::string& sha256);

 private:
  std::mutex mutex_;
  std::optional<FileIdentity> verified_;  // the identity under which the digest last matched
};

}  // namespace websd::serve
