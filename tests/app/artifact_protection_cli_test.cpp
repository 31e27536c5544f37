// The artifact's protections as a user meets them through the real websd binary (FORMAT.md,
// "Protections"): a byte changed anywhere in a built artifact is refused by `generate` and by
// `inspect --verify`; a manifest edited and re-sealed (two weights swapped in unet_cfg's launch
// list) is refused when the artifact is encrypted (its key authenticates the manifest) or signed
// and opened with --trust-key; signing keys and trust keys that do not fit are named; an artifact
// of the format before seals asks for a rebuild.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "artifact/artifact_seal.h"
#include "artifact/sha256.h"
#include "support/cli_checks.h"
#include "support/fixtures.h"
#include "support/run_command.h"
#include "support/signing_key_files.h"
#include "targets/cpu/runtime/cpu_arch.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string describe(const CommandResult& result) {
  return "exit " + std::to_string(result.exit_code) + "\nstdout:\n" + result.out + "\nstderr:\n" + result.err;
}

std::string build(const std::string& out, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"build", "--model", fixture_path("tiny-sd15/model"), "--target", "cpu",
                                   "--out", out};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult result = run_websd(args);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  return out;
}

CommandResult generate(const std::string& artifact, const std::string& out,
                       const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"generate",    "--artifact", artifact, "--prompt", "a boat", "--steps", "1",
                                   "--scheduler", "euler",      "--seed", "1",        "--out",  out};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_websd(args);
}

CommandResult inspect_verify(const std::string& artifact, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"inspect", artifact, "--verify"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_websd(args);
}

// Flips the lowest bit of the byte at `offset` in place (twice restores it).
void flip_bit(const std::string& path, std::uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  unsigned char byte = 0;
  ASSERT_EQ(::pread(fd, &byte, 1, static_cast<off_t>(offset)), 1);
  byte ^= 1;
  ASSERT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(offset)), 1);
  ::close(fd);
}

// `count` offsets spread over a file of `size` bytes, its first and last byte included.
std::vector<std::uint64_t> spread_offsets(std::uint64_t size, std::uint64_t count) {
  std::vector<std::uint64_t> offsets;
  for (std::uint64_t i = 0; i < count; ++i) offsets.push_back(count == 1 ? 0 : i * (size - 1) / (count - 1));
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  return offsets;
}

// Records manifest.json's SHA-256 in seal.json as someone editing the artifact would, keeping the
// seal's HMAC and signature.
void reseal(const std::string& artifact) {
  const std::string manifest = read_text(artifact + "/manifest.json");
  const std::string seal_path = artifact + "/seal.json";
  artifact::ArtifactSeal seal = artifact::parse_seal(read_text(seal_path), seal_path);
  seal.manifest_sha256 = artifact::sha256(manifest);
  write_text(seal_path, artifact::seal_to_text(seal));
}

// The attack: two same-shape weights of unet_cfg swapped by name, the seal recomputed.
void swap_time_embedding_biases(const std::string& artifact) {
  nlohmann::json manifest = nlohmann::json::parse(read_text(artifact + "/manifest.json"));
  int swapped = 0;
  for (auto& weight : manifest["sections"]["launch_lists"]["unet_cfg"]["weights"]) {
    const std::string name = weight["name"];
    if (name == "unet/time_embedding.linear_1.bias")
      weight["name"] = "unet/time_embedding.linear_2.bias", ++swapped;
    else if (name == "unet/time_embedding.linear_2.bias")
      weight["name"] = "unet/time_embedding.linear_1.bias", ++swapped;
  }
  ASSERT_EQ(swapped, 2);
  write_text(artifact + "/manifest.json", manifest.dump(2) + "\n");
  reseal(artifact);
}

TEST(ArtifactProtectionCli, AByteChangedAnywhereInTheArtifactIsRefusedByGenerateAndInspectVerify) {
  const std::string dir = make_temp_dir("protect-cli-flips");
  const std::string artifact = build(dir + "/art");
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(artifact)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 7u);  // manifest, seal, index, shard, kernel library, tokenizer and scheduler files
  std::size_t flips = 0;
  for (const std::string& file : files) {
    const std::uint64_t size = fs::file_size(file);
    const std::vector<std::uint64_t> offsets = spread_offsets(size, 8);
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const std::uint64_t offset = offsets[i];
      const std::string context = file + " byte " + std::to_string(offset);
      SCOPED_TRACE(context);
      flip_bit(file, offset);
      expect_error(inspect_verify(artifact), {"[artifact] "});
      // generate on the first, a middle and the last byte of each file (it takes longer).
      if (i == 0 || i == offsets.size() / 2 || i + 1 == offsets.size()) {
        const CommandResult generated = generate(artifact, dir + "/out.png");
        expect_error(generated, {"[artifact] "});
        EXPECT_FALSE(fs::exists(dir + "/out.png"));
      }
      flip_bit(file, offset);
      ++flips;
    }
  }
  EXPECT_GE(flips, 40u);
  // Restored byte for byte, the artifact passes both again: the refusals above came from the flips.
  EXPECT_EQ(inspect_verify(artifact).exit_code, 0);
  EXPECT_EQ(generate(artifact, dir + "/out.png").exit_code, 0);
}

