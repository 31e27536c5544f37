// The CPU artifact runtime on the fixture model compiled by `websd build`: its outputs against the
// float64 references (f32 storage: the fixtures' 1e-4 relative L2; f16 / bf16 storage: the looser
// tolerances documented in src/artifact/FORMAT.md), agreement with the graph executor, the arena it
// runs in, and its errors for a size it was not built for, a weight packed for another CPU and a
// kernel library that is missing, truncated or altered.
#include "backends/artifact_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "artifact/artifact.h"
#include "artifact/artifact_seal.h"
#include "artifact/fetched_source.h"
#include "backend_test_support.h"
#include "core/error.h"
#include "io/json_file.h"
#include "io/safetensors_reader.h"
#include "pipeline/host_calls.h"
#include "runtime/artifact_weight_source.h"
#include "runtime/launch_list.h"
#include "support/error_text.h"
#include "support/fixtures.h"
#include "support/forwarding_device.h"
#include "targets/device_registry.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

// Relative L2 against the float64 references for 16-bit weight storage (FORMAT.md).
constexpr double kF16Tolerance = 5e-3;   // measured 2.2e-3 (worst network)
constexpr double kBF16Tolerance = 5e-2;  // measured 2.0e-2 (worst network)

std::vector<std::int64_t> reference_ids() {
  return SafetensorsFile(test::fixture_path("tiny-sd15/reference/expected.safetensors")).read_i64("te.ids");
}

// Worst relative L2 over the text encoder, the UNet at two timesteps and the VAE decoder and encoder.
double worst_network_error(backends::ArtifactBackend& backend) {
  double worst = 0;
  const auto track = [&](const std::vector<float>& actual, const std::string& key) {
    const double error = test::relative_l2(actual, test::reference_tensor("expected", key).data);
    ::testing::Test::RecordProperty(key, std::to_string(error));
    worst = std::max(worst, error);
  };
  track(backend.encode_text(reference_ids(), 2).data, "te.out");
  const HostTensor sample = test::reference_tensor("expected", "unet.sample");
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  for (const int t : {981, 1}) track(call_unet(backend, sample, t, context).data, "unet.out." + std::to_string(t));
  track(call_vae_decode(backend, test::reference_tensor("expected", "vae.dec.in")).data, "vae.dec.out");
  const auto [mean, logvar] = backend.vae_encode(test::reference_tensor("expected", "vae.enc.in"));
  track(mean.data, "vae.enc.mean");
  track(logvar.data, "vae.enc.logvar");
  return worst;
}

// A private copy of the f32 artifact that a test may damage.
std::string artifact_copy(const std::string& name) {
  const fs::path copy = fs::path(test::tiny_artifact_dir()).parent_path() / name;
  fs::remove_all(copy);
  fs::copy(test::tiny_artifact_dir(), copy, fs::copy_options::recursive);
  return copy.string();
}

using websd::test::error_of;

TEST(ArtifactBackend, ReportsTheModelItWasBuiltFrom) {
  const ModelInfo& built = test::tiny_artifact_backend().info();
  const ModelInfo& source = test::tiny_backend().info();
  EXPECT_EQ(built.latent_channels, source.latent_channels);
  EXPECT_EQ(built.vae_scale_factor, source.vae_scale_factor);
  EXPECT_DOUBLE_EQ(built.vae_scaling_factor, source.vae_scaling_factor);
  EXPECT_EQ(built.max_tokens, source.max_tokens);
  EXPECT_EQ(built.sample_height, source.sample_height);
  EXPECT_EQ(built.sample_width, source.sample_width);
  EXPECT_EQ(built.latent_size_multiple, source.latent_size_multiple);
  EXPECT_EQ(test::tiny_artifact_backend().width(), 128);
}

TEST(ArtifactBackend, NetworksMatchTheReferencesWithFloat32Weights) {
  EXPECT_LT(worst_network_error(test::tiny_artifact_backend()), 1e-4);
}

TEST(ArtifactBackend, Float16WeightsStayWithinTheDocumentedTolerance) {
  EXPECT_LT(worst_network_error(test::tiny_artifact_backend(DType::kF16)), kF16Tolerance);
}

TEST(ArtifactBackend, BFloat16WeightsStayWithinTheDocumentedTolerance) {
  EXPECT_LT(worst_network_error(test::tiny_artifact_backend(DType::kBF16)), kBF16Tolerance);
}

