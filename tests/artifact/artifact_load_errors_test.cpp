// Every way loading an artifact can fail, each built in a temp dir from a good artifact, and each
// reported as one line that says which case it is.
#include <gtest/gtest.h>

#include <filesystem>

#include "artifact/artifact.h"
#include "artifact/artifact_crypto.h"
#include "artifact/artifact_seal.h"
#include "artifact_test_support.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using artifact::Artifact;
using artifact::ArtifactOpenOptions;

std::string sample_dir(const std::string& tag) {
  const std::string dir = test::make_temp_dir(tag) + "/art";
  test::write_sample_artifact(dir);
  return dir;
}

void expect_open_error(const std::string& dir, const std::string& part, const ArtifactOpenOptions& options = {}) {
  const std::string message = test::error_of([&] { Artifact::open(dir, options); });
  EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
}

TEST(ArtifactLoadErrors, NotAnArtifact) {
  const std::string parent = test::make_temp_dir("artifact-not");
  expect_open_error(parent + "/absent", "no such directory (not a websd artifact");
  expect_open_error(parent, "no manifest.json (not a websd artifact");
  test::write_text(parent + "/file", "x");
  expect_open_error(parent + "/file", "is a file, not an artifact directory");
  test::write_text(parent + "/manifest.json", "PK\x03\x04 zip bytes");
  expect_open_error(parent, "manifest.json: not valid JSON: ");
  expect_open_error(parent, "(not a websd artifact: point at a directory written by 'websd build')");
  test::write_text(parent + "/manifest.json", R"({"magic": "safetensors", "format_version": 1})");
  expect_open_error(parent, "manifest.json: magic is the string 'safetensors', expected 'websd-artifact'");
  test::write_text(parent + "/manifest.json", R"([1, 2])");
  expect_open_error(parent, "manifest.json: holds a JSON array, expected a JSON object (not a websd artifact");
}

TEST(ArtifactLoadErrors, NewerFormatVersionAsksToUpgradeWebsd) {
  const std::string dir = sample_dir("artifact-newer");
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["format_version"] = 4; });
  expect_open_error(
      dir, "manifest.json: format version 4 is newer than this websd reads (3) (upgrade websd to load this artifact)");
}

TEST(ArtifactLoadErrors, OlderFormatVersionAsksToRebuild) {
  const std::string dir = sample_dir("artifact-older");
  // Version 1 (launch lists without kernel tables and bindings) is refused, not read.
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["format_version"] = 1; });
  expect_open_error(
      dir,
      "manifest.json: format version 1 is older than this websd reads (3 to 3) (rebuild the artifact with this websd)");
  // Version 2 had no seal: what its manifest says is reported, not the missing seal.
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["format_version"] = 2; });
  fs::remove(dir + "/seal.json");
  expect_open_error(
      dir,
      "manifest.json: format version 2 is older than this websd reads (3 to 3) (rebuild the artifact with this websd)");
}

TEST(ArtifactLoadErrors, WrongTarget) {
  const std::string dir = sample_dir("artifact-target");
  expect_open_error(dir, "wrong target: the artifact is built for 'cpu', this runtime runs 'webgpu'",
                    test::open_options("webgpu"));
  // A runtime with several devices (its registry's targets) names them all.
  expect_open_error(dir,
                    "wrong target: the artifact is built for 'cpu', this runtime runs 'cuda' or 'webgpu' (build one "
                    "with 'websd build --target cuda')",
                    ArtifactOpenOptions::for_targets({"cuda", "webgpu"}));
  EXPECT_NO_THROW(Artifact::open(dir, ArtifactOpenOptions::for_targets({"webgpu", "cpu"})));
}

TEST(ArtifactLoadErrors, MissingShard) {
  const std::string dir = sample_dir("artifact-missing");
  fs::remove(dir + "/weights/shard-00001.bin");
  expect_open_error(dir, "weights/shard-00001.bin: missing shard (the artifact is incomplete");
}

