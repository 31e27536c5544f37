#include "targets/webgpu/codegen/webgpu_target.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "graph/op_registry.h"
#include "io/input_file.h"
#include "passes/channels_last.h"
#include "passes/fuse_conv_residual.h"
#include "passes/fuse_elementwise.h"
#include "passes/fuse_norm_activation.h"
#include "passes/merge_qkv.h"
#include "passes/narrow_index_inputs.h"
#include "passes/split_wide_attention.h"
#include "passes/verify.h"
#include "targets/webgpu/codegen/webgpu_lowering.h"

namespace websd::compiler {
namespace {

// WebGPU's default limits (the spec's), which every adapter offers.
constexpr std::int64_t kDefaultMaxBufferSize = std::int64_t{256} << 20;
constexpr std::int64_t kDefaultStorageBuffersPerStage = 8;
constexpr std::int64_t kDefaultInvocationsPerWorkgroup = 256;
constexpr std::int64_t kStorageOffsetAlignment = 256;
// The layout name of a convolution weight repacked for the implicit-GEMM template.
constexpr const char* kConvLayout = "webgpu_o_kh_kw_c";

// The composites and layout ops that the pass list turns into ops the kernels run (group_norm,
// conv2d and upsample_nearest become their channels-last forms).
bool kept_before_lowering(const std::string& op) {
  return op == "group_norm" || op == "conv2d" || op == "upsample_nearest" || webgpu::webgpu_lowers(op);
}

std::int64_t value_bytes(const TensorType& type) {
  return type.numel() * static_cast<std::int64_t>(dtype_size(type.dtype));
}

}  // namespace

std::string WebGpuTarget::name() const { return "webgpu"; }

std::string WebGpuTarget::summary() const {
  return "WebGPU (browser tab, or Node with Dawn): WGSL kernels, f32 and subgroup-matrix (tensor-core) tiers";
}

bool WebGpuTarget::supports(const std::string& op) const { return kept_before_lowering(op); }

passes::Pipeline WebGpuTarget::pass_list(const PassListHooks& hooks) const {
  passes::Pipeline pipeline = passes::default_pipeline([this](const std::string& op) { return supports(op); });
  pipeline.pop_back();  // its closing verify: ours comes after the webgpu passes
  const auto step = [](const char* name, graph::Function (*pass)(const graph::Function&)) {
    return passes::Pass{name, [pass](const graph::Function& f, passes::PassNotes&) { return pass(f); }};
  };
  // Heads too wide for the flash-attention kernel (the VAE's one head of 512) become matmuls.
  pipeline.push_back({"split_wide_attention", [](const graph::Function& f, passes::PassNotes&) {
                        return passes::split_wide_attention(f, webgpu::webgpu_attention_fits);
                      }});
  pipeline.push_back(step("channels_last", passes::to_channels_last));
  pipeline.push_back(step("fuse_conv_residual", passes::fuse_conv_residual));
  pipeline.push_back(step("fuse_norm_activation", passes::fuse_norm_activation));
  pipeline.push_back(passes::merge_qkv_pass(hooks.on_recipes));
  // A kernel binds each input and its output: at most 8 storage buffers per stage by default.
  pipeline.push_back({"fuse_elementwise", [](const graph::Function& f, passes::PassNotes&) {
                        return passes::fuse_elementwise(f, kDefaultStorageBuffersPerStage - 1);
                      }});
  pipeline.push_back(step("narrow_index_inputs", passes::narrow_index_inputs));
  pipeline.push_back({"verify", [](const graph::Function& f, passes::PassNotes&) {
                        passes::verify(f);
                        return f;
                      }});
  return pipeline;
}

passes::MemoryLimits WebGpuTarget::memory_limits() const { return {kStorageOffsetAlignment, kDefaultMaxBufferSize}; }

std::vector<TargetTier> WebGpuTarget::tiers() const {
  // Both tiers above the base are taken where offered: on an H100 (2026-12-07) their kernels passed
  // every test and the fixture's image was within tolerance; SD 1.5's UNet CFG step ran 136 ms in
  // the f16 tier (f32: 134 ms) with half the GPU memory (2.81 vs 4.66 GiB) and a shorter cold start,
  // 118 ms in the subgroup-matrix tier.
  return {{webgpu::kF32Tier, "f32 WGSL: every adapter", true},
          {webgpu::kF16Tier,
           "the f32 kernels with the weights of linear layers and convolutions held in f16 (half their GPU memory, "
           "no widening at load): adapters with shader-f16",
           true},
          {webgpu::kSubgroupMatrixTier,
           "GEMMs and convolutions on tensor cores (f16 operands, f32 accumulation), their weights held in f16: "
           "adapters with shader-f16, subgroups and chromium-experimental-subgroup-matrix (Chrome behind a flag)",
           true}};
}

// A split-K workspace is bound whole: it fits both the buffer and the binding limits.
std::int64_t WebGpuTarget::workspace_limit() const {
  return std::min(memory_limits().max_buffer_bytes, webgpu::kMaxBindingBytes);
}

std::vector<passes::NodeLaunch> WebGpuTarget::lower_node(const graph::Function& function, const graph::Node& node,
                                                         const std::string& tier) const {
  return webgpu::lower_webgpu_node(function, node, tier, workspace_limit()).launches;
}

std::optional<WeightLayout> WebGpuTarget::weight_layout(const graph::Function& function, graph::ValueId id) const {
  for (const graph::Node& node : function.nodes()) {
    if (node.op->name != "conv2d_nhwc" || node.inputs[1] != id) continue;
    const Shape shape = function.value(id).type.shape;  // O, C, KH, KW
    return WeightLayout{kConvLayout, [shape](const std::vector<float>& oihw) {
                          const std::int64_t O = shape[0], C = shape[1], KH = shape[2], KW = shape[3];
                          std::vector<float> packed(oihw.size());
                          for (std::int64_t o = 0; o < O; ++o) {
                            for (std::int64_t c = 0; c < C; ++c) {
                              for (std::int64_t kh = 0; kh < KH; ++kh) {
                                for (std::int64_t kw = 0; kw < KW; ++kw) {
                                  packed[static_cast<std::size_t>(((o * KH + kh) * KW + kw) * C + c)] =
                                      oihw[static_cast<std::size_t>(((o * C + c) * KH + kh) * KW + kw)];
                                }
                              }
                            }
                          }
                          return packed;
                        }};
  }
  return std::nullopt;
}

GeneratedKernels WebGpuTarget::generate_kernels(const graph::Module& compiled, const KernelBuildOptions& options,
                                                const std::function<void(const std::string&)>& progress) const {
  if (!options.cpu_arch.empty()) throw Error("build", "--cpu-arch is for the cpu target (webgpu kernels are WGSL)");
  const std::vector<std::string>& tiers = options.tiers;
  GeneratedKernels generated;
  std::map<std::string, std::string> files;  // path -> text, each once
  for (const std::string& tier : tiers) {
    for (const graph::Function* function : compiled.functions()) {
      for (const graph::Node& node : function->nodes()) {
        if (passes::lowers_to_view(node.op->name)) continue;
        webgpu::LoweredNode lowered = webgpu::lower_webgpu_node(*function, node, tier, workspace_limit());
        for (auto& [path, text] : lowered.files) files.emplace(path, std::move(text));
        for (const auto& launch : lowered.launches) {
          const auto known = std::find_if(generated.kernels.begin(), generated.kernels.end(),
                                          [&](const auto& k) { return k.first == launch.kernel.name; });
          if (known == generated.kernels.end()) generated.kernels.emplace_back(launch.kernel.name, launch.kernel.file);
        }
      }
    }
  }
  if (progress) progress("wrote " + std::to_string(files.size()) + " WGSL modules");
  for (auto& [path, text] : files) {
    const auto* begin = reinterpret_cast<const std::byte*>(text.data());
    generated.files.emplace_back(path, std::vector<std::byte>(begin, begin + text.size()));
    generated.sources[path] = path;
  }
  return generated;
}

std::string WebGpuTarget::device_name() const { return "webgpu"; }

std::vector<std::pair<std::string, std::vector<std::byte>>> WebGpuTarget::runtime_files() const {
  const char* given = std::getenv("WEBSD_WEB_RUNTIME");
  const std::string built = given != nullptr && *given != '\0' ? given : WEBSD_DEFAULT_WEB_RUNTIME;
  const std::string web = WEBSD_WEB_SOURCE_DIR;
  const std::vector<std::pair<std::string, std::string>> sources = {
      {"runtime/websd_web.js", built + "/websd_web.js"},
      {"runtime/websd_web.wasm", built + "/websd_web.wasm"},
      {"runtime/bridge/websd_gpu.mjs", web + "/bridge/websd_gpu.mjs"},
      {"runtime/node/node_gpu.mjs", web + "/node/node_gpu.mjs"},
      {"runtime/node/websd_node.mjs", web + "/node/websd_node.mjs"},
      {"runtime/node/shard_prefetch.mjs", web + "/node/shard_prefetch.mjs"},
      // The page (issue 21), so that the folder is all a web server needs: index.html at the root.
      {"index.html", web + "/app/index.html"},
      {"app/app.css", web + "/app/app.css"},
      {"app/app.js", web + "/app/app.js"},
      {"app/websd.js", web + "/app/websd.js"},
      {"app/artifact_files.js", web + "/app/artifact_files.js"},
      {"app/png_text.js", web + "/app/png_text.js"},
      {"app/latent_preview.js", web + "/app/latent_preview.js"}};
  std::vector<std::pair<std::string, std::vector<std::byte>>> files;
  for (const auto& [path, source] : sources) {
    std::error_code missing;
    if (!std::filesystem::exists(source, missing)) {
      throw Error("build", "the webgpu runtime file " + source +
                               " is missing: build the WebAssembly runtime first (scripts/build-wasm.sh), or point "
                               "WEBSD_WEB_RUNTIME at the folder holding websd_web.js and websd_web.wasm");
    }
    const std::string text = input_file_read("build", source, input_kinds::kArtifactFile, "the webgpu runtime file");
    const auto* begin = reinterpret_cast<const std::byte*>(text.data());
    files.emplace_back(path, std::vector<std::byte>(begin, begin + text.size()));
  }
  return files;
}

nlohmann::json WebGpuTarget::device_requirements(const std::vector<runtime::LaunchList>& lists,
                                                 const std::string& tier) const {
  std::int64_t buffer = kDefaultMaxBufferSize, binding = webgpu::kMaxBindingBytes;
  std::int64_t storage_buffers = kDefaultStorageBuffersPerStage, invocations = kDefaultInvocationsPerWorkgroup;
  for (const runtime::LaunchList& list : lists) {
    for (const auto arena : list.memory.arenas) buffer = std::max(buffer, arena);
    // Weights are held in the dtype the list names (f32 or f16) whatever the artifact's storage dtype.
    for (const auto& weight : list.weights) buffer = std::max(buffer, value_bytes(weight.type));
    for (const auto& kernel : list.kernels) {
      storage_buffers = std::max<std::int64_t>(storage_buffers, static_cast<std::int64_t>(kernel.bindings.size()));
      invocations =
          std::max(invocations, kernel.workgroup_size[0] * kernel.workgroup_size[1] * kernel.workgroup_size[2]);
    }
    for (const auto& launch : list.launches) {
      for (const auto& b : launch.bindings) {
        const runtime::LaunchValue& value = list.values[static_cast<std::size_t>(b.value)];
        const std::int64_t bytes = value_bytes(value.type);  // a weight's in the dtype the list holds it in
        binding = std::max(binding, bytes);
      }
    }
  }
  buffer = std::max(buffer, binding);
  nlohmann::json features = nlohmann::json::array();
  nlohmann::json requirements = {{"limits",
                                  {{"maxBufferSize", buffer},
                                   {"maxStorageBufferBindingSize", binding},
                                   {"maxStorageBuffersPerShaderStage", storage_buffers},
                                   {"maxComputeInvocationsPerWorkgroup", invocations}}},
                                 {"features", nlohmann::json::array()}};
  if (tier == webgpu::kF16Tier) requirements["features"] = {"shader-f16"};
  if (tier == webgpu::kSubgroupMatrixTier) {
    // The kernels' fragments and their one-subgroup-per-row workgroups (matmul_sgmat.wgsl).
    requirements["features"] = {"shader-f16", "subgroups", "chromium-experimental-subgroup-matrix"};
    requirements["subgroup_size"] = 32;
    requirements["subgroup_matrix"] = {
        {"componentType", "f16"}, {"resultComponentType", "f32"}, {"M", 16}, {"N", 16}, {"K", 16}};
  }
  return requirements;
}

const WebGpuTarget& webgpu_target() {
  static const WebGpuTarget target;
  return target;
}

}  // namespace websd::compiler
