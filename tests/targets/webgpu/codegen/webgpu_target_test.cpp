// `websd build --target webgpu` on the tiny fixture model (compiler side of issue 20): every op of
// the SD graphs lowers to WGSL, the launch lists pass the runtime's reader, every kernel is a WGSL
// file of the artifact whose bindings match its table entry (all read_write, consecutive, the
// uniform block last), token ids are int32, convolution weights are repacked, and the manifest
// states the limits a device must offer.
#include "targets/webgpu/codegen/webgpu_target.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "compiler/build_artifact.h"
#include "compiler/target_registry.h"
#include "core/error.h"
#include "import/diffusers_checkpoint.h"
#include "runtime/launch_list.h"
#include "support/fixtures.h"

namespace websd::compiler {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

// The fixture built once for the suite.
const std::string& fixture_artifact() {
  static const std::string out = [] {
    const std::string dir = websd::test::make_temp_dir("webgpu-target") + "/art";
    BuildOptions options;
    options.checkpoint = std::make_shared<const DiffusersCheckpoint>(
        DiffusersCheckpoint::open(websd::test::fixture_path("tiny-sd15/model")));
    options.out = dir;
    build_artifact(options, find_target("webgpu"));
    return dir;
  }();
  return out;
}

nlohmann::json manifest() { return nlohmann::json::parse(read_text(fixture_artifact() + "/manifest.json")); }

TEST(WebGpuTarget, IsRegisteredAndSupportsTheSdOpsButNotInventedOnes) {
  EXPECT_EQ(&find_target("webgpu"), &webgpu_target());
  for (const char* op : {"linear", "attention", "conv2d", "group_norm", "layer_norm", "geglu", "fused_elementwise"}) {
    EXPECT_TRUE(webgpu_target().supports(op)) << op;
  }
  EXPECT_FALSE(webgpu_target().supports("timestep_embedding"));  // lowered to primitives
  EXPECT_FALSE(webgpu_target().supports("warp_drive"));
}

TEST(WebGpuTarget, TheFixtureBuildsWithEveryKernelAWgslFileOfTheArtifact) {
  const nlohmann::json m = manifest();
  EXPECT_EQ(m["target"], "webgpu");
  const nlohmann::json& lists = m["sections"]["launch_lists"];
  for (const char* symbol : {"clip", "unet", "unet_cfg", "vae_decode", "vae_encode", "image_to_rgba"}) {
    ASSERT_TRUE(lists.contains(symbol)) << symbol;
  }
  const std::regex storage(R"(@group\(0\) @binding\((\d+)\) var<storage, read_write>)");
  const std::regex uniform(R"(@group\(0\) @binding\((\d+)\) var<uniform>)");
  std::size_t kernels = 0;
  for (const auto& [symbol, json] : lists.items()) {
    const runtime::LaunchList list = runtime::launch_list_from_json(json);  // the runtime's checks
    for (const runtime::Kernel& kernel : list.kernels) {
      ++kernels;
      ASSERT_EQ(kernel.source, "file") << symbol << " " << kernel.name;
      const std::string text = read_text(fixture_artifact() + "/" + kernel.file);
      ASSERT_FALSE(text.empty()) << kernel.file;
      EXPECT_EQ(text.find("var<storage, read>"), std::string::npos) << kernel.file;
      EXPECT_NE(text.find("fn " + kernel.entry + "("), std::string::npos) << kernel.file << " " << kernel.entry;
      std::size_t count = 0;
      for (auto it = std::sregex_iterator(text.begin(), text.end(), storage); it != std::sregex_iterator(); ++it) {
        EXPECT_EQ(std::stoul((*it)[1]), count++) << kernel.file;
      }
      EXPECT_EQ(count, kernel.bindings.size()) << kernel.file;
      std::smatch match;
      if (kernel.uniform_bytes > 0) {
        ASSERT_TRUE(std::regex_search(text, match, uniform)) << kernel.file;
        EXPECT_EQ(std::stoul(match[1]), count) << kernel.file;
      } else {
        EXPECT_FALSE(std::regex_search(text, match, uniform)) << kernel.file;
      }
    }
    for (const runtime::Launch& launch : list.launches) {
      for (const auto d : launch.dispatch) EXPECT_TRUE(d >= 1 && d <= 65535) << symbol;
    }
  }
  EXPECT_GT(kernels, 50u);
  // Each kernel's source is its WGSL module (what `websd inspect --source` prints).
  for (const auto& entry : m["sections"]["kernels"]) EXPECT_EQ(entry["source"], entry["library"]) << entry;
}

TEST(WebGpuTarget, IdsAreInt32ConvWeightsRepackedAndLimitsStated) {
  const nlohmann::json m = manifest();
  const runtime::LaunchList clip = runtime::launch_list_from_json(m["sections"]["launch_lists"]["clip"]);
  EXPECT_EQ(clip.values[clip.inputs[0]].type.dtype, DType::kI32);
  const runtime::LaunchList unet = runtime::launch_list_from_json(m["sections"]["launch_lists"]["unet"]);
  std::size_t packed = 0;
  for (const auto& weight : unet.weights) {
    if (weight.layout.empty()) continue;
    EXPECT_EQ(weight.layout, "webgpu_o_kh_kw_c");
    EXPECT_EQ(weight.type.rank(), 4);
    ++packed;
  }
  EXPECT_GT(packed, 0u);
  EXPECT_EQ(unet.memory.alignment, 256);
  const nlohmann::json& limits = m["sections"]["device_requirements"]["limits"];
  EXPECT_EQ(limits["maxStorageBufferBindingSize"], 128 << 20);  // the tiny model stays within the defaults
  EXPECT_EQ(limits["maxBufferSize"], 256 << 20);
  EXPECT_EQ(limits["maxStorageBuffersPerShaderStage"], 8);
  EXPECT_EQ(limits["maxComputeInvocationsPerWorkgroup"], 256);
  EXPECT_TRUE(m["sections"]["device_requirements"]["features"].empty());
}

// The webgpu target with its largest buffer set artificially low, as a small adapter would have it.
class WebGpuTargetWithBufferLimit : public WebGpuTarget {
 public:
  explicit WebGpuTargetWithBufferLimit(std::int64_t bytes) : bytes_(bytes) {}
  passes::MemoryLimits memory_limits() const override { return {256, bytes_}; }