TEST(ArtifactLoadErrors, TruncatedShardSaysExpectedAndFoundBytes) {
  const std::string dir = sample_dir("artifact-truncated");
  fs::resize_file(dir + "/weights/shard-00001.bin", 100);
  expect_open_error(dir, "weights/shard-00001.bin: truncated shard: expected 400 bytes, found 100");
  fs::resize_file(dir + "/weights/shard-00001.bin", 500);
  expect_open_error(dir, "weights/shard-00001.bin: shard is larger than the index says: expected 400 bytes, found 500");
}

TEST(ArtifactLoadErrors, ChecksumMismatchNamesTheShardOnFirstRead) {
  const std::string dir = sample_dir("artifact-checksum");
  test::flip_byte(dir + "/weights/shard-00002.bin", 130);
  const Artifact opened = Artifact::open(dir);
  EXPECT_EQ(opened.weight("text.embed").size(), 32u) << "other shards still load";
  const std::string message = test::error_of([&] { opened.weight("vae.scale"); });
  EXPECT_NE(message.find("weights/shard-00002.bin: checksum mismatch: SHA-256 "), std::string::npos) << message;
  EXPECT_NE(message.find("(the shard is corrupt"), std::string::npos) << message;
}

TEST(ArtifactLoadErrors, EditedIndexFailsItsChecksum) {
  const std::string dir = sample_dir("artifact-index-checksum");
  std::string index = test::read_text(dir + "/weights/index.json");
  index.replace(index.find("text.embed"), 10, "text.EMBED");
  test::write_text(dir + "/weights/index.json", index);
  expect_open_error(dir, "weights/index.json: checksum mismatch: SHA-256 ");
}

TEST(ArtifactLoadErrors, EncryptedButNoKeyGiven) {
  const std::string dir = test::make_temp_dir("artifact-nokey") + "/art";
  test::write_sample_artifact(dir, test::sample_key());
  expect_open_error(dir, "the artifact is encrypted (aes-256-gcm) but no key was given (pass --key-file)");
  // A tool that only describes the artifact may open it; reading a weight still fails.
  ArtifactOpenOptions describe_only;
  describe_only.allow_missing_key = true;
  const Artifact opened = Artifact::open(dir, describe_only);
  EXPECT_EQ(opened.weights().size(), 5u);
  EXPECT_NE(test::error_of([&] { opened.weight("unet.big"); }).find("encrypted (aes-256-gcm) but no key was given"),
            std::string::npos);
}

TEST(ArtifactLoadErrors, WrongKeyIsToldApartFromCorruption) {
  const std::string temp = test::make_temp_dir("artifact-wrongkey");
  test::write_sample_artifact(temp + "/art", test::sample_key());
  const std::string wrong = test::write_hex_key_file(temp, test::sample_key(1));
  expect_open_error(temp + "/art", "wrong key: " + wrong + " is not the key this artifact was encrypted with",
                    test::open_options("cpu", wrong));
  // With the right key, a corrupt encrypted shard is a checksum mismatch, not a key problem.
  test::flip_byte(temp + "/art/weights/shard-00000.bin", 3);
  const Artifact opened =
      Artifact::open(temp + "/art", test::open_options("cpu", test::write_hex_key_file(temp, test::sample_key())));
  EXPECT_NE(test::error_of([&] { opened.weight("text.embed"); }).find("checksum mismatch"), std::string::npos);
}

