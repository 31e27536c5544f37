#include "artifact/artifact.h"

#include <sys/stat.h>

#include <algorithm>

#include "artifact/artifact_decryptor.h"
#include "artifact/artifact_hex.h"
#include "artifact/artifact_json.h"
#include "artifact/artifact_seal.h"
#include "artifact/artifact_signature.h"
#include "artifact/sha256.h"
#include "artifact/weight_shard_store.h"
#include "core/error.h"

namespace websd::artifact {
namespace {

// Far above any real manifest or index; refuses to read a huge file into memory.
constexpr std::uint64_t kMaxJsonFileBytes = 256ull << 20;
constexpr const char* kNotArtifactFix = "not a websd artifact: point at a directory written by 'websd build'";
constexpr const char* kIncompleteFix = "the artifact is incomplete: copy the whole directory again or rebuild it";
constexpr const char* kEditedManifestFix = "the manifest was edited or is corrupt: rebuild the artifact";
constexpr const char* kCopyAgainFix = "copy the artifact again from its source, or rebuild it";

struct ListedFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::string sha256;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error("artifact", path + ": " + what);
}

// The SHA-256 of `bytes`, which the last read of `relative` from `source` returned: the source's
// own where it hashed them as it read (natively; ArtifactSource::read_digest says why that is
// trusted), else computed here. SD 1.5's 6 MB manifest and 2.5 MB of kernels took 0.15-0.3 s to
// hash in WebAssembly at every load.
Sha256Digest read_sha256(const ArtifactSource& source, std::string_view relative, std::span<const std::byte> bytes) {
  if (std::optional<Sha256Digest> given = source.read_digest(relative)) return *given;
  return sha256(bytes);
}

// Compares MACs in time that does not depend on where they differ.
bool same_mac(const Sha256Digest& a, const Sha256Digest& b) {
  std::uint8_t difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= a[i] ^ b[i];
  return difference == 0;
}

std::string read_json_file(const ArtifactSource& source, std::string_view relative, const std::string& missing_fix) {
  const auto size = source.size(relative);
  if (!size) fail(source.where(relative), "missing (" + missing_fix + ")");
  if (*size > kMaxJsonFileBytes) {
    fail(source.where(relative),
         std::to_string(*size) + " bytes, more than any artifact file holds (" + missing_fix + ")");
  }
  const std::vector<std::byte> bytes = source.read(relative);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// seal.json, checked to be the seal of `manifest_text`. An artifact without one is refused with
// what its manifest says it is (not an artifact, a format older or newer than this websd reads).
ArtifactSeal read_seal(const ArtifactSource& source, const std::string& manifest_text) {
  if (!source.size(kSealFileName)) {
    parse_manifest(manifest_text, source.where(kManifestFileName));
    fail(source.where(kSealFileName),
         "missing: nothing vouches for the manifest (" + std::string(kIncompleteFix) + ")");
  }
  ArtifactSeal seal = parse_seal(read_json_file(source, kSealFileName, kIncompleteFix), source.where(kSealFileName));
  const std::string digest = hex_encode(read_sha256(
      source, kManifestFileName, std::as_bytes(std::span<const char>(manifest_text.data(), manifest_text.size()))));
  if (digest != hex_encode(seal.manifest_sha256)) {
    fail(source.where(kManifestFileName), "checksum mismatch: SHA-256 " + digest + ", the seal says " +
                                              hex_encode(seal.manifest_sha256) +
                                              " (the manifest was edited or is corrupt: " + kCopyAgainFix + ")");
  }
  return seal;
}

// The seal's signature against the manifest, and its signer against the trusted keys. Without
// trusted keys, a signature is checked against the key it names: that finds corruption, not forgery.
void check_signature(const ArtifactSource& source, const ArtifactSeal& seal, const std::string& manifest_text,
                     const std::vector<std::string>& trust_key_files, ArtifactProtections& protections) {
  std::vector<Ed25519PublicKey> trusted;
  std::string trusted_names;
  for (const std::string& file : trust_key_files) {
    trusted.push_back(read_trust_key(file));
    trusted_names += (trusted_names.empty() ? "" : ", ") + public_key_fingerprint(trusted.back()) + " (" + file + ")";
  }
  if (seal.signature) protections.signer = public_key_fingerprint(seal.signature->public_key);
  if (!trusted.empty()) {
    if (!seal.signature) {
      fail(source.describe(), "is not signed, and --trust-key accepts only artifacts signed by " + trusted_names +
                                  " (sign it with 'websd build --sign-key K')");
    }
    if (std::find(trusted.begin(), trusted.end(), seal.signature->public_key) == trusted.end()) {
      fail(source.describe(),
           "is signed by " + *protections.signer + ", which is not a trusted key (--trust-key: " + trusted_names + ")");
    }
    protections.signer_trusted = true;
  }
  if (!seal.signature || !signature_checks_available()) return;
  if (!ed25519_verify(seal.signature->public_key, seal_message(manifest_text), seal.signature->value)) {
    fail(source.where(kSealFileName), "the signature by " + *protections.signer +
                                          " does not match the manifest (the manifest or the signature was changed "
                                          "after signing: " +
                                          kCopyAgainFix + ")");
  }
  protections.signature_checked = true;
}

// A seal carries a manifest HMAC exactly when the manifest says the artifact is encrypted.
void check_seal_matches_encryption(const ArtifactSource& source, const ArtifactManifest& manifest,
                                   const ArtifactSeal& seal) {
  if (seal.manifest_hmac.has_value() == manifest.encrypted()) return;
  fail(source.where(kSealFileName), std::string(manifest.encrypted() ? "holds no" : "holds a") +
                                        " manifest HMAC but the manifest says encryption '" + manifest.encryption +
                                        "' (" + kEditedManifestFix + ")");
}

// An encrypted artifact's manifest HMAC under its key: only someone holding the key can change
// the manifest. Without the key (inspect), it stays unchecked.
void check_key_authentication(const ArtifactSource& source, const ArtifactSeal& seal,
                              const ArtifactDecryptor* decryptor, const std::string& manifest_text,
                              ArtifactProtections& protections) {
  if (decryptor == nullptr) return;
  if (!same_mac(decryptor->authenticate(seal_message(manifest_text)), *seal.manifest_hmac)) {
    fail(source.where(kManifestFileName),
         "was changed by someone without the artifact's key: its HMAC under the key does not match the seal (" +
             std::string(kCopyAgainFix) + ")");
  }
  protections.key_authenticated = true;
}

void check_dir(const std::string& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) fail(dir, "no such directory (" + std::string(kNotArtifactFix) + ")");
  if (!S_ISDIR(info.st_mode)) fail(dir, "is a file, not an artifact directory (" + std::string(kNotArtifactFix) + ")");
}

void check_target(const std::string& dir, const ArtifactManifest& manifest, const std::vector<std::string>& expected) {
  if (expected.empty() || std::find(expected.begin(), expected.end(), manifest.target) != expected.end()) return;
  std::string runs;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    runs += (i == 0 ? "'" : i + 1 == expected.size() ? " or '" : ", '") + expected[i] + "'";
  }
  fail(dir, "wrong target: the artifact is built for " + quote_for_message(manifest.target) + ", this runtime runs " +
                runs + " (build one with 'websd build --target " + expected[0] + "')");
}

