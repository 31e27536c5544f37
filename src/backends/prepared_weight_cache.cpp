#include "backends/prepared_weight_cache.h"

#include <signal.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include "artifact/artifact_hex.h"
#include "artifact/sha256.h"
#include "backends/component_digest.h"
#include "core/byte_size_text.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/user_cache_dir.h"

namespace websd::backends {
namespace fs = std::filesystem;
namespace {

constexpr const char* kExtension = ".wpw";
constexpr const char* kTempMarker = ".wpw.tmp-";  // atomic_write_file's temporary files: <path>.tmp-<pid>
constexpr std::uint64_t kDiskMargin = 1ull << 30;

// A file name from text of any length: the first 40 hex digits of its SHA-256.
std::string hashed_name(const std::string& text) {
  return artifact::hex_encode(artifact::sha256(std::string_view(text))).substr(0, 40);
}

bool is_hex_digest(const std::string& text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<std::uint64_t> parse_bytes(const std::string& text) {
  if (text.empty() || text.size() > 24) return std::nullopt;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  const std::string unit = text.substr(digits);
  int shift = 0;
  if (unit == "K" || unit == "KiB")
    shift = 10;
  else if (unit == "M" || unit == "MiB")
    shift = 20;
  else if (unit == "G" || unit == "GiB")
    shift = 30;
  else if (unit == "T" || unit == "TiB")
    shift = 40;
  else if (!unit.empty() && unit != "B")
    return std::nullopt;
  errno = 0;
  const unsigned long long value = std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
  if (errno != 0 || value > (~0ull >> shift)) return std::nullopt;
  return static_cast<std::uint64_t>(value) << shift;
}

// For a temporary file of atomic_write_file (<name>.wpw.tmp-<pid>): whether its writer has ended
// (it will never be renamed into place). nullopt for any other file.
std::optional<bool> abandoned_write(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::size_t marker = name.rfind(kTempMarker);
  if (marker == std::string::npos) return std::nullopt;
  const std::string pid_text = name.substr(marker + std::string(kTempMarker).size());
  if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return ::kill(static_cast<pid_t>(std::stol(pid_text)), 0) != 0 && errno == ESRCH;
}

}  // namespace

PreparedWeightCache::PreparedWeightCache(PreparedWeightCacheOptions options) : options_(std::move(options)) {}

std::string PreparedWeightCache::default_dir() {
  return (fs::path(
              user_cache_dir("the prepared-weight cache", "set one of them to keep prepared weights across runs")) /
          "prepared-weights")
      .string();
}

std::uint64_t PreparedWeightCache::default_max_bytes() {
  const char* text = std::getenv("WEBSD_WEIGHT_CACHE_MAX");
  if (text == nullptr || *text == '\0') return kDefaultMaxBytes;
  const std::optional<std::uint64_t> bytes = parse_bytes(text);
  if (!bytes) {
    throw Error("cache", std::string("WEBSD_WEIGHT_CACHE_MAX='") + text +
                             "' is not a size (expected bytes, or a number with K, M, G or T: 16G)");
  }
  return *bytes;
}

void PreparedWeightCache::notice(const std::string& line) {
  if (!options_.notice) return;
  const std::lock_guard lock(notice_mutex_);
  options_.notice(line);
}

std::string PreparedWeightCache::file_path(const std::string& digest, const std::string& signature) const {
  return (fs::path(options_.dir) / (hashed_name(digest + "\n" + signature) + kExtension)).string();
}

std::string PreparedWeightCache::digest_of(const CheckpointComponent& component) {
  const std::string identity = component_file_identity(component);
  const fs::path memo = fs::path(options_.dir) / "identities" / hashed_name(identity);
  std::error_code error;
  if (fs::symlink_status(memo, error).type() != fs::file_type::not_found) {
    try {
      std::string digest = input_file_read("cache", memo.string(), input_kinds::kCacheRecord);
      if (!digest.empty() && digest.back() == '\n') digest.pop_back();
      if (is_hex_digest(digest)) return digest;
    } catch (const Error& failure) {  // not a file websd wrote (a FIFO, a folder): computed again, replaced
      notice("prepared-weight cache: " + failure.message() + "; computing the digest again");
      fs::remove_all(memo, error);
    }
  }
  const std::string digest = component_content_digest(component);
  fs::create_directories(memo.parent_path(), error);
  try {
    atomic_write_file(memo.string(), [&](std::ostream& out) { out << digest << "\n"; });
  } catch (const Error& failure) {
    notice("prepared-weight cache: cannot keep the digest of " + component.name() + ": " + failure.message());
  }
  return digest;
}

std::shared_ptr<const PreparedWeightFile> PreparedWeightCache::open(const std::string& digest,
                                                                    const std::string& signature, bool release_pages) {
  const std::string path = file_path(digest, signature);
  std::error_code error;
  if (!fs::exists(path, error)) return nullptr;
  std::string problem;
  try {
    std::shared_ptr<const PreparedWeightFile> file = PreparedWeightFile::open(path);
    if (file->header().digest != digest || file->header().signature != signature) {
      problem = "it holds other weights than its name says";
    } else if (const std::optional<std::string> failed = file->verify(release_pages)) {
      problem = "a weight fails its checksum: damaged";
    } else {
      fs::last_write_time(path, fs::file_time_type::clock::now(), error);  // least recently used goes first
      return file;
    }
  } catch (const Error& failure) {
    problem = failure.message();
  }
  fs::remove(path, error);
  notice("prepared-weight cache: removed " + path + " (" + problem + "); preparing the weights from the checkpoint");
  return nullptr;
}

void PreparedWeightCache::store(const PreparedWeightsHeader& header, const std::vector<PreparedWeightData>& weights) {
  // Runs on a writer thread of its own: nothing may escape it.
  try {
    store_file(header, weights);
  } catch (const std::exception& failure) {
    notice(std::string("prepared-weight cache: not keeping the ") + header.component + " weights: " + failure.what());
  }
}

void PreparedWeightCache::store_file(const PreparedWeightsHeader& header,
                                     const std::vector<PreparedWeightData>& weights) {
  const std::string path = file_path(header.digest, header.signature);
  const std::uint64_t bytes = prepared_weight_file_bytes(header, weights);
  if (bytes > options_.max_bytes) {
    notice("prepared-weight cache: not keeping the " + human_bytes(bytes) + " of " + header.component +
           " weights: the cache is bounded to " + human_bytes(options_.max_bytes) + " (WEBSD_WEIGHT_CACHE_MAX)");
    return;
  }
  std::error_code error;
  fs::create_directories(options_.dir, error);
  sweep_abandoned_writes();
  struct statvfs disk {};
  if (::statvfs(options_.dir.c_str(), &disk) == 0 &&
      static_cast<std::uint64_t>(disk.f_bavail) * disk.f_frsize < bytes + kDiskMargin) {
    notice("prepared-weight cache: not keeping the " + human_bytes(bytes) + " of " + header.component +
           " weights: " + options_.dir + " has less free space than that and 1 GiB to spare");
    return;
  }
  try {
    write_prepared_weight_file(path, header, weights);
  } catch (const Error& failure) {
    notice("prepared-weight cache: " + failure.message());
    return;
  }
  evict(path);
}

std::vector<PreparedWeightListing> PreparedWeightCache::list() const {
  std::vector<PreparedWeightListing> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(options_.dir, error)) {
    if (entry.path().extension() != kExtension || !entry.is_regular_file(error)) continue;
    PreparedWeightListing listing;
    listing.path = entry.path().string();
    listing.bytes = entry.file_size(error);
    listing.last_used = entry.last_write_time(error);
    try {
      const std::shared_ptr<const PreparedWeightFile> file = PreparedWeightFile::open(listing.path);
      listing.component = file->header().component;
      listing.source = file->header().source;
    } catch (const Error& failure) {
      listing.problem = failure.message();
    }
    files.push_back(std::move(listing));
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.last_used < b.last_used; });
  return files;
}

