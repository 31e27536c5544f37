// fuzz_artifact_open (fuzz_entries.h): Artifact::open over an artifact held in memory, with the
// harness's own Ed25519 signing key and AES key in scratch files.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "artifact/artifact_crypto.h"
#include "artifact/artifact_key.h"
#include "artifact/artifact_seal.h"
#include "artifact/artifact_signing_key.h"
#include "artifact/sha256.h"
#include "fuzz_entries.h"
#include "support/signing_key_files.h"

namespace websd::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr std::uint8_t kTrustTheHarnessKey = 1;
constexpr std::uint8_t kSealLikeTheWriter = 2;
constexpr std::uint8_t kOpenWithTheHarnessAesKey = 4;
constexpr std::size_t kShardBytes = 256;

void expect(bool holds, const std::string& what) {
  if (!holds) throw FuzzInvariantError(what);
}

// The files of one artifact in memory. Read-only after construction, so concurrent reads are safe.
class MemorySource final : public artifact::ArtifactSource {
 public:
  explicit MemorySource(std::map<std::string, std::string, std::less<>> files) : files_(std::move(files)) {}

  std::string describe() const override { return "fuzz"; }
  std::optional<std::uint64_t> size(std::string_view relative_path) const override {
    const auto file = files_.find(relative_path);
    if (file == files_.end()) return std::nullopt;
    return file->second.size();
  }
  std::vector<std::byte> read(std::string_view relative_path) const override {
    const auto file = files_.find(relative_path);
    if (file == files_.end()) throw Error("fuzz", where(relative_path) + ": no such file");
    const auto bytes = std::as_bytes(std::span(file->second));
    return {bytes.begin(), bytes.end()};
  }

 private:
  std::map<std::string, std::string, std::less<>> files_;
};

// The harness's keys, written once per process into a scratch folder removed at exit.
struct HarnessKeys {
  HarnessKeys() : folder(fs::temp_directory_path() / ("websd-fuzz-keys-" + std::to_string(::getpid()))) {
    fs::create_directories(folder);
    pem = test::write_signing_key_files(folder.string(), 7);
    signing = std::make_unique<artifact::ArtifactSigningKey>(artifact::ArtifactSigningKey::read(pem.private_pem));
    for (std::size_t i = 0; i < aes.bytes.size(); ++i) aes.bytes[i] = static_cast<std::uint8_t>(0xa0 + i);
    aes_file = (folder / "aes.key").string();
    std::FILE* file = std::fopen(aes_file.c_str(), "wb");
    std::fwrite(aes.bytes.data(), 1, aes.bytes.size(), file);
    std::fclose(file);
  }
  ~HarnessKeys() {
    std::error_code ignored;
    fs::remove_all(folder, ignored);
  }
  HarnessKeys(const HarnessKeys&) = delete;
  HarnessKeys& operator=(const HarnessKeys&) = delete;

  fs::path folder;
  test::SigningKeyFiles pem;
  std::unique_ptr<artifact::ArtifactSigningKey> signing;
  artifact::ArtifactKey aes;
  std::string aes_file;
};

const HarnessKeys& harness_keys() {
  static const HarnessKeys keys;
  return keys;
}

// The seal `websd build --sign-key` writes for `manifest`, with the HMAC under the harness's AES
// key when the manifest claims encryption (a claim the reader checks against the seal).
std::string seal_like_the_writer(const std::string& manifest) {
  const HarnessKeys& keys = harness_keys();
  artifact::ArtifactSeal seal;
  seal.manifest_sha256 = artifact::sha256(manifest);
  const std::string message = artifact::seal_message(manifest);
  if (manifest.find("\"aes-256-gcm\"") != std::string::npos) {
    seal.manifest_hmac = artifact::hmac_sha256(keys.aes.bytes, message);
  }
  seal.signature = artifact::ArtifactSignature{keys.signing->public_key(), keys.signing->sign(message)};
  return artifact::seal_to_text(seal);
}

// `count` parts separated by NUL bytes; the last part takes the rest, missing parts are empty.
std::vector<std::string> split_parts(std::string_view text, std::size_t count) {
  std::vector<std::string> parts;
  while (parts.size() + 1 < count) {
    const std::size_t nul = text.find('\0');
    if (nul == std::string_view::npos) break;
    parts.emplace_back(text.substr(0, nul));
    text.remove_prefix(nul + 1);
  }
  parts.emplace_back(text);
  parts.resize(count);
  return parts;
}

// What open() promised about an artifact it accepted.
void check_accepted(const artifact::Artifact& opened, const std::string& manifest, const std::string& seal_text,
                    std::uint8_t flags) {
  const artifact::ArtifactSeal seal = artifact::parse_seal(seal_text, "fuzz/seal.json");
  expect(seal.manifest_sha256 == artifact::sha256(manifest),
         "an artifact opened whose seal does not hold its manifest's SHA-256");
  const artifact::ArtifactProtections& protections = opened.protections();
  if (flags & kTrustTheHarnessKey) {
    expect(protections.signer_trusted && protections.signature_checked && seal.signature &&
               seal.signature->public_key == harness_keys().signing->public_key(),
           "an artifact opened with --trust-key that the trusted key did not sign");
  }
  if (opened.encrypted() && (flags & kOpenWithTheHarnessAesKey)) {
    expect(protections.key_authenticated, "an encrypted artifact opened with its key without checking the HMAC");
  }
  for (const artifact::WeightEntry& entry : opened.weights()) {
    try {
      expect(opened.weight(entry.name).size() == entry.bytes, "a weight read with another size than its entry's");
    } catch (const Error&) {
      // A shard that fails its checksum or decryption is refused, as it should be.
    }
  }
  for (const std::string& path : opened.file_paths()) {
    try {
      opened.file_bytes(path);
    } catch (const Error&) {
      // Likewise a listed file that fails its checks.
    }
  }
}

}  // namespace

void fuzz_artifact_open(FuzzInput data) {
  if (data.empty()) return;
  const std::uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data.data() + 1), data.size() - 1);
  std::vector<std::string> parts = split_parts(text, 3);
  const std::string& manifest = parts[0];
  if (flags & kSealLikeTheWriter) parts[1] = seal_like_the_writer(manifest);
  std::string shard(kShardBytes, '\0');
  for (std::size_t i = 0; i < shard.size(); ++i) shard[i] = static_cast<char>(i);
  std::map<std::string, std::string, std::less<>> files = {{"manifest.json", manifest},
                                                           {"seal.json", parts[1]},
                                                           {"weights/index.json", parts[2]},
                                                           {"weights/shard-00000.bin", shard},
                                                           {"model/file.txt", "websd\n"}};
  artifact::ArtifactOpenOptions options;
  if (flags & kTrustTheHarnessKey) options.trust_key_files = {harness_keys().pem.public_pem};
  if (flags & kOpenWithTheHarnessAesKey) {
    options.key_file = harness_keys().aes_file;
  } else {
    options.allow_missing_key = true;
  }
  const artifact::Artifact opened = artifact::Artifact::open(std::make_unique<MemorySource>(std::move(files)), options);
  check_accepted(opened, manifest, parts[1], flags);
}

}  // namespace websd::fuzz