 private:
  std::int64_t bytes_;
};

std::string build_with(const Target& target, const std::string& tag) {
  BuildOptions options;
  options.checkpoint = std::make_shared<const DiffusersCheckpoint>(
      DiffusersCheckpoint::open(websd::test::fixture_path("tiny-sd15/model")));
  options.out = websd::test::make_temp_dir(tag) + "/art";
  build_artifact(options, target);
  return options.out;
}

TEST(WebGpuTarget, EveryTierIsWrittenWithItsOwnKernelsOverTheSameWeights) {
  const nlohmann::json m = manifest();
  const nlohmann::json& tiers = m["sections"]["tiers"];
  ASSERT_EQ(tiers.size(), 3u);
  EXPECT_EQ(tiers[0]["name"], "f32");
  EXPECT_FALSE(tiers[0].contains("device_requirements"));  // the base's: the device_requirements section
  EXPECT_EQ(tiers[1]["name"], "f16");
  EXPECT_EQ(tiers[1]["device_requirements"]["features"], nlohmann::json({"shader-f16"}));
  EXPECT_EQ(tiers[2]["name"], "subgroup-matrix");
  EXPECT_EQ(tiers[0]["automatic"], true);
  EXPECT_EQ(tiers[1]["automatic"], true);  // both verified on an H100: taken where offered
  EXPECT_EQ(tiers[2]["automatic"], true);
  const nlohmann::json& needs = tiers[2]["device_requirements"];
  EXPECT_EQ(needs["features"], nlohmann::json({"shader-f16", "subgroups", "chromium-experimental-subgroup-matrix"}));
  EXPECT_EQ(needs["subgroup_size"], 32);
  EXPECT_EQ(needs["subgroup_matrix"]["componentType"], "f16");
  const nlohmann::json& base_lists = m["sections"]["launch_lists"];
  const nlohmann::json& tier_lists = m["sections"]["tier_launch_lists"]["subgroup-matrix"];
  ASSERT_EQ(tier_lists.size(), base_lists.size());
  std::size_t tensor_core_launches = 0;
  // Both other tiers hold the weights of linear layers and convolutions in f16, the base none.
  for (const char* tier : {"f16", "subgroup-matrix"}) {
    std::size_t f16_weights = 0, base_f16_weights = 0;
    for (const auto& [symbol, json] : base_lists.items()) {
      for (const auto& weight : runtime::launch_list_from_json(json).weights) {
        base_f16_weights += weight.type.dtype == DType::kF16 ? 1 : 0;
      }
      const runtime::LaunchList tiered =
          runtime::launch_list_from_json(m["sections"]["tier_launch_lists"][tier][symbol]);
      for (const auto& weight : tiered.weights) f16_weights += weight.type.dtype == DType::kF16 ? 1 : 0;
    }
    EXPECT_EQ(base_f16_weights, 0u);
    EXPECT_GT(f16_weights, 50u) << tier;
  }
  for (const auto& [symbol, json] : base_lists.items()) {
    ASSERT_TRUE(tier_lists.contains(symbol)) << symbol;
    const runtime::LaunchList base = runtime::launch_list_from_json(json);
    const runtime::LaunchList tiered = runtime::launch_list_from_json(tier_lists[symbol]);
    // The same function: its inputs, outputs and weights (each tier splits K where its own tiles
    // leave the GPU short, so the launch counts differ).
    EXPECT_EQ(tiered.inputs, base.inputs) << symbol;
    EXPECT_EQ(tiered.outputs, base.outputs) << symbol;
    ASSERT_EQ(tiered.weights.size(), base.weights.size()) << symbol;
    for (std::size_t i = 0; i < base.weights.size(); ++i) EXPECT_EQ(tiered.weights[i].name, base.weights[i].name);
    for (const runtime::Launch& launch : tiered.launches) {
      const runtime::Kernel& kernel = tiered.kernel_of(launch);
      if (kernel.file.find("_sgmat_") == std::string::npos) continue;
      ++tensor_core_launches;
      if (kernel.entry == "splitk_reduce") {
        EXPECT_EQ(kernel.workgroup_size, (std::array<std::int64_t, 3>{256, 1, 1})) << kernel.file;
        continue;
      }
      EXPECT_EQ(kernel.workgroup_size[0], 32) << kernel.file;  // one subgroup per row: 1 or 4 rows
      EXPECT_TRUE(kernel.workgroup_size[1] == 1 || kernel.workgroup_size[1] == 4) << kernel.file;
      EXPECT_EQ(read_text(fixture_artifact() + "/" + kernel.file).rfind("enable f16;\nenable subgroups;\n", 0), 0u)
          << kernel.file;
    }
  }
  EXPECT_GT(tensor_core_launches, 20u);
}

TEST(WebGpuTarget, TiersCanBeChosenAndAnUnknownOneIsRefusedNamingThem) {
  const std::string dir = websd::test::make_temp_dir("webgpu-tiers") + "/art";
  BuildOptions options;
  options.checkpoint = std::make_shared<const DiffusersCheckpoint>(
      DiffusersCheckpoint::open(websd::test::fixture_path("tiny-sd15/model")));
  options.out = dir;
  options.tiers = {"f32"};
  build_artifact(options, webgpu_target());
  const nlohmann::json m = nlohmann::json::parse(read_text(dir + "/manifest.json"));
  ASSERT_EQ(m["sections"]["tiers"].size(), 1u);
  EXPECT_TRUE(m["sections"]["tier_launch_lists"].empty());
  for (const auto& file : m["sections"]["files"]) {
    EXPECT_EQ(file["path"].get<std::string>().find("_sgmat_"), std::string::npos) << file["path"];
  }
  options.out = dir + "2";
  options.tiers = {"tensor"};
  try {
    build_artifact(options, webgpu_target());
    ADD_FAILURE() << "an unknown tier was built";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no tier 'tensor' (it has f32, f16, subgroup-matrix)"), std::string::npos)
        << error.what();
  }
}

TEST(WebGpuTarget, ALowBufferLimitSplitsTheArenasAndATooLowOneRefusesNamingTheValue) {
  // The VAE decoder's largest activation is 128x128x32 f32 = 2 MiB: a 3 MiB limit splits its arenas.
  const std::string dir = build_with(WebGpuTargetWithBufferLimit(3 << 20), "webgpu-low-limit");
  const nlohmann::json m = nlohmann::json::parse(read_text(dir + "/manifest.json"));
  const runtime::LaunchList vae = runtime::launch_list_from_json(m["sections"]["launch_lists"]["vae_decode"]);
  EXPECT_GT(vae.memory.arenas.size(), 1u);
  for (const auto arena : vae.memory.arenas) EXPECT_LE(arena, 3 << 20);
  // Below one activation: refused at build time, naming the function, the value and the limit.
  try {
    build_with(WebGpuTargetWithBufferLimit(1 << 20), "webgpu-too-low-limit");
    ADD_FAILURE() << "a value larger than the limit was built";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("vae_decode: value"), std::string::npos) << message;
    EXPECT_NE(message.find("1048576 bytes"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace websd::compiler