// The index's bytes against the manifest's digest of them, before they are parsed.
void check_index_digest(const std::string& path, const std::string& text, const ArtifactManifest& manifest) {
  const std::string digest = hex_encode(sha256(text));
  if (digest != manifest.weights_index_sha256) {
    fail(path, "checksum mismatch: SHA-256 " + digest + ", the manifest says " + manifest.weights_index_sha256 +
                   " (the index is corrupt or edited: copy the artifact again or rebuild it)");
  }
}

void check_index_encryption(const std::string& path, const ArtifactManifest& manifest, const WeightIndex& index) {
  for (const WeightShard& shard : index.shards) {
    if (shard.iv.has_value() != manifest.encrypted()) {
      fail(path, "shard " + shard.file + (manifest.encrypted() ? " lacks" : " has") +
                     " an iv and tag but the manifest says encryption '" + manifest.encryption +
                     "' (the artifact was edited: rebuild it)");
    }
  }
}

void check_shard_files(const ArtifactSource& source, const WeightIndex& index) {
  for (const WeightShard& shard : index.shards) {
    const std::string relative = std::string(kWeightsDir) + "/" + shard.file;
    const auto size = source.size(relative);
    if (!size) fail(source.where(relative), "missing shard (" + std::string(kIncompleteFix) + ")");
    if (*size < shard.bytes) {
      fail(source.where(relative), "truncated shard: expected " + std::to_string(shard.bytes) + " bytes, found " +
                                       std::to_string(*size) + " (" + kIncompleteFix + ")");
    }
    if (*size > shard.bytes) {
      fail(source.where(relative), "shard is larger than the index says: expected " + std::to_string(shard.bytes) +
                                       " bytes, found " + std::to_string(*size) +
                                       " (the file was altered: copy the artifact again or rebuild it)");
    }
  }
}

