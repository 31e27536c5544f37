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

HostTensor int64_as_float(const std::string& key) {
  // The token ids are int64 in the reference file; the runner takes them as float values.
  const SafetensorsFile file(test::fixture_path("tiny-sd15/reference/expected.safetensors"));
  const SafetensorsEntry& entry = file.at(key);
  const std::span<const std::byte> bytes = file.bytes(entry);
  std::vector<float> values(bytes.size() / sizeof(std::int64_t));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::int64_t id = 0;
    std::memcpy(&id, bytes.data() + i * sizeof id, sizeof id);
    values[i] = static_cast<float>(id);
  }
  return HostTensor(entry.shape, std::move(values));
}

std::vector<float> read_values(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// Every network of the fixture through one opened artifact (pipelines compile once): the text
// encoder, the UNet at three timesteps, the VAE decoder, each against its reference.
TEST(WebGpuNetworks, EveryNetworkMatchesDiffusersFloat64References) {
  const HostTensor ids = int64_as_float("te.ids");
  const HostTensor sample = reference("unet.sample"), context = reference("unet.ctx");
  const HostTensor latents = reference("vae.dec.in");
  struct Job {
    std::string network;
    std::map<std::string, const HostTensor*> inputs;
    int timestep;
    std::string expected;
  };
  const std::vector<Job> jobs = {{"text", {{"ids", &ids}}, 0, "te.out"},
                                 {"unet", {{"sample", &sample}, {"context", &context}}, 981, "unet.out.981"},
                                 {"unet", {{"sample", &sample}, {"context", &context}}, 500, "unet.out.500"},
                                 {"unet", {{"sample", &sample}, {"context", &context}}, 1, "unet.out.1"},
                                 {"vae_decode", {{"latents", &latents}}, 0, "vae.dec.out"}};
  const std::string module = std::string(WEBSD_WEB_SOURCE_DIR) + "/node_modules/webgpu/index.js";
  std::string command = "WEBGPU_MODULE=" + module + " node " + fixture().artifact +
                        "/runtime/node/websd_node.mjs network " + fixture().artifact;
  for (const Job& job : jobs) {
    const std::string tag = fixture().dir + "/" + job.expected;
    safetensors_write_f32(tag + ".safetensors", job.inputs);
    command += " " + job.network + " " + tag + ".safetensors " + std::to_string(job.timestep) + " " + tag + ".f32";
  }
  ASSERT_EQ(std::system((command + " > " + fixture().dir + "/networks.json").c_str()), 0) << command;
  for (const Job& job : jobs) {
    const std::vector<float> actual = read_values(fixture().dir + "/" + job.expected + ".f32");
    const HostTensor expected = reference(job.expected);
    ASSERT_EQ(actual.size(), expected.data.size()) << job.expected;
    const double error = test::relative_l2(actual, expected.data);
    ::testing::Test::RecordProperty(job.expected + ".relative_l2", std::to_string(error));
    EXPECT_LT(error, kNetworkTolerance) << job.expected;
  }
}

}  // namespace
}  // namespace websd