TEST(ArtifactBackend, AgreesWithTheGraphExecutorOnTheUNet) {
  const HostTensor sample = test::reference_tensor("expected", "unet.sample");
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  const HostTensor compiled = call_unet(test::tiny_artifact_backend(), sample, 500, context);
  const HostTensor graph = call_unet(test::tiny_backend(), sample, 500, context);
  EXPECT_LT(test::relative_l2(compiled.data, graph.data), 1e-5);
}

// The compiled unet_cfg (batch, UNet and guidance combination on the device) against the
// checkpoint backend's default: the UNet on (x, x) combined on the host.
TEST(ArtifactBackend, TheGuidedStepAgreesWithTheHostCombination) {
  const HostTensor pair = test::reference_tensor("expected", "unet.sample");
  const HostTensor sample({1, pair.shape[1], pair.shape[2], pair.shape[3]},
                          std::vector<float>(pair.data.begin(), pair.data.begin() + pair.numel() / 2));
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  const HostTensor compiled = call_unet_guided(test::tiny_artifact_backend(), sample, 500, context, 7.5);
  const HostTensor host = call_unet_guided(test::tiny_backend(), sample, 500, context, 7.5);
  ASSERT_EQ(compiled.shape, sample.shape);
  EXPECT_LT(test::relative_l2(compiled.data, host.data), 1e-5);
  const std::string wrong = error_of([&] { call_unet_guided(test::tiny_artifact_backend(), pair, 500, context, 7.5); });
  EXPECT_NE(wrong.find("does not fit unet_cfg's sample"), std::string::npos) << wrong;
}

// The compiled image_to_rgba against the host conversion (pipeline/image_tensor.h) that the
// checkpoint backend runs: the same float32 operations, so the same bytes; values past [-1, 1] and
// NaN included (NaN must survive the clamp so the pipeline's finite check sees a diverged model).
TEST(ArtifactBackend, TheCompiledRgbaConversionEqualsTheHostOne) {
  backends::ArtifactBackend& backend = test::tiny_artifact_backend();
  HostTensor image({1, 3, backend.height(), backend.width()});
  for (std::size_t i = 0; i < image.data.size(); ++i) image.data[i] = 0.0137f * static_cast<float>(i % 331) - 2.2f;
  const HostTensor compiled = call_image_to_rgba(backend, image);
  const HostTensor host = call_image_to_rgba(test::tiny_backend(), image);
  EXPECT_EQ(compiled.shape, (Shape{backend.height(), backend.width(), 4}));
  EXPECT_EQ(compiled.data, host.data);
  image.data[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(call_image_to_rgba(backend, image).data[5 * 4]));
}

TEST(ArtifactBackend, PlannedArenasAreSmallerThanOneBufferPerValue) {
  const nlohmann::json manifest = json_read_file(test::tiny_artifact_dir() + "/manifest.json");
  const auto& plans = manifest.at("sections").at("memory_plans");
  ASSERT_EQ(plans.size(), 8u);
  for (const auto& plan : plans) {
    EXPECT_LE(plan.at("peak_bytes").get<std::int64_t>(), plan.at("arena_bytes").get<std::int64_t>()) << plan;
    EXPECT_LT(plan.at("arena_bytes").get<std::int64_t>(), plan.at("unplanned_bytes").get<std::int64_t>()) << plan;
  }
}

TEST(ArtifactBackend, ASizeItWasNotBuiltForIsAClearError) {
  const HostTensor sample({2, 4, 8, 8}, std::vector<float>(2 * 4 * 8 * 8, 0.0f));
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  const std::string message = error_of([&] { call_unet(test::tiny_artifact_backend(), sample, 1, context); });
  EXPECT_NE(message.find("built for 128x128"), std::string::npos) << message;
  EXPECT_NE(message.find("rebuild with websd build --size WxH"), std::string::npos) << message;
}

