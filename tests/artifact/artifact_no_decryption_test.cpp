// The WebAssembly build has no AES-256-GCM and no Ed25519: opening an encrypted artifact fails at
// once, with or without a key, with one error that says so (artifact_decryptor_unavailable.cpp),
// while the same artifact's manifest and index stay readable to a tool that allows a missing key;
// a trust key is refused the same way (artifact_signature_unavailable.cpp).
// The artifact is the fixture's, marked encrypted the way `websd build --encrypt-key-file` marks one
// (its seal carries a manifest HMAC, which this build cannot check either).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "artifact/artifact.h"
#include "artifact/artifact_seal.h"
#include "artifact_file_edits.h"
#include "fixture_artifact.h"
#include "support/fixtures.h"

namespace websd::artifact {
namespace {

std::string encrypted_copy() {
  const std::string dir = test::make_temp_dir("artifact-no-decryption") + "/art";
  std::filesystem::copy(test::fixture_cpu_artifact(), dir, std::filesystem::copy_options::recursive);
  test::edit_index_consistently(dir, [](nlohmann::json& index) {
    for (nlohmann::json& shard : index["shards"]) {
      shard["iv"] = std::string(24, '0');
      shard["tag"] = std::string(32, '0');
    }
  });
  test::edit_manifest(dir, [](nlohmann::json& manifest) {
    manifest["encryption"] = "aes-256-gcm";
    manifest["key_check"] = "hmac-sha256:" + std::string(64, '0');
  });
  const std::string seal_path = dir + "/" + std::string(kSealFileName);
  ArtifactSeal seal = parse_seal(test::read_text(seal_path), seal_path);
  seal.manifest_hmac = Sha256Digest{};
  test::write_text(seal_path, seal_to_text(seal));
  return dir;
}

TEST(ArtifactNoDecryption, OpeningAnEncryptedArtifactSaysThisBuildCannotDecrypt) {
  const std::string dir = encrypted_copy();
  const std::string key_file = dir + "/../key.hex";
  test::write_text(key_file, std::string(64, '1') + "\n");
  for (const auto& key : {std::optional<std::string>(), std::optional<std::string>(key_file)}) {
    ArtifactOpenOptions options = ArtifactOpenOptions::for_target("cpu");
    options.key_file = key;
    const std::string message = test::error_of([&] { Artifact::open(dir, options); });
    EXPECT_EQ(message.rfind("[artifact] " + dir + ": this build cannot decrypt artifact weights; ", 0), 0u) << message;
  }
  ArtifactOpenOptions describe_only = ArtifactOpenOptions::for_target("cpu");
  describe_only.allow_missing_key = true;
  const Artifact described = Artifact::open(dir, describe_only);
  EXPECT_TRUE(described.encrypted());
  EXPECT_NE(test::error_of([&] { described.weight(described.weights().front().name); }).find("no key was given"),
            std::string::npos);
}

// Nor has it Ed25519: a trust key is refused with one error that says so, never skipped.
TEST(ArtifactNoDecryption, ATrustKeyIsRefusedInABuildThatCannotCheckSignatures) {
  ArtifactOpenOptions options = ArtifactOpenOptions::for_target("cpu");
  options.trust_key_files = {test::fixture_cpu_artifact() + "/manifest.json"};
  const std::string message = test::error_of([&] { Artifact::open(test::fixture_cpu_artifact(), options); });
  EXPECT_NE(message.find("this build cannot check artifact signatures"), std::string::npos) << message;
}

}  // namespace
}  // namespace websd::artifact