TEST(ArtifactLoadErrors, AlteredIvFailsAuthentication) {
  const std::string temp = test::make_temp_dir("artifact-iv");
  test::write_sample_artifact(temp + "/art", test::sample_key());
  test::edit_index_consistently(temp + "/art", [](nlohmann::json& index) {
    std::string iv = index["shards"][1]["iv"];
    iv[0] = iv[0] == '0' ? '1' : '0';
    index["shards"][1]["iv"] = iv;
  });
  const std::string key_file = test::write_hex_key_file(temp, test::sample_key());
  // Someone without the key cannot authenticate the manifest that records the new index.
  expect_open_error(temp + "/art", "manifest.json: was changed by someone without the artifact's key",
                    test::open_options("cpu", key_file));
  // Even resealed with the key, the GCM tag still catches the IV when the shard is read.
  const std::string manifest = test::read_text(temp + "/art/manifest.json");
  const std::string seal_path = temp + "/art/seal.json";
  artifact::ArtifactSeal seal = artifact::parse_seal(test::read_text(seal_path), seal_path);
  seal.manifest_hmac = artifact::hmac_sha256(test::sample_key().bytes, artifact::seal_message(manifest));
  test::write_text(seal_path, artifact::seal_to_text(seal));
  const Artifact opened = Artifact::open(temp + "/art", test::open_options("cpu", key_file));
  EXPECT_NE(
      test::error_of([&] { opened.weight("unet.big"); }).find("decryption failed: the AES-GCM tag does not match"),
      std::string::npos);
}

TEST(ArtifactLoadErrors, IndexEntryOutOfItsShardsBounds) {
  const std::string dir = sample_dir("artifact-bounds");
  test::edit_index_consistently(dir, [](nlohmann::json& index) { index["tensors"][4]["offset"] = 192; });
  expect_open_error(dir,
                    "tensors[4] ('vae.scale'): index entry out of its shard's bounds: bytes [192, 192 + 64) but "
                    "'shard-00002.bin' holds 192 bytes");
  test::edit_index_consistently(dir, [](nlohmann::json& index) {
    index["tensors"][4]["offset"] = 128;
    index["tensors"][4]["shard"] = 3;
  });
  expect_open_error(dir, "index entry out of its shard's bounds: shard 3 does not exist (the index lists 3)");
}

TEST(ArtifactLoadErrors, TamperedManifestFieldsOfTheWrongType) {
  const std::string dir = sample_dir("artifact-tampered");
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& m) { m["target"] = 5; }, "field 'target' is the integer 5, expected a string"},
      {[](nlohmann::json& m) { m["format_version"] = "1"; },
       "field 'format_version' is the string '1', expected an integer"},
      {[](nlohmann::json& m) { m["sections"] = nlohmann::json::array(); },
       "field 'sections' is a JSON array, expected an object"},
      {[](nlohmann::json& m) { m.erase("created"); }, "field 'created' is missing"},
      {[](nlohmann::json& m) { m["encryption"] = "rot13"; }, "field 'encryption' is the string 'rot13', expected"},
      {[](nlohmann::json& m) { m["sections"]["weights"]["index_sha256"] = "abc"; },
       "field 'sections.weights.index_sha256' is the string 'abc', expected 64 hex digits"},
  };
  const std::string original = test::read_text(dir + "/manifest.json");
  for (const auto& [edit, part] : cases) {
    test::write_text(dir + "/manifest.json", original);
    test::edit_manifest(dir, edit);
    expect_open_error(dir, part);
    expect_open_error(dir, "(the manifest was edited or is corrupt: rebuild the artifact)");
  }
}

TEST(ArtifactLoadErrors, EncryptionClaimsMustAgree) {
  const std::string dir = sample_dir("artifact-claims");
  // A manifest that claims encryption while the seal has no HMAC of it, or the shards no IV,
  // cannot be trusted.
  test::edit_manifest(dir, [](nlohmann::json& manifest) {
    manifest["encryption"] = "aes-256-gcm";
    manifest["key_check"] = "hmac-sha256:" + std::string(64, '0');
  });
  expect_open_error(dir, "seal.json: holds no manifest HMAC but the manifest says encryption 'aes-256-gcm'",
                    test::open_options("cpu"));
  const std::string seal_path = dir + "/seal.json";
  artifact::ArtifactSeal seal = artifact::parse_seal(test::read_text(seal_path), seal_path);
  seal.manifest_hmac = artifact::Sha256Digest{};
  test::write_text(seal_path, artifact::seal_to_text(seal));
  ArtifactOpenOptions describe_only;
  describe_only.allow_missing_key = true;
  expect_open_error(dir, "lacks an iv and tag but the manifest says encryption 'aes-256-gcm'", describe_only);
}

}  // namespace
}  // namespace websd