// The decryptor of an encrypted artifact; nullptr for a plain one, or when the key may be missing.
std::unique_ptr<ArtifactDecryptor> open_decryptor(const std::string& dir, const ArtifactManifest& manifest,
                                                  const ArtifactOpenOptions& options) {
  if (!manifest.encrypted()) {
    if (options.key_file) {
      fail(dir, "a key was given (" + *options.key_file +
                    ") but the artifact is not encrypted (leave out --key-file; build with --encrypt-key-file to "
                    "encrypt it)");
    }
    return nullptr;
  }
  if (!options.key_file && options.allow_missing_key) return nullptr;
  return open_artifact_decryptor(dir, options.key_file, manifest.key_check);
}

// The `files` section's entries, checked for shape: [{path, bytes, sha256}].
std::vector<ListedFile> listed_files(const std::string& dir, const ArtifactManifest& manifest) {
  std::vector<ListedFile> files;
  const auto section = manifest.sections.find(kFilesSection);
  if (section == manifest.sections.end()) return files;
  const JsonFieldReader reader(dir + "/" + std::string(kManifestFileName), kEditedManifestFix);
  if (!section->is_array()) reader.fail("files is " + json_kind(*section) + ", expected a list");
  for (std::size_t i = 0; i < section->size(); ++i) {
    const std::string where = "files[" + std::to_string(i) + "]";
    ListedFile file{reader.string((*section)[i], "path", where), reader.unsigned_integer((*section)[i], "bytes", where),
                    reader.string((*section)[i], "sha256", where)};
    if (!artifact_file_path_valid(file.path)) reader.fail(where + ".path is not a plain relative path");
    files.push_back(std::move(file));
  }
  return files;
}

// Presence and size of every listed file; their SHA-256 is checked when one is used.
void check_listed_files(const ArtifactSource& source, const ArtifactManifest& manifest) {
  const std::string dir = source.describe();
  for (const ListedFile& file : listed_files(dir, manifest)) {
    const auto size = source.size(file.path);
    if (!size) fail(dir, "missing file " + file.path + " (" + std::string(kIncompleteFix) + ")");
    if (*size != file.bytes) {
      fail(dir, "file " + file.path + " has " + std::to_string(*size) + " bytes, the manifest says " +
                    std::to_string(file.bytes) + " (truncated or replaced: " + std::string(kIncompleteFix) + ")");
    }
  }
}

}  // namespace

std::vector<std::string> Artifact::file_paths() const {
  std::vector<std::string> paths;
  for (ListedFile& file : listed_files(dir_, manifest_)) paths.push_back(std::move(file.path));
  return paths;
}

std::vector<std::byte> Artifact::file_bytes(std::string_view relative) const {
  for (const ListedFile& file : listed_files(dir_, manifest_)) {
    if (file.path != relative) continue;
    std::vector<std::byte> bytes = source_->read(file.path);
    if (bytes.size() != file.bytes)
      fail(dir_, "file " + file.path + " is truncated (" + std::string(kIncompleteFix) + ")");
    if (hex_encode(read_sha256(*source_, file.path, bytes)) != file.sha256) {
      fail(dir_,
           "checksum mismatch in file " + file.path + " (altered or corrupt: " + std::string(kIncompleteFix) + ")");
    }
    return bytes;
  }
  fail(dir_, "lists no file " + std::string(relative) + " (built by an older websd? rebuild the artifact)");
}

std::optional<std::string> Artifact::local_file_path(std::string_view relative) const {
  const std::vector<std::string> paths = file_paths();
  if (std::find(paths.begin(), paths.end(), relative) == paths.end()) {
    fail(dir_, "lists no file " + std::string(relative) + " (built by an older websd? rebuild the artifact)");
  }
  return source_->local_path(relative);
}