TEST(ArtifactProtectionCli, AResealedEditOfAnUnkeyedUnsignedArtifactIsWhatItsInspectWarnsOf) {
  // The threat model's boundary: the digest finds corruption; whoever can edit an artifact without a
  // key or a trusted signature can also re-seal it, and inspect says so.
  const std::string dir = make_temp_dir("protect-cli-plain");
  const std::string artifact = build(dir + "/art");
  swap_time_embedding_biases(artifact);
  EXPECT_EQ(generate(artifact, dir + "/out.png").exit_code, 0);
  const CommandResult inspected = run_websd({"inspect", artifact});
  EXPECT_NE(inspected.out.find("not encrypted, so whoever can edit the files can also recompute the digest"),
            std::string::npos)
      << describe(inspected);
}

TEST(ArtifactProtectionCli, TheKeyOfAnEncryptedArtifactRefusesAResealedEdit) {
  const std::string dir = make_temp_dir("protect-cli-key");
  write_text(dir + "/key.hex", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n");
  const std::string artifact = build(dir + "/art", {"--encrypt-key-file", dir + "/key.hex"});
  ASSERT_EQ(generate(artifact, dir + "/before.png", {"--key-file", dir + "/key.hex"}).exit_code, 0);
  swap_time_embedding_biases(artifact);
  const std::string unkeyed = "was changed by someone without the artifact's key";
  expect_error(generate(artifact, dir + "/out.png", {"--key-file", dir + "/key.hex"}), {unkeyed});
  expect_error(inspect_verify(artifact, {"--key-file", dir + "/key.hex"}), {unkeyed});
  EXPECT_FALSE(fs::exists(dir + "/out.png"));
  // Without the key, inspect describes the artifact and says the manifest's authentication is unchecked.
  const CommandResult described = run_websd({"inspect", artifact});
  EXPECT_EQ(described.exit_code, 0) << describe(described);
  EXPECT_NE(described.out.find("the manifest's authentication by the key was not checked (pass --key-file)"),
            std::string::npos)
      << described.out;
}

TEST(ArtifactProtectionCli, ASignedArtifactRunsForItsTrustKeyAndRefusesEditsOtherSignersAndNoSignature) {
  const std::string dir = make_temp_dir("protect-cli-signed");
  const SigningKeyFiles keys = write_signing_key_files(dir, 1);
  const SigningKeyFiles other = write_signing_key_files(dir, 2);
  const std::string artifact = build(dir + "/art", {"--sign-key", keys.private_pem});
  const CommandResult trusted = generate(artifact, dir + "/trusted.png", {"--trust-key", keys.public_pem});
  EXPECT_EQ(trusted.exit_code, 0) << describe(trusted);
  const CommandResult inspected = run_websd({"inspect", "--trust-key", keys.public_pem, artifact});
  EXPECT_NE(inspected.out.find(", a trusted key (--trust-key)\n"), std::string::npos) << describe(inspected);
  expect_error(generate(artifact, dir + "/out.png", {"--trust-key", other.public_pem}), {"which is not a trusted key"});
  expect_error(inspect_verify(artifact, {"--trust-key", other.public_pem}), {"which is not a trusted key"});
  const std::string plain = build(dir + "/plain");
  expect_error(generate(plain, dir + "/out.png", {"--trust-key", keys.public_pem}),
               {"is not signed, and --trust-key accepts only artifacts signed by ed25519:"});
  swap_time_embedding_biases(artifact);
  const std::string edited = "does not match the manifest (the manifest or the signature was changed after signing";
  expect_error(generate(artifact, dir + "/out.png", {"--trust-key", keys.public_pem}), {edited});
  expect_error(inspect_verify(artifact, {"--trust-key", keys.public_pem}), {edited});
  // Without --trust-key the signature is still checked against the key it names.
  expect_error(generate(artifact, dir + "/out.png"), {edited});
  EXPECT_FALSE(fs::exists(dir + "/out.png"));
}

TEST(ArtifactProtectionCli, KeysOfTheWrongKindAreNamedBeforeAnyWork) {
  const std::string dir = make_temp_dir("protect-cli-keys");
  const SigningKeyFiles keys = write_signing_key_files(dir, 3);
  const CommandResult public_as_signing = run_websd({"build", "--model", fixture_path("tiny-sd15/model"), "--target",
                                                     "cpu", "--out", dir + "/art", "--sign-key", keys.public_pem});
  expect_error(public_as_signing, {": holds a public key; --sign-key takes the private key"});
  EXPECT_FALSE(fs::exists(dir + "/art"));
  ASSERT_EQ(::mkfifo((dir + "/fifo.pem").c_str(), 0600), 0);
  expect_error(run_websd({"build", "--model", fixture_path("tiny-sd15/model"), "--target", "cpu", "--out", dir + "/art",
                          "--sign-key", dir + "/fifo.pem"}),
               {"--sign-key " + dir + "/fifo.pem: is a FIFO, expected a key file"});
  const std::string artifact = build(dir + "/art");
  expect_error(generate(artifact, dir + "/out.png", {"--trust-key", dir + "/fifo.pem"}),
               {"--trust-key " + dir + "/fifo.pem: is a FIFO, expected a key file"});
  expect_error(generate(artifact, dir + "/out.png", {"--trust-key", keys.private_pem}),
               {": holds a private key; --trust-key takes the public key"});
  expect_error(run_websd({"generate", "--prompt", "x", "--out", dir + "/out.png", "--trust-key", keys.public_pem}),
               {"--key-file and --trust-key apply to an --artifact only"});
}

TEST(ArtifactProtectionCli, AnArtifactOfTheFormatBeforeSealsAsksForARebuild) {
  const std::string dir = make_temp_dir("protect-cli-old");
  const std::string artifact = build(dir + "/art");
  nlohmann::json manifest = nlohmann::json::parse(read_text(artifact + "/manifest.json"));
  manifest["format_version"] = 2;
  write_text(artifact + "/manifest.json", manifest.dump(2) + "\n");
  fs::remove(artifact + "/seal.json");
  const std::string rebuild = "format version 2 is older than this websd reads (3 to 3) (rebuild the artifact";
  expect_error(generate(artifact, dir + "/out.png"), {rebuild});
  expect_error(inspect_verify(artifact), {rebuild});
}

// `build --cpu-arch`: the kernel library's instruction set in device_requirements; an artifact for
// another one (here: a resealed edit naming aarch64) refused by generate and inspect --verify
// before any work, in one sentence; unknown and misplaced choices refused by build.
TEST(ArtifactProtectionCli, AnArtifactForAnotherInstructionSetIsRefusedBeforeAnyWork) {
  const std::string dir = make_temp_dir("cpu-arch");
  const std::string artifact = build(dir + "/art", {"--cpu-arch", "x86-64-v3"});
  nlohmann::json manifest = nlohmann::json::parse(read_text(artifact + "/manifest.json"));
  ASSERT_EQ(manifest["sections"]["device_requirements"], (nlohmann::json{{"cpu_arch", "x86-64-v3"}}));
  if (cpu::cpu_arch_refusal("x86-64-v3").empty()) {
    const CommandResult ran = generate(artifact, dir + "/v3.png");
    EXPECT_EQ(ran.exit_code, 0) << describe(ran);
  }
  manifest["sections"]["device_requirements"]["cpu_arch"] = "aarch64";
  write_text(artifact + "/manifest.json", manifest.dump(2) + "\n");
  reseal(artifact);
  const std::string refused = "its kernels are built for aarch64 and this machine is " + cpu::host_cpu_arch();
  expect_error(generate(artifact, dir + "/out.png"), {"[artifact] " + artifact + ": " + refused});
  EXPECT_FALSE(fs::exists(dir + "/out.png"));
  expect_error(inspect_verify(artifact), {refused});

  const std::vector<std::string> model = {"build", "--model", fixture_path("tiny-sd15/model"), "--out", dir + "/x"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = model;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_websd(args);
  };
  expect_error(with({"--target", "cpu", "--cpu-arch", "zen4"}),
               {"--cpu-arch zen4: not an instruction set websd builds for (use x86-64, x86-64-v2, x86-64-v3, "
                "x86-64-v4, aarch64)"});
  expect_error(with({"--target", "webgpu", "--cpu-arch", "x86-64"}), {"--cpu-arch is for --target cpu, not webgpu"});
  if (cpu::host_cpu_arch() != "aarch64" && ::system("command -v aarch64-linux-gnu-g++ >/dev/null 2>&1") != 0) {
    expect_error(with({"--target", "cpu", "--cpu-arch", "aarch64"}),
                 {"--cpu-arch aarch64 needs the cross compiler aarch64-linux-gnu-g++, which is not installed "
                  "(Debian: apt-get install g++-aarch64-linux-gnu)"});
  }
  EXPECT_FALSE(fs::exists(dir + "/x"));
}

}  // namespace
}  // namespace websd::test
