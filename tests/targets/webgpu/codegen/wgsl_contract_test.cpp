// The contract between the compiler's lowering (webgpu_lowering.h) and the JS table that the
// kernel tests and the benchmark use (web/kernels/wgsl_templates.mjs): for nodes of every GEMM
// family of every tier, group norm and attention, the lowering's launches are given to the JS side
// with the constants the lowering chose, and the two must agree byte for byte on the uniform block,
// the entries and dispatch grids, and the module text (the JS text made as the compiler makes its
// own: every binding writable, switched-off optional operands dropped).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "graph/function_builder.h"
#include "support/fixtures.h"
#include "targets/webgpu/codegen/webgpu_lowering.h"
#include "targets/webgpu/codegen/wgsl_module.h"

namespace websd::webgpu {
namespace {

struct Case {
  std::string family;  // the JS table's
  nlohmann::json shape;
  LoweredNode lowered;
  std::size_t part = 0;  // which of the node's modules (and the launches of it) the family is
};

// The launches of `lowered` that run its module `part`.
std::vector<const passes::NodeLaunch*> launches_of(const LoweredNode& lowered, std::size_t part) {
  std::vector<const passes::NodeLaunch*> launches;
  for (const passes::NodeLaunch& launch : lowered.launches) {
    if (launch.kernel.file == lowered.files[part].first) launches.push_back(&launch);
  }
  return launches;
}

std::string hex(const std::vector<std::byte>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (const std::byte b : bytes) {
    text += digits[static_cast<unsigned>(b) >> 4];
    text += digits[static_cast<unsigned>(b) & 15];
  }
  return text;
}

// The constants the lowering prepended (the block of `const` lines after the directives), as the
// JS side takes them ({NAME: value}).
nlohmann::json constants_of(const std::string& text) {
  nlohmann::json constants = nlohmann::json::object();
  const std::regex directive(R"(^(enable|requires|diagnostic)\b.*;$)");
  const std::regex constant(R"(^const (\w+): (u32|i32|f32|bool) = ([^;]+);$)");
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (std::regex_match(l, directive)) continue;
    std::smatch m;
    if (!std::regex_match(l, m, constant)) break;
    const std::string value = m[3];
    if (m[2] == "bool") {
      constants[m[1].str()] = value == "true";
    } else {
      constants[m[1].str()] = std::stod(value);
    }
  }
  return constants;
}

// The optional operands the lowering dropped (each became a one-element private array).
std::vector<std::string> dropped_in(const std::string& text) {
  std::vector<std::string> names;
  const std::regex line(R"(var<private> (\w+): array<f32, 1>;)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

std::string read_all(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

TEST(WgslContract, TheCompilerAndTheJsTablesAgreeByteForByte) {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const Attrs conv_attrs{{"stride", std::int64_t{1}}, {"padding", std::int64_t{1}}};
  const auto x = b.input("x", {DType::kF32, {2, 80, 32}});
  const auto big = b.input("big", {DType::kF32, {16, 1024, 640}});
  const auto image = b.input("image", {DType::kF32, {2, 12, 12, 40}});
  const auto small = b.input("small", {DType::kF32, {2, 8, 8, 1280}});
  const auto q = b.input("q", {DType::kF32, {2, 8, 64, 40}});
  const auto k = b.input("k", {DType::kF32, {2, 8, 64, 40}});
  const auto v = b.input("v", {DType::kF32, {2, 8, 64, 40}});
  const auto t = b.input("t", {DType::kF32, {2, 1280}});
  const auto latents = b.input("latents", {DType::kF32, {2, 16, 16, 32}});
  std::vector<graph::ValueId> outputs = {
      b.op("linear", {x, b.weight("w", {96, 32}), b.weight("wb", {96})}),
      b.op("linear", {big, b.weight("w2", {1024, 640})}),
      b.op("conv2d_nhwc", {image, b.weight("k", {48, 40, 3, 3}), b.weight("kb", {48})}, conv_attrs),
      b.op("conv2d_nhwc", {small, b.weight("k2", {1280, 1280, 3, 3}), b.weight("kb2", {1280})}, conv_attrs),
      b.op("group_norm_nhwc", {image, b.weight("g", {40}), b.weight("be", {40})},
           {{"groups", std::int64_t{8}}, {"eps", 1e-6}, {"activation", std::string("silu")}}),
      b.op("attention", {q, k, v}, {{"scale", 0.158113883}, {"causal", std::int64_t{0}}}),
      b.op("linear", {t, b.weight("w3", {1280, 1280}), b.weight("wb3", {1280})}),
      b.op("conv2d_nhwc", {latents, b.weight("k4", {64, 32, 3, 3}), b.weight("kb4", {64})}, conv_attrs)};
  function.set_outputs(outputs);
  const auto& nodes = function.nodes();
  std::vector<Case> cases = {
      {"matmul", {{"M", 160}, {"N", 96}, {"K", 32}}, lower_webgpu_node(function, nodes[0])},
      {"matmul_f16", {{"M", 160}, {"N", 96}, {"K", 32}}, lower_webgpu_node(function, nodes[0], kF16Tier)},
      {"matmul_sgmat", {{"M", 160}, {"N", 96}, {"K", 32}}, lower_webgpu_node(function, nodes[0], kSubgroupMatrixTier)},
      // f16 activations: pad_to_f16 into the workspace, then the GEMM reading both operands' fragments.
      {"pad_to_f16",
       {{"N", 1}, {"H", 1}, {"W", 16384}, {"C", 640}, {"pad", 0}},
       lower_webgpu_node(function, nodes[1], kSubgroupMatrixTier)},
      {"matmul_sgmat_a16",
       {{"M", 16384}, {"N", 1024}, {"K", 640}},
       lower_webgpu_node(function, nodes[1], kSubgroupMatrixTier),
       1},
      {"conv2d_nhwc",
       {{"N", 2}, {"H", 12}, {"W", 12}, {"C", 40}, {"O", 48}, {"KH", 3}, {"stride", 1}, {"pad", 1}},
       lower_webgpu_node(function, nodes[2])},
      {"conv2d_nhwc_f16",
       {{"N", 2}, {"H", 12}, {"W", 12}, {"C", 40}, {"O", 48}, {"KH", 3}, {"stride", 1}, {"pad", 1}},
       lower_webgpu_node(function, nodes[2], kF16Tier)},
      {"conv2d_nhwc_sgmat",
       {{"N", 2}, {"H", 12}, {"W", 12}, {"C", 40}, {"O", 48}, {"KH", 3}, {"stride", 1}, {"pad", 1}},
       lower_webgpu_node(function, nodes[2], kSubgroupMatrixTier)},
      {"conv2d_nhwc_sgmat",  // split-K: two entries
       {{"N", 2}, {"H", 8}, {"W", 8}, {"C", 1280}, {"O", 1280}, {"KH", 3}, {"stride", 1}, {"pad", 1}},
       lower_webgpu_node(function, nodes[3], kSubgroupMatrixTier)},
      {"group_norm_nhwc",
       {{"N", 2}, {"H", 12}, {"W", 12}, {"C", 40}, {"G", 8}, {"eps", 1e-6}},
       lower_webgpu_node(function, nodes[4])},
      {"attention",
       {{"B", 2}, {"H", 8}, {"Sq", 64}, {"Skv", 64}, {"D", 40}, {"scale", 0.158113883}},
       lower_webgpu_node(function, nodes[5])},
      // Split-K in the other GEMM families (two entries each).
      {"conv2d_nhwc",
       {{"N", 2}, {"H", 8}, {"W", 8}, {"C", 1280}, {"O", 1280}, {"KH", 3}, {"stride", 1}, {"pad", 1}},
       lower_webgpu_node(function, nodes[3])},
      {"matmul", {{"M", 2}, {"N", 1280}, {"K", 1280}}, lower_webgpu_node(function, nodes[6])},
      {"matmul_f16", {{"M", 2}, {"N", 1280}, {"K", 1280}}, lower_webgpu_node(function, nodes[6], kF16Tier)},
      {"matmul_sgmat",
       {{"M", 2}, {"N", 1280}, {"K", 1280}},
       lower_webgpu_node(function, nodes[6], kSubgroupMatrixTier)},
      {"pad_to_f16",
       {{"N", 2}, {"H", 16}, {"W", 16}, {"C", 32}, {"pad", 1}},
       lower_webgpu_node(function, nodes[7], kSubgroupMatrixTier)},
      {"conv2d_nhwc_sgmat_a16",
       {{"N", 2}, {"H", 16}, {"W", 16}, {"C", 32}, {"O", 64}, {"KH", 3}, {"stride", 1}, {"pad", 1}},
       lower_webgpu_node(function, nodes[7], kSubgroupMatrixTier),
       1}};
  for (const std::size_t split : {8, 11, 12, 13, 14}) {
    ASSERT_GT(cases[split].lowered.launches.size(), 1u) << "case " << split << " no longer splits K";
  }

  const std::string dir = test::make_temp_dir("wgsl-contract");
  nlohmann::json jobs = nlohmann::json::array();
  for (const Case& c : cases) {
    jobs.push_back(
        {{"family", c.family}, {"shape", c.shape}, {"constants", constants_of(c.lowered.files[c.part].second)}});
  }
  std::ofstream(dir + "/jobs.json") << jobs.dump();
  const std::string command = "node " + std::string(WEBSD_TEST_SOURCE_DIR) + "/wgsl_contract.mjs " +
                              std::string(WEBSD_WEB_SOURCE_DIR) + "/kernels/wgsl_templates.mjs " + dir + "/jobs.json " +
                              dir + "/out.json 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string said;
  for (char buffer[512]; std::fgets(buffer, sizeof buffer, pipe) != nullptr;) said += buffer;
  ASSERT_EQ(::pclose(pipe), 0) << said;
  const nlohmann::json results = nlohmann::json::parse(read_all(dir + "/out.json"));
  ASSERT_EQ(results.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const nlohmann::json& js = results[i];
    SCOPED_TRACE(c.family + " " + c.shape.dump());
    const std::vector<const passes::NodeLaunch*> launches = launches_of(c.lowered, c.part);
    ASSERT_EQ(js["launches"].size(), launches.size());
    for (std::size_t l = 0; l < launches.size(); ++l) {
      const passes::NodeLaunch& launch = *launches[l];
      EXPECT_EQ(js["launches"][l]["entry"], launch.kernel.entry);
      EXPECT_EQ(js["launches"][l]["dispatch"].get<std::vector<std::int64_t>>(),
                std::vector<std::int64_t>(launch.dispatch.begin(), launch.dispatch.end()));
      EXPECT_EQ(js["uniforms"], hex(launch.uniforms));
    }
    const std::string& text = c.lowered.files[c.part].second;
    EXPECT_EQ(wgsl_drop_bindings(wgsl_all_bindings_writable(js["code"].get<std::string>()), dropped_in(text)), text);
  }
}

}  // namespace
}  // namespace websd::webgpu
