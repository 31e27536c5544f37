// The artifact's protections (FORMAT.md, "Protections"): the seal's digest over the manifest, which
// covers every other file; an encrypted artifact's manifest HMAC under its key; the Ed25519
// signature checked against the keys a user trusts. Each attack the threat model names is refused
// with one line, and what it does not claim to stop (an unkeyed artifact re-sealed by whoever can
// edit it) is stated by the protections it reports.
#include <gtest/gtest.h>

#include <filesystem>

#include "artifact/artifact.h"
#include "artifact/artifact_seal.h"
#include "artifact/artifact_signing_key.h"
#include "artifact_test_support.h"
#include "core/error.h"
#include "support/fixtures.h"
#include "support/signing_key_files.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using artifact::Artifact;
using artifact::ArtifactOpenOptions;

struct SignedSample {
  std::string dir;
  test::SigningKeyFiles keys;
  test::SigningKeyFiles other;
};

SignedSample signed_sample(const std::string& tag, std::optional<artifact::ArtifactKey> key = std::nullopt) {
  const std::string temp = test::make_temp_dir(tag);
  SignedSample sample{temp + "/art", test::write_signing_key_files(temp, 1), test::write_signing_key_files(temp, 2)};
  test::write_sample_artifact(sample.dir, std::move(key), "cpu",
                              std::make_shared<const artifact::ArtifactSigningKey>(
                                  artifact::ArtifactSigningKey::read(sample.keys.private_pem)));
  return sample;
}

ArtifactOpenOptions trusting(std::vector<std::string> keys, const std::string& key_file = "") {
  ArtifactOpenOptions options = test::open_options("cpu", key_file);
  options.trust_key_files = std::move(keys);
  return options;
}

void expect_open_error(const std::string& dir, const std::string& part, const ArtifactOpenOptions& options = {}) {
  const std::string message = test::error_of([&] { Artifact::open(dir, options); });
  EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
}

TEST(ArtifactProtection, EveryByteOfTheSealAndTheManifestIsCovered) {
  const std::string dir = test::make_temp_dir("protect-bytes") + "/art";
  test::write_sample_artifact(dir);
  for (const std::string name : {"manifest.json", "seal.json"}) {
    const std::string path = dir + "/" + name;
    const std::string original = test::read_text(path);
    for (std::size_t offset = 0; offset < original.size(); ++offset) {
      test::flip_byte(path, offset);
      EXPECT_THROW(Artifact::open(dir), websd::Error) << name << " byte " << offset;
      test::write_text(path, original);
    }
  }
  EXPECT_NO_THROW(Artifact::open(dir));
}

TEST(ArtifactProtection, AnEditedManifestFailsTheSealsDigest) {
  const std::string dir = test::make_temp_dir("protect-digest") + "/art";
  test::write_sample_artifact(dir);
  std::string manifest = test::read_text(dir + "/manifest.json");
  manifest.replace(manifest.find("\"cpu\""), 5, "\"CPU\"");
  test::write_text(dir + "/manifest.json", manifest);
  expect_open_error(dir, "manifest.json: checksum mismatch: SHA-256 ");
  expect_open_error(dir, "(the manifest was edited or is corrupt: copy the artifact again from its source");
  fs::remove(dir + "/seal.json");
  expect_open_error(dir, "seal.json: missing: nothing vouches for the manifest (the artifact is incomplete");
}

TEST(ArtifactProtection, TheSealIsReadOnlyInTheFormWebsdWritesIt) {
  const std::string dir = test::make_temp_dir("protect-seal") + "/art";
  test::write_sample_artifact(dir);
  const std::string path = dir + "/seal.json";
  const std::string original = test::read_text(path);
  test::write_text(path, original + "\n");
  expect_open_error(dir, "seal.json: differs from the text websd writes for its fields at byte ");
  std::string upper = original;
  const std::size_t digest = upper.find("\"manifest_sha256\": \"") + 20;
  for (std::size_t i = digest; i < digest + 64; ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
  test::write_text(path, upper);
  expect_open_error(dir, "seal.json: differs from the text websd writes");
  nlohmann::json newer = nlohmann::json::parse(original);
  newer["version"] = 2;
  test::write_text(path, newer.dump(2) + "\n");
  expect_open_error(dir, "seal.json: seal version 2 is newer than this websd reads (1) (upgrade websd");
}

TEST(ArtifactProtection, AnUnkeyedArtifactResealedByAnEditorOpensAndSaysSo) {
  // The threat model: without a key or a trusted signer, the digest finds corruption, not forgery.
  const std::string dir = test::make_temp_dir("protect-reseal") + "/art";
  test::write_sample_artifact(dir);
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["websd_version"] = "forged"; });
  const Artifact opened = Artifact::open(dir);
  EXPECT_EQ(opened.manifest().websd_version, "forged");
  EXPECT_FALSE(opened.protections().key_authenticated);
  EXPECT_FALSE(opened.protections().signer.has_value());
  EXPECT_EQ(opened.protections().manifest_sha256.size(), 64u);
}

