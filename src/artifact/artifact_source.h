// Where an artifact's files come from. Artifact reads manifest.json, weights/index.json, the
// weight shards and the listed files through this interface, one file at a time by its path
// relative to the artifact ("weights/shard-00000.bin"), so that a source which fetches files (a
// browser) never needs more than one shard in memory: Artifact::verify_shard, then upload, then
// Artifact::release_shard. FolderSource reads a local folder, memory-mapping the shards.
// Implementations must allow concurrent calls (Artifact's readers may run on several threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/sha256.h"
#include "io/mapped_file.h"

namespace websd::artifact {

class ArtifactSource {
 public:
  virtual ~ArtifactSource() = default;

  // Where the artifact is, for messages and Artifact::dir(): a folder's path, a URL.
  virtual std::string describe() const = 0;
  // The size of the file at `relative_path`, or nullopt when the source has no such file.
  virtual std::optional<std::uint64_t> size(std::string_view relative_path) const = 0;
  // The whole file. Throws websd::Error naming it when it is missing or cannot be read.
  virtual std::vector<std::byte> read(std::string_view relative_path) const = 0;
  // The file memory-mapped, or nullopt when this source does not map (then read() is used): lets
  // the runtime use plain f32 weights in place, with the pages shared with the page cache.
  virtual std::optional<MappedFile> map(std::string_view relative_path) const;
  // The file's path on this machine's file system, or nullopt when the source has none (fetched
  // files); for the native code that needs a path (dlopen of a kernel library).
  virtual std::optional<std::string> local_path(std::string_view relative_path) const;
  // The SHA-256 of the bytes the last read() of the file returned, when the source computed it
  // while reading (a host hashing natively: Node's crypto) or holds the file only after checking it
  // against this same artifact's index (a page's cache, keyed by the digest): the weight shards,
  // the manifest (against its seal) and the files it lists are then checked by this digest instead
  // of hashed again (in WebAssembly, 5-10x slower than native). nullopt: the runtime hashes. The host supplies the bytes either way, so
  // trusting its digest adds nothing to what it could already change.
  virtual std::optional<Sha256Digest> read_digest(std::string_view relative_path) const;

  // describe() + "/" + relative_path, for messages about one file.
  std::string where(std::string_view relative_path) const;
};

// The files of an artifact folder on this machine's file system. Stateless apart from the folder's
// path; thread-safe.
class FolderSource final : public ArtifactSource {
 public:
  explicit FolderSource(std::string dir) : dir_(std::move(dir)) {}

  std::string describe() const override { return dir_; }
  std::optional<std::uint64_t> size(std::string_view relative_path) const override;
  std::vector<std::byte> read(std::string_view relative_path) const override;
  std::optional<MappedFile> map(std::string_view relative_path) const override;
  std::optional<std::string> local_path(std::string_view relative_path) const override;

 private:
  std::string dir_;
};

}  // namespace websd::artifact