TEST(ArtifactBackend, AWeightPackedForAnotherCpuIsRefusedWithTheFix) {
  const std::string dir = artifact_copy("other-cpu.art");
  nlohmann::json manifest = json_read_file(dir + "/manifest.json");
  bool edited = false;
  for (auto& weight : manifest["sections"]["launch_lists"]["unet"]["weights"]) {
    if (!edited && !weight["layout"].get<std::string>().empty()) {
      weight["layout"] = "onednn:some-other-cpu";
      edited = true;
    }
  }
  ASSERT_TRUE(edited) << "the UNet has packed convolution weights";
  // Re-sealed, as an artifact built elsewhere is: the layout check, not the digest, must refuse it.
  const std::string text = manifest.dump();
  std::ofstream(dir + "/manifest.json") << text;
  artifact::ArtifactSeal seal;
  seal.manifest_sha256 = artifact::sha256(text);
  std::ofstream(dir + "/seal.json") << artifact::seal_to_text(seal);
  // At open: every function is prepared on this CPU before the first call.
  const std::string message = error_of([&] { backends::ArtifactBackend backend(dir); });
  EXPECT_NE(message.find("built for another CPU or by another websd version; rebuild it here"), std::string::npos)
      << message;
}

TEST(ArtifactBackend, AMissingKernelLibraryFailsAtOpen) {
  const std::string dir = artifact_copy("no-kernels.art");
  fs::remove(dir + "/kernels/cpu_kernels.so");
  const std::string message = error_of([&] { backends::ArtifactBackend backend(dir); });
  EXPECT_NE(message.find("missing file kernels/cpu_kernels.so"), std::string::npos) << message;
}

TEST(ArtifactBackend, ATruncatedKernelLibraryFailsAtOpen) {
  const std::string dir = artifact_copy("short-kernels.art");
  fs::resize_file(dir + "/kernels/cpu_kernels.so", fs::file_size(dir + "/kernels/cpu_kernels.so") - 100);
  const std::string message = error_of([&] { backends::ArtifactBackend backend(dir); });
  EXPECT_NE(message.find("file kernels/cpu_kernels.so has"), std::string::npos) << message;
}

