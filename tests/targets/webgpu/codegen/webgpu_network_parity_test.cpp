// The fixture's networks through a webgpu artifact, one at a time, against diffusers' float64
// references (tiny-sd15/reference/expected.safetensors): the text encoder, the UNet at three
// timesteps and the VAE decoder, each within 1e-4 relative L2 like the CPU. This is the
// conformance of every WGSL kernel as the compiler specializes and launches it (templates, fused
// elementwise groups, constants) on the shapes of a real SD graph. Runs the artifact's Node runner
// (`websd_node.mjs network`) on SwiftShader here, the GPU where there is one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "io/json_file.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "support/fixtures.h"
#include "support/run_command.h"
#include "support/tensor_compare.h"

namespace websd {
namespace {

constexpr double kNetworkTolerance = 1e-4;

HostTensor reference(const std::string& key) {
  return SafetensorsFile(test::fixture_path("tiny-sd15/reference/expected.safetensors")).read_f32(key);
}

struct Fixture {
  std::string dir, artifact;
};

const Fixture& fixture() {
  static const Fixture made = [] {
    Fixture f;
    f.dir = test::make_temp_dir("webgpu-networks");
    f.artifact = f.dir + "/art";
    const auto built = test::run_websd(
        {"build", "--model", test::fixture_path("tiny-sd15/model"), "--target", "webgpu", "--out", f.artifact});
    EXPECT_EQ(built.exit_code, 0) << built.err;
    return f;
  }();
  return made;
}

// Runs `network` on `inputs` through the artifact's runner; its output's values.
std::vector<float> run_network(const std::string& network, const std::map<std::string, const HostTensor*>& inputs,
                               double timestep) {
  const std::string tag = network + "-" + std::to_string(static_cast<int>(timestep));
  const std::string in = fixture().dir + "/" + tag + ".safetensors", out = fixture().dir + "/" + tag + ".f32";
  safetensors_write_f32(in, inputs);
  const std::string module = std::string(WEBSD_WEB_SOURCE_DIR) + "/node_modules/webgpu/index.js";
  const std::string command = "WEBGPU_MODULE=" + module + " node " + fixture().artifact +
                              "/runtime/node/websd_node.mjs network " + fixture().artifact + " " + network + " " + in +
                              " " + std::to_string(timestep) + " " + out + " > " + fixture().dir + "/" + tag + ".json";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream stream(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

void expect_close(const std::vector<float>& actual, const HostTensor& expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.data.size()) << what;
  const double error = test::relative_l2(actual, expected.data);
  ::testing::Test::RecordProperty(what + ".relative_l2", std::to_string(error));
  EXPECT_LT(error, kNetworkTolerance) << what;
}

TEST(WebGpuNetworks, TheTextEncoderMatchesTheReference) {
  // The token ids are int64 in the reference file; the runner takes them as float values.
  const SafetensorsFile file(test::fixture_path("tiny-sd15/reference/expected.safetensors"));
  const SafetensorsEntry& entry = file.at("te.ids");
  const std::span<const std::byte> bytes = file.bytes(entry);
  std::vector<float> values(bytes.size() / sizeof(std::int64_t));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::int64_t id = 0;
    std::memcpy(&id, bytes.data() + i * sizeof id, sizeof id);
    values[i] = static_cast<float>(id);
  }
  const HostTensor ids(entry.shape, std::move(values));
  expect_close(run_network("text", {{"ids", &ids}}, 0), reference("te.out"), "text encoder");
}

TEST(WebGpuNetworks, TheUNetMatchesTheReferenceAtThreeTimesteps) {
  const HostTensor sample = reference("unet.sample"), context = reference("unet.ctx");
  for (const int t : {981, 500, 1}) {
    expect_close(run_network("unet", {{"sample", &sample}, {"context", &context}}, t),
                 reference("unet.out." + std::to_string(t)), "unet t=" + std::to_string(t));
  }
}

TEST(WebGpuNetworks, TheVaeDecoderMatchesTheReference) {
  const HostTensor latents = reference("vae.dec.in");
  expect_close(run_network("vae_decode", {{"latents", &latents}}, 0), reference("vae.dec.out"), "vae decode");
}

}  // namespace
}  // namespace websd
