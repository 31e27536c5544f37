// The WebAssembly build has no AES-256-GCM: opening an encrypted artifact fails at once, with or
// without a key, with one error that says so (shard_decryptor_unavailable.cpp), while the same
// artifact's manifest and index stay readable to a tool that allows a missing key.
// The artifact is the fixture's, marked encrypted the way `websd build --encrypt-key-file` marks one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "artifact/artifact.h"
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
  return dir;
}

TEST(ArtifactNoDecryption, OpeningAnEncryptedArtifactSaysThisBuildCannotDecrypt) {
  const std::string dir = encrypted_copy();
  const std::string key_file = dir + "/../key.hex";
  test::write_text(key_file, std::string(64, '1') + "\n");
  for (const auto& key : {std::optional<std::string>(), std::optional<std::string>(key_file)}) {
    const std::string message = test::error_of([&] { Artifact::open(dir, {"cpu", key, false}); });
    EXPECT_EQ(message.rfind("[artifact] " + dir + ": this build cannot decrypt artifact weights; ", 0), 0u) << message;
  }
  const Artifact described = Artifact::open(dir, {"cpu", std::nullopt, true});
  EXPECT_TRUE(described.encrypted());
  EXPECT_NE(test::error_of([&] { described.weight(described.weights().front().name); }).find("no key was given"),
            std::string::npos);
}

}  // namespace
}  // namespace websd::artifact
