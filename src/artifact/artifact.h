// An artifact opened by the runtime (see FORMAT.md). open() checks everything that is cheap to
// check before any weight is touched: the seal (the manifest's SHA-256; its signature, against the
// trusted keys when given; for encrypted artifacts its HMAC under the key), the manifest (magic,
// format version, field types), the target, the weight index (its SHA-256 from the manifest, every entry inside its
// shard), each shard's and each listed file's presence and size, and for encrypted artifacts the key against the
// manifest's key check. A shard's SHA-256 is verified the first time one of its tensors is read,
// a listed file's when it is read. Every file is read through an ArtifactSource (a local folder,
// or files fetched one at a time), so shards can be streamed: verify_shard, use, release_shard.
// This header is the runtime side: it never includes compiler headers and builds for WebAssembly.
// Thread-safety: immutable after open() apart from the shard cache, which is internally locked;
// all member functions may be called concurrently. Move-only.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "artifact/artifact_manifest.h"
#include "artifact/artifact_source.h"
#include "artifact/shard_load_times.h"
#include "artifact/weight_index.h"

namespace websd::artifact {

class WeightShardStore;

struct ArtifactOpenOptions {
  // The targets this runtime runs ("cpu", ...: a device registry's); empty accepts any (tools that
  // only describe).
  std::vector<std::string> expected_targets;
  // File holding the AES-256 key of an encrypted artifact (see read_artifact_key).
  std::optional<std::string> key_file;
  // An encrypted artifact opened without a key fails, unless this is set (websd inspect): then
  // only reading a weight fails, and the manifest's HMAC is not checked.
  bool allow_missing_key = false;
  // PEM files of the Ed25519 public keys the caller trusts (--trust-key). When any is given, the
  // artifact must be signed by one of them.
  std::vector<std::string> trust_key_files;

  // Options that expect one of `targets` and nothing else.
  static ArtifactOpenOptions for_targets(std::vector<std::string> targets) {
    ArtifactOpenOptions options;
    options.expected_targets = std::move(targets);
    return options;
  }
  static ArtifactOpenOptions for_target(std::string target) { return for_targets({std::move(target)}); }
};

// What protects an opened artifact and what open() checked of it (FORMAT.md, "Protections").
struct ArtifactProtections {
  std::string manifest_sha256;        // hex SHA-256 of manifest.json, which covers every other byte
  bool key_authenticated = false;     // encrypted, and the manifest's HMAC checked with the key
  std::optional<std::string> signer;  // public_key_fingerprint of the signing key; nullopt: not signed
  bool signature_checked = false;     // the signature verified against the manifest
  bool signer_trusted = false;        // the signer is one of ArtifactOpenOptions::trust_key_files
};

class Artifact {
 public:
  // Throws websd::Error("artifact", ...) with one line that tells apart: not an artifact, a newer
  // or older format version, a missing or altered seal, an altered manifest, a signature that does
  // not verify, an unsigned artifact or another signer when trust keys are given, a manifest
  // changed by someone without the key, the wrong target, an edited index, a missing or
  // truncated shard, an index entry out of its shard's bounds, an encrypted artifact without a key,
  // and a wrong key; and in a build that cannot decrypt (WebAssembly), any encrypted artifact.
  static Artifact open(std::unique_ptr<ArtifactSource> source, const ArtifactOpenOptions& options = {});
  // The artifact in folder `dir` (FolderSource), which must exist.
  static Artifact open(const std::string& dir, const ArtifactOpenOptions& options = {});

  Artifact(Artifact&&) noexcept;
  Artifact& operator=(Artifact&&) noexcept;
  ~Artifact();

  // Where the artifact is, for messages: the folder given to open(), or the source's describe().
  const std::string& dir() const { return dir_; }
  const ArtifactManifest& manifest() const { return manifest_; }
  const std::string& target() const { return manifest_.target; }
  bool encrypted() const { return manifest_.encrypted(); }
  const ArtifactProtections& protections() const { return protections_; }

  // A section other than "weights" (use weights() for those); nullptr if the artifact has none.
  const nlohmann::json* section(std::string_view name) const;
  // Names of the opaque sections, sorted.
  std::vector<std::string> section_names() const;

  const std::vector<WeightShard>& shards() const { return index_.shards; }
  const std::vector<WeightEntry>& weights() const { return index_.tensors; }
  // nullptr if absent.
  const WeightEntry* find_weight(std::string_view name) const;
  // The tensor's little-endian bytes, verified and decrypted; valid as long as this Artifact.
  // Throws websd::Error naming the tensor if absent, or the shard if it fails verification.
  std::span<const std::byte> weight(std::string_view name) const;
  // Reads shard `index` (of shards()) and checks its SHA-256 against the index, decrypting it when
  // encrypted, as the first read of one of its tensors does. Throws websd::Error naming the shard.
  void verify_shard(std::size_t index) const;
  // Drops shard `index`'s bytes: spans from weight() into it become invalid, and its next use reads
  // and verifies it again. With verify_shard, lets a caller hold one shard at a time.
  void release_shard(std::size_t index) const;
  // What loading shards has taken so far (reads, SHA-256 checks, decryption).
  ShardLoadTimes shard_load_times() const;
  // Drops the resident pages of the memory-mapped weight shards (spans from weight() stay valid and
  // read the same bytes); for a runtime that switches to weights in other shards.
  void release_weight_pages() const;

  // The paths of the files the `files` section lists, in its order.
  std::vector<std::string> file_paths() const;
  // The bytes of file `relative` of the `files` section, after checking their size and SHA-256
  // against the manifest. Throws websd::Error naming the file if the manifest lists no such file,
  // or it is missing, truncated or altered.
  std::vector<std::byte> file_bytes(std::string_view relative) const;
  // The path on this machine of listed file `relative`; nullopt when the source has no local files
  // (a browser's fetches). Its contents are not checked here: native code that loads a file by
  // name (dlopen of the kernel library) checks them with file_bytes() too. Throws websd::Error
  // when the manifest lists no such file.
  std::optional<std::string> local_file_path(std::string_view relative) const;

 private:
  Artifact() = default;
  // Throws websd::Error naming the artifact when it has no shard `index`.
  void check_shard_index(std::size_t index) const;

  std::unique_ptr<ArtifactSource> source_;  // before store_, which reads through it
  std::string dir_;
  ArtifactManifest manifest_;
  ArtifactProtections protections_;
  WeightIndex index_;
  std::map<std::string, std::size_t, std::less<>> weight_by_name_;
  std::unique_ptr<WeightShardStore> store_;
};

}  // namespace websd::artifact