TEST(ArtifactBackend, AnAlteredKernelLibraryFailsItsChecksum) {
  const std::string dir = artifact_copy("altered-kernels.art");
  {
    std::fstream file(dir + "/kernels/cpu_kernels.so", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(200);
    file.put('\x5a');
  }
  const std::string message = error_of([&] { backends::ArtifactBackend backend(dir); });
  EXPECT_NE(message.find("checksum mismatch in file kernels/cpu_kernels.so"), std::string::npos) << message;
}

// The cpu device, counting what the backend asks of it. `streams_weights`: it copies weights
// rather than adopting their bytes, and says so (as the webgpu device does), so that the backend
// releases each shard once its weights are imported.
class CountingDevice final : public test::ForwardingDevice {
 public:
  explicit CountingDevice(bool streams_weights = false) : streams_weights_(streams_weights) {}
  const runtime::DeviceLimits& limits() const override {
    limits_ = ForwardingDevice::limits();
    limits_.adopts_weight_bytes = limits_.adopts_weight_bytes && !streams_weights_;
    return limits_;
  }
  runtime::BufferPtr allocate(std::uint64_t bytes) override {
    allocations += 1;
    return ForwardingDevice::allocate(bytes);
  }
  void trim() override {
    trims += 1;
    ForwardingDevice::trim();
  }
  runtime::BufferPtr import_weight(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data) override {
    imports += 1;
    if (!streams_weights_) return ForwardingDevice::import_weight(weight, data);
    // A copy, as a device that copies weights makes: the shard may be released once this returns.
    auto copy = std::make_shared<std::vector<std::byte>>(data.bytes.begin(), data.bytes.end());
    return ForwardingDevice::import_weight(weight, {*copy, data.dtype, copy});
  }
  int allocations = 0;
  int trims = 0;
  int imports = 0;

 private:
  bool streams_weights_;
  mutable runtime::DeviceLimits limits_;
};

TEST(ArtifactBackend, RunsOnTheDeviceItIsGivenAndTrimsItBetweenNetworks) {
  auto owned = std::make_unique<CountingDevice>();
  CountingDevice& device = *owned;
  backends::ArtifactBackend backend(test::tiny_artifact_dir(), {}, backends::Residency::kOneNetwork, std::move(owned));
  const HostTensor context = backend.encode_text(reference_ids(), 2);
  EXPECT_GT(device.allocations, 0);  // the text encoder's slots and arena
  EXPECT_EQ(device.trims, 0);
  const HostTensor sample = test::reference_tensor("expected", "unet.sample");
  const HostTensor prediction = call_unet(backend, sample, 981, context);
  EXPECT_EQ(device.trims, 1);  // the text encoder dropped before the UNet ran
  EXPECT_EQ(prediction.data, call_unet(test::tiny_artifact_backend(), sample, 981, context).data);
}

// unet, unet_cfg and unet_b1 read the same UNet weights: the first imports them into the device,
// the others reuse those buffers (part 1, point 6 of the WebGPU issue: one copy on the device),
// except the artifact tensors packed for unet_b1's own shapes (oneDNN picks a layout per batch
// size here). Once the text encoder replaced the UNet, its weights are imported again.
TEST(ArtifactBackend, TheUNetFunctionsShareOneCopyOfTheWeights) {
  auto owned = std::make_unique<CountingDevice>();
  CountingDevice& device = *owned;
  backends::ArtifactBackend backend(test::tiny_artifact_dir(), {}, backends::Residency::kOneNetwork, std::move(owned));
  const HostTensor pair = test::reference_tensor("expected", "unet.sample");
  const HostTensor sample({1, pair.shape[1], pair.shape[2], pair.shape[3]},
                          std::vector<float>(pair.data.begin(), pair.data.begin() + pair.numel() / 2));
  const HostTensor context = test::reference_tensor("expected", "unet.ctx");
  const HostTensor single({1, context.shape[1], context.shape[2]},
                          std::vector<float>(context.data.begin(), context.data.begin() + context.numel() / 2));
  call_unet(backend, pair, 981, context);
  const int unet_imports = device.imports;
  EXPECT_GT(unet_imports, 0);
  const HostTensor guided = call_unet_guided(backend, sample, 981, context, 7.5);
  EXPECT_EQ(device.imports, unet_imports);
  const nlohmann::json lists = json_read_file(test::tiny_artifact_dir() + "/manifest.json")["sections"]["launch_lists"];
  std::set<std::string> unet_weights;
  for (const auto& weight : lists["unet"]["weights"]) unet_weights.insert(weight["name"].get<std::string>());
  int own = 0;
  for (const auto& weight : lists["unet_b1"]["weights"])
    own += unet_weights.count(weight["name"].get<std::string>()) ? 0 : 1;
  EXPECT_LT(own, static_cast<int>(unet_weights.size()) / 4);
  call_unet(backend, sample, 981, single);
  EXPECT_EQ(device.imports, unet_imports + own);
  EXPECT_EQ(guided.data, call_unet_guided(test::tiny_artifact_backend(), sample, 981, context, 7.5).data);
  const int before_text = device.imports;
  backend.encode_text(reference_ids(), 2);
  const int text_imports = device.imports - before_text;
  call_unet(backend, pair, 981, context);
  EXPECT_EQ(device.imports, 2 * unet_imports + own + text_imports);
}

// load() and load_part() upload, before the first call, the weights of every function a guided
// txt2img calls (the webgpu runner's uploads then overlap its pipelines' compilation); the calls
// then import nothing. Under kOneNetwork, where each call drops the other networks, nothing loads.
TEST(ArtifactBackend, LoadingARunImportsItsWeightsBeforeTheFirstCall) {
  RunShapes run;
  run.guided = true;
  run.text_rows = 2;
  const HostTensor pair = test::reference_tensor("expected", "unet.sample");
  const HostTensor sample({1, pair.shape[1], pair.shape[2], pair.shape[3]},
                          std::vector<float>(pair.data.begin(), pair.data.begin() + pair.numel() / 2));
  run.latents = sample.shape;
  {
    auto owned = std::make_unique<CountingDevice>();
    CountingDevice& device = *owned;
    backends::ArtifactBackend backend(test::tiny_artifact_dir(), {}, backends::Residency::kOneNetwork,
                                      std::move(owned));
    run.tokens = backend.info().max_tokens;
    backend.load(run);
    EXPECT_EQ(device.imports, 0);
  }
  backends::ArtifactBackend whole(test::tiny_artifact_dir(), {}, backends::Residency::kAllNetworks,
                                  std::make_unique<CountingDevice>(true));
  whole.load(run);
  auto owned = std::make_unique<CountingDevice>(true);
  CountingDevice& device = *owned;
  backends::ArtifactBackend backend(test::tiny_artifact_dir(), {}, backends::Residency::kAllNetworks, std::move(owned));
  // A part at a time (websd_load's way), here one weight a part: true once all are imported.
  int parts = 1;
  while (!backend.load_part(run, 1)) ++parts;
  const int loaded = device.imports;
  EXPECT_GT(loaded, 1);
  EXPECT_EQ(parts, loaded);
  // Each shard read once, as in one whole load: a part ending inside a shard keeps it for the next.
  EXPECT_EQ(backend.load_times().shards.shards, whole.load_times().shards.shards);
  EXPECT_TRUE(backend.load_part(run, 1));  // nothing left
  EXPECT_EQ(device.imports, loaded);
  const HostTensor context = backend.encode_text(reference_ids(), 2);
  const HostTensor guided = call_unet_guided(backend, sample, 981, context, 7.5);
  call_vae_decode(backend, guided);
  EXPECT_EQ(device.imports, loaded);
  EXPECT_EQ(guided.data, call_unet_guided(test::tiny_artifact_backend(), sample, 981, context, 7.5).data);
}

// Device tensors come from a cache (runtime::BufferCache): once the first step has made the
// buffers a step needs (its input, its output, the function's arena), the next steps, which drop
// the previous step's tensors, allocate nothing on the device.
TEST(ArtifactBackend, ADenoisingStepAllocatesNothingAfterTheFirst) {
  auto owned = std::make_unique<CountingDevice>();
  CountingDevice& device = *owned;
  backends::ArtifactBackend backend(test::tiny_artifact_dir(), {}, backends::Residency::kOneNetwork, std::move(owned));
  const HostTensor pair = test::reference_tensor("expected", "unet.sample");
  HostTensor sample({1, pair.shape[1], pair.shape[2], pair.shape[3]},
                    std::vector<float>(pair.data.begin(), pair.data.begin() + pair.numel() / 2));
  const DeviceTensor context = backend.upload(test::reference_tensor("expected", "unet.ctx"));
  std::vector<int> allocations;
  for (const int timestep : {900, 600, 300, 100}) {
    sample = backend.download(backend.unet_guided(backend.upload(sample), timestep, context, 7.5)).wait();
    allocations.push_back(device.allocations);
  }
  EXPECT_EQ(allocations[1], allocations[0]);
  EXPECT_EQ(allocations[3], allocations[0]);
}

// The CPU device dlopens its kernel library by path: from a source without local files (as a
// browser reads an artifact) it refuses the library by name, with what to do.
TEST(ArtifactBackend, TheCpuKernelLibraryNeedsALocalFolder) {
  const std::string dir = test::tiny_artifact_dir();
  const artifact::Artifact fetched = artifact::Artifact::open(
      std::make_unique<test::FetchedSource>(dir, std::make_shared<test::FetchedSource::Reads>()));
  bool tried = false;
  for (const auto& [symbol, json] : fetched.section("launch_lists")->items()) {
    const runtime::LaunchList list = runtime::launch_list_from_json(json);
    const bool has_file_kernel = std::any_of(list.kernels.begin(), list.kernels.end(),
                                             [](const runtime::Kernel& kernel) { return kernel.source == "file"; });
    if (!has_file_kernel) continue;
    const std::string message =
        error_of([&] { targets::open_device("cpu")->prepare(list, runtime::artifact_kernel_files(fetched)); });
    EXPECT_NE(message.find("the cpu device loads kernel library 'kernels/cpu_kernels.so' from a local file, and "
                           "this artifact is not in a local folder"),
              std::string::npos)
        << message;
    tried = true;
  }
  EXPECT_TRUE(tried) << "no function of the artifact runs a generated kernel";
}

TEST(ArtifactBackend, RunsAFunctionByNameForTheProfiler) {
  runtime::OpProfile profile;
  test::tiny_artifact_backend().set_profile(&profile);
  const double wall = test::tiny_artifact_backend().run_function_once("vae_decode");
  test::tiny_artifact_backend().set_profile(nullptr);
  EXPECT_GT(profile.by_op.size(), 3u);
  EXPECT_LE(profile.total_seconds(), wall);
  EXPECT_NE(error_of([] { test::tiny_artifact_backend().run_function_once("main"); }).find("has no function 'main'"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
