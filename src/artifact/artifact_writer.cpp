#include "artifact/artifact_writer.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "artifact/artifact_hex.h"
#include "artifact/artifact_json.h"
#include "artifact/artifact_seal.h"
#include "artifact/sha256.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"

namespace websd::artifact {
namespace fs = std::filesystem;
namespace {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// A directory whose manifest.json carries the artifact magic (any format version).
bool holds_artifact(const fs::path& dir) {
  std::string text;
  try {
    // The manifest holds every launch list: megabytes (an artifact file, not a small config).
    text = input_file_read("artifact", (dir / kManifestFileName).string(), input_kinds::kArtifactFile);
  } catch (const Error&) {
    return false;  // none, or not a file (a FIFO there is not waited on)
  }
  const nlohmann::json manifest = nlohmann::json::parse(text, nullptr, false);
  if (!manifest.is_object()) return false;
  const auto magic = manifest.find("magic");
  return magic != manifest.end() && magic->is_string() && magic->get_ref<const std::string&>() == kArtifactMagic;
}

// A fresh, uniquely named directory beside `dir` (same file system, so renames are atomic).
std::string make_sibling_dir(const std::string& dir, const char* purpose) {
  std::string pattern = dir + ".websd-" + purpose + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error("artifact", dir + ": cannot create a " + purpose + " directory beside it: " + std::strerror(errno) +
                                " (check that the parent folder exists and is writable)");
  }
  return pattern;
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) throw Error("artifact", "the output directory is empty (pass the artifact's path)");
  return dir;
}

// The staging directories of `dir` are named for it, so that a later build finds those a killed one left.
std::string staging_prefix(const std::string& dir) { return fs::path(dir).filename().string() + ".websd-partial-"; }

// Checks the destination and the options, then creates the staging directory with its weights/,
// locked (io/folder_lock.h) for as long as this writer lives.
std::string create_staging_dir(const std::string& dir, const std::string& target, std::uint64_t shard_limit_bytes,
                               FolderLock& lock) {
  if (target.empty()) throw Error("artifact", dir + ": the target is empty (cpu, cuda or webgpu)");
  if (shard_limit_bytes == 0) throw Error("artifact", dir + ": the shard limit is 0 bytes (use at least 1)");
  std::error_code error;
  const fs::file_status status = fs::symlink_status(dir, error);
  if (fs::is_symlink(status)) {
    throw Error("artifact", dir + ": is a symbolic link; websd does not write through links (choose another output)");
  }
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) {
      throw Error("artifact", dir + ": exists and is not a directory; refusing to replace it (choose another output)");
    }
    if (!fs::is_empty(dir, error) && !holds_artifact(dir)) {
      throw Error("artifact", dir +
                                  ": exists and is not a websd artifact; refusing to overwrite it (choose another "
                                  "output or remove it)");
    }
  }
  lock = FolderLock::create((fs::path(dir).parent_path() / (staging_prefix(dir) + "XXXXXX")).string(), "artifact");
  const std::string staging = lock.path();
  fs::create_directory(fs::path(staging) / kWeightsDir, error);
  if (error) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw Error("artifact", staging + ": cannot create weights/: " + error.message());
  }
  return staging;
}

void write_text_file(const std::string& path, const std::string& text) {
  atomic_write_file(path, [&](std::ostream& stream) { stream << text; });
}

}  // namespace

std::vector<std::string> remove_abandoned_staging(const std::string& dir) {
  const std::string out = without_trailing_slashes(dir);
  const fs::path parent = fs::path(out).parent_path();
  return remove_abandoned_folders(parent.empty() ? "." : parent.string(), staging_prefix(out));
}

ArtifactWriter::ArtifactWriter(std::string dir, std::string target, ArtifactWriterOptions options)
    : dir_(without_trailing_slashes(std::move(dir))),
      staging_cleanup_([&] { return create_staging_dir(dir_, target, options.shard_limit_bytes, staging_lock_); }),
      staging_dir_(staging_cleanup_.path()),
      key_(std::move(options.key)),
      signing_key_(std::move(options.signing_key)),
      shards_(staging_dir_ + "/" + std::string(kWeightsDir), options.shard_limit_bytes, key_ ? &key_->bytes : nullptr) {
  manifest_.target = std::move(target);
  manifest_.websd_version = WEBSD_VERSION;
  if (key_) {
    manifest_.encryption = kEncryptionAesGcm;
    manifest_.key_check = artifact_key_check(*key_);
  }
}