TEST(ArtifactProtection, TheKeyAuthenticatesTheManifest) {
  const std::string temp = test::make_temp_dir("protect-hmac");
  const std::string dir = temp + "/art";
  test::write_sample_artifact(dir, test::sample_key());
  const std::string key_file = test::write_hex_key_file(temp, test::sample_key());
  EXPECT_TRUE(Artifact::open(dir, test::open_options("cpu", key_file)).protections().key_authenticated);
  // Re-sealed after an edit, as someone without the key would: the HMAC no longer matches.
  test::edit_manifest(dir, [](nlohmann::json& manifest) { manifest["websd_version"] = "forged"; });
  expect_open_error(dir, "manifest.json: was changed by someone without the artifact's key",
                    test::open_options("cpu", key_file));
  // Without the key (websd inspect), the HMAC cannot be checked, and the protections say so.
  ArtifactOpenOptions describe_only;
  describe_only.allow_missing_key = true;
  EXPECT_FALSE(Artifact::open(dir, describe_only).protections().key_authenticated);
  // A seal stripped of its HMAC does not pass for an unencrypted one.
  const std::string seal_path = dir + "/seal.json";
  artifact::ArtifactSeal seal = artifact::parse_seal(test::read_text(seal_path), seal_path);
  seal.manifest_hmac.reset();
  test::write_text(seal_path, artifact::seal_to_text(seal));
  expect_open_error(dir, "seal.json: holds no manifest HMAC but the manifest says encryption 'aes-256-gcm'",
                    test::open_options("cpu", key_file));
}

TEST(ArtifactProtection, ASignedArtifactOpensForItsTrustKeyAndNoOther) {
  const SignedSample sample = signed_sample("protect-signed");
  const Artifact opened = Artifact::open(sample.dir, trusting({sample.other.public_pem, sample.keys.public_pem}));
  EXPECT_TRUE(opened.protections().signer_trusted);
  EXPECT_TRUE(opened.protections().signature_checked);
  ASSERT_TRUE(opened.protections().signer.has_value());
  EXPECT_EQ(opened.protections().signer->rfind("ed25519:", 0), 0u);
  expect_open_error(sample.dir, "is signed by " + *opened.protections().signer + ", which is not a trusted key",
                    trusting({sample.other.public_pem}));
  // Without a trust key the signature is still checked against the key it names.
  const Artifact untrusted = Artifact::open(sample.dir);
  EXPECT_TRUE(untrusted.protections().signature_checked);
  EXPECT_FALSE(untrusted.protections().signer_trusted);
}

TEST(ArtifactProtection, AnUnsignedArtifactIsRefusedWhenATrustKeyIsGiven) {
  const std::string temp = test::make_temp_dir("protect-unsigned");
  test::write_sample_artifact(temp + "/art");
  const test::SigningKeyFiles keys = test::write_signing_key_files(temp, 3);
  expect_open_error(temp + "/art", "is not signed, and --trust-key accepts only artifacts signed by ed25519:",
                    trusting({keys.public_pem}));
}

TEST(ArtifactProtection, AManifestChangedAfterSigningIsRefused) {
  const SignedSample sample = signed_sample("protect-resigned");
  test::edit_manifest(sample.dir, [](nlohmann::json& manifest) { manifest["websd_version"] = "forged"; });
  expect_open_error(sample.dir, "seal.json: the signature by ed25519:", trusting({sample.keys.public_pem}));
  expect_open_error(sample.dir, "does not match the manifest (the manifest or the signature was changed after signing");
}

TEST(ArtifactProtection, ASignerSwappedForAnotherKeyIsNotTrusted) {
  // An attacker re-signs an edited manifest with their own key: valid, but not by a trusted key.
  const SignedSample sample = signed_sample("protect-swap");
  test::edit_manifest(sample.dir, [](nlohmann::json& manifest) { manifest["websd_version"] = "forged"; });
  const std::string seal_path = sample.dir + "/seal.json";
  artifact::ArtifactSeal seal = artifact::parse_seal(test::read_text(seal_path), seal_path);
  const auto attacker = artifact::ArtifactSigningKey::read(sample.other.private_pem);
  seal.signature = artifact::ArtifactSignature{
      attacker.public_key(), attacker.sign(artifact::seal_message(test::read_text(sample.dir + "/manifest.json")))};
  test::write_text(seal_path, artifact::seal_to_text(seal));
  EXPECT_NO_THROW(Artifact::open(sample.dir));
  expect_open_error(sample.dir, "which is not a trusted key", trusting({sample.keys.public_pem}));
}

TEST(ArtifactProtection, SignedAndEncryptedNeedsBoth) {
  const std::string temp = test::make_temp_dir("protect-both");
  const SignedSample sample = signed_sample("protect-both-art", test::sample_key());
  const std::string key_file = test::write_hex_key_file(temp, test::sample_key());
  const Artifact opened = Artifact::open(sample.dir, trusting({sample.keys.public_pem}, key_file));
  EXPECT_TRUE(opened.protections().key_authenticated);
  EXPECT_TRUE(opened.protections().signer_trusted);
}

TEST(ArtifactProtection, KeyFilesThatAreNotWhatTheyShouldBeAreNamed) {
  const std::string temp = test::make_temp_dir("protect-keys");
  const test::SigningKeyFiles keys = test::write_signing_key_files(temp, 4);
  const std::string sample = temp + "/art";
  test::write_sample_artifact(sample);
  expect_open_error(sample, keys.private_pem + ": holds a private key; --trust-key takes the public key",
                    trusting({keys.private_pem}));
  test::write_text(temp + "/garbage.pem", "not a key\n");
  expect_open_error(sample, temp + "/garbage.pem: holds no PEM public key", trusting({temp + "/garbage.pem"}));
  const auto signing_error = [&](const std::string& path) {
    return test::error_of([&] { artifact::ArtifactSigningKey::read(path); });
  };
  EXPECT_NE(signing_error(keys.public_pem).find(": holds a public key; --sign-key takes the private key"),
            std::string::npos);
  EXPECT_NE(signing_error(temp + "/garbage.pem").find(": holds no PEM private key"), std::string::npos);
  test::write_text(temp + "/encrypted.pem",
                   "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAg\n"
                   "-----END ENCRYPTED PRIVATE KEY-----\n");
  EXPECT_NE(signing_error(temp + "/encrypted.pem").find("protected by a passphrase, which websd does not ask for"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