std::uint64_t PreparedWeightCache::clear() {
  std::uint64_t freed = 0;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(options_.dir, error)) {
    if (!entry.is_regular_file(error) || abandoned_write(entry.path()) == false) continue;  // a live writer's
    const std::uint64_t bytes = entry.file_size(error);
    if (fs::remove(entry.path(), error)) freed += bytes;
  }
  fs::remove_all(fs::path(options_.dir) / "identities", error);
  return freed;
}

void PreparedWeightCache::evict(const std::string& keep) {
  std::vector<PreparedWeightListing> files = list();
  std::uint64_t total = 0;
  for (const auto& file : files) total += file.bytes;
  for (const auto& file : files) {
    if (total <= options_.max_bytes) break;
    if (file.path == keep) continue;
    std::error_code error;
    if (fs::remove(file.path, error)) {
      total -= file.bytes;
      notice("prepared-weight cache: removed the least recently used " + human_bytes(file.bytes) + " (" +
             (file.component.empty() ? file.path : file.component + " of " + file.source) + ") to stay within " +
             human_bytes(options_.max_bytes));
    }
  }
}

void PreparedWeightCache::sweep_abandoned_writes() {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(options_.dir, error)) {
    if (abandoned_write(entry.path()) == true) fs::remove(entry.path(), error);
  }
}

}  // namespace websd::backends