ArtifactWriter::~ArtifactWriter() {
  if (finished_) return;
  std::error_code ignored;
  fs::remove_all(staging_dir_, ignored);
}

void ArtifactWriter::check_writable(const char* operation) const {
  if (finished_) throw Error("artifact", dir_ + ": " + operation + " after finish() (the artifact is complete)");
  if (failed_) {
    throw Error("artifact",
                dir_ + ": " + operation + " after an earlier error left the artifact incomplete (start a new writer)");
  }
}

void ArtifactWriter::set_section(const std::string& name, nlohmann::json content) {
  check_writable("set_section");
  if (name.empty() || name == kWeightsSection) {
    throw Error("artifact",
                dir_ + ": section name '" + name + "' is reserved or empty (the container writes 'weights')");
  }
  manifest_.sections[name] = std::move(content);
}

void ArtifactWriter::add_weight(const std::string& name, const Shape& shape, DType dtype,
                                std::span<const std::byte> bytes) {
  check_writable("add_weight");
  try {
    shards_.add(name, shape, dtype, bytes);
  } catch (...) {
    failed_ = true;
    throw;
  }
}

void ArtifactWriter::add_file(const std::string& relative_path, std::span<const std::byte> bytes) {
  check_writable("add_file");
  if (!artifact_file_path_valid(relative_path) || relative_path.rfind(std::string(kWeightsDir) + "/", 0) == 0) {
    throw Error("artifact", dir_ + ": file path " + quote_for_message(relative_path) +
                                " is not a plain relative path outside weights/");
  }
  nlohmann::json& files = manifest_.sections[std::string(kFilesSection)];
  if (!files.is_array()) files = nlohmann::json::array();
  for (const auto& file : files) {
    if (file["path"] == relative_path) throw Error("artifact", dir_ + ": file " + relative_path + " added twice");
  }
  const fs::path path = fs::path(staging_dir_) / relative_path;
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  try {
    atomic_write_file(path.string(), [&](std::ostream& stream) {
      stream.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    });
  } catch (...) {
    failed_ = true;
    throw;
  }
  files.push_back({{"path", relative_path}, {"bytes", bytes.size()}, {"sha256", hex_encode(sha256(bytes))}});
}

void ArtifactWriter::finish() {
  check_writable("finish");
  failed_ = true;  // until the rename below succeeds
  const std::string index_text = weight_index_to_text(shards_.finish());
  write_text_file(staging_dir_ + "/" + std::string(kWeightIndexPath), index_text);
  manifest_.weights_index_sha256 = hex_encode(sha256(index_text));
  manifest_.created = utc_now_iso8601();
  const std::string manifest_text = manifest_to_text(manifest_);
  write_text_file(staging_dir_ + "/" + std::string(kManifestFileName), manifest_text);
  ArtifactSeal seal;
  seal.manifest_sha256 = sha256(manifest_text);
  if (key_) seal.manifest_hmac = hmac_sha256(key_->bytes, seal_message(manifest_text));
  if (signing_key_) {
    seal.signature = ArtifactSignature{signing_key_->public_key(), signing_key_->sign(seal_message(manifest_text))};
  }
  write_text_file(staging_dir_ + "/" + std::string(kSealFileName), seal_to_text(seal));
  commit_staging();
  failed_ = false;
  finished_ = true;
}

// Moves the staging directory to dir_; a previous artifact there is moved aside first and deleted
// after, or put back if the move fails.
void ArtifactWriter::commit_staging() {
  std::error_code error;
  std::string previous;
  if (fs::exists(dir_, error)) {
    previous = make_sibling_dir(dir_, "previous");
    fs::rename(dir_, previous, error);  // replaces the empty directory just made
    if (error) {
      fs::remove(previous, error);
      throw Error("artifact", dir_ + ": cannot move the previous artifact aside: " + error.message());
    }
  }
  fs::rename(staging_dir_, dir_, error);
  if (error) {
    const std::string reason = error.message();
    if (!previous.empty()) fs::rename(previous, dir_, error);
    throw Error("artifact", dir_ + ": cannot move the new artifact into place: " + reason);
  }
  if (!previous.empty()) fs::remove_all(previous, error);
}

}  // namespace websd::artifact