Artifact Artifact::open(const std::string& dir, const ArtifactOpenOptions& options) {
  check_dir(dir);
  return open(std::make_unique<FolderSource>(dir), options);
}

Artifact Artifact::open(std::unique_ptr<ArtifactSource> source, const ArtifactOpenOptions& options) {
  Artifact artifact;
  artifact.dir_ = source->describe();
  const ArtifactSource& files = *source;
  artifact.source_ = std::move(source);
  const std::string& dir = artifact.dir_;
  if (!files.size(kManifestFileName)) fail(dir, "no manifest.json (" + std::string(kNotArtifactFix) + ")");
  // The manifest's bytes are authenticated before they are parsed.
  const std::string manifest_text = read_json_file(files, kManifestFileName, kNotArtifactFix);
  const ArtifactSeal seal = read_seal(files, manifest_text);
  artifact.protections_.manifest_sha256 = hex_encode(seal.manifest_sha256);
  check_signature(files, seal, manifest_text, options.trust_key_files, artifact.protections_);
  artifact.manifest_ = parse_manifest(manifest_text, files.where(kManifestFileName));
  check_target(dir, artifact.manifest_, options.expected_targets);
  check_seal_matches_encryption(files, artifact.manifest_, seal);
  std::unique_ptr<ArtifactDecryptor> decryptor = open_decryptor(dir, artifact.manifest_, options);
  check_key_authentication(files, seal, decryptor.get(), manifest_text, artifact.protections_);

  const std::string index_text = read_json_file(files, kWeightIndexPath, kIncompleteFix);
  check_index_digest(files.where(kWeightIndexPath), index_text, artifact.manifest_);
  artifact.index_ = parse_weight_index(index_text, files.where(kWeightIndexPath));
  check_index_encryption(files.where(kWeightIndexPath), artifact.manifest_, artifact.index_);
  check_shard_files(files, artifact.index_);

  for (std::size_t i = 0; i < artifact.index_.tensors.size(); ++i) {
    artifact.weight_by_name_.emplace(artifact.index_.tensors[i].name, i);
  }
  artifact.store_ = std::make_unique<WeightShardStore>(files, artifact.index_.shards, std::move(decryptor));
  check_listed_files(files, artifact.manifest_);
  return artifact;
}

Artifact::Artifact(Artifact&&) noexcept = default;
Artifact& Artifact::operator=(Artifact&&) noexcept = default;
Artifact::~Artifact() = default;

const nlohmann::json* Artifact::section(std::string_view name) const {
  const auto it = manifest_.sections.find(name);
  return it == manifest_.sections.end() ? nullptr : &*it;
}

std::vector<std::string> Artifact::section_names() const {
  std::vector<std::string> names;
  for (const auto& [name, content] : manifest_.sections.items()) names.push_back(name);
  return names;
}

const WeightEntry* Artifact::find_weight(std::string_view name) const {
  const auto it = weight_by_name_.find(name);
  return it == weight_by_name_.end() ? nullptr : &index_.tensors[it->second];
}

std::span<const std::byte> Artifact::weight(std::string_view name) const {
  const WeightEntry* entry = find_weight(name);
  if (entry == nullptr) {
    fail(dir_, "no weight named " + std::string(name.substr(0, 160)) + " (the artifact holds " +
                   std::to_string(index_.tensors.size()) + " weights; see 'websd inspect')");
  }
  return store_->shard_bytes(entry->shard).subspan(entry->offset, entry->bytes);
}

void Artifact::check_shard_index(std::size_t index) const {
  if (index >= index_.shards.size()) {
    fail(dir_,
         "has no weight shard " + std::to_string(index) + " (it has " + std::to_string(index_.shards.size()) + ")");
  }
}

void Artifact::verify_shard(std::size_t index) const {
  check_shard_index(index);
  store_->shard_bytes(index);
}

ShardLoadTimes Artifact::shard_load_times() const { return store_->load_times(); }

void Artifact::release_shard(std::size_t index) const {
  check_shard_index(index);
  store_->release_shard(index);
}

void Artifact::release_weight_pages() const { store_->release_resident_pages(); }

}  // namespace websd::artifact
