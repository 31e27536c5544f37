// What the compiler needs of a target to build an artifact for it (build_artifact.h). A target
// describes itself statically: the ops its runtime executes, its pass list, its memory limits, the
// launches each node runs as, the form its weights are stored in and the kernels it generates, so an artifact for a
// device can be built on a machine without that device. Targets are found by name in the registry (target_registry.h);
// runtime libraries never link this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/function.h"
#include "graph/module.h"
#include "passes/launch_lowering.h"
#include "passes/memory_plan.h"
#include "passes/pass_pipeline.h"
#include "passes/weight_recipe.h"
#include "runtime/launch_list.h"
#include "tuning/tuning_db.h"

namespace websd::compiler {

// What the build driver hands a target's pass list, and hears back from it.
struct PassListHooks {
  const tuning::TuningDb* tuning_db = nullptr;  // records to apply, or none
  // The type convolutions, linear layers and attention compute in where the target offers a choice (the cpu target:
  // f32, or bf16 on CPUs with native bf16, or f16: f32 over convolution and linear weights held in f16); f32
  // elsewhere.
  DType compute = DType::kF32;
  // merge_qkv's weight recipes for one function: the driver materializes the merged weights.
  std::function<void(const std::string& symbol, const std::vector<passes::WeightRecipe>&)> on_recipes;
  // Tuning coverage of one function: tunable kernels, and how many of them had a record.
  std::function<void(std::size_t tuned, std::size_t tunable)> on_tuning;
};

// A weight stored in a target-specific layout, and the transform from row-major values to it.
struct WeightLayout {
  std::string name;
  std::function<std::vector<float>(const std::vector<float>& row_major)> pack;
};

// The kernels a target generated for a compiled module: files for the artifact and the manifest's
// `kernels` section entries.
struct GeneratedKernels {
  std::vector<std::pair<std::string, std::vector<std::byte>>> files;  // artifact path -> bytes
  std::vector<std::pair<std::string, std::string>> kernels;           // kernel name -> file holding it
  // A kernel file (of `kernels`) -> the artifact file that keeps its source to read (`websd inspect
  // --source`): a WGSL module is its own; a compiled library has its generated C++ beside it.
  std::map<std::string, std::string> sources;
  // What running them asks of the device besides the launch lists' needs, merged into the
  // manifest's device_requirements (the CPU: {"cpu_arch": ...}, the instruction set its library is
  // built for); null: nothing.
  nlohmann::json requirements;
  double compile_seconds = 0;
};

// What a build asks of a target's generated kernels.
struct KernelBuildOptions {
  std::vector<std::string> tiers;  // as lower_node takes them
  std::string cpu_arch;  // the CPU target's instruction set (targets/cpu/runtime/cpu_arch.h); empty: its default
};

// A kernel tier: a whole second lowering of the same compiled functions (the same graph, values
// and weights; other kernels and the workspaces they need) for devices that offer more than the
// base tier needs. The
// artifact holds every tier built; the runtime picks one at load.
struct TargetTier {
  std::string name;     // what `websd build --tiers` and `--tier` take
  std::string summary;  // one line for listings
  // Whether a runtime may pick the tier by itself where the device offers it; false for a tier
  // that runs only when asked (`--tier`): one not yet verified on the devices it is for.
  bool automatic = true;
};

class Target {
 public:
  virtual ~Target() = default;

  // The name `websd build --target` takes and the artifact's manifest records.
  virtual std::string name() const = 0;
  // One line for listings (`websd build --target` with an unknown name).
  virtual std::string summary() const = 0;
  // Whether this target's runtime executes `op` (views, passes::lowers_to_view, need no kernel).
  virtual bool supports(const std::string& op) const = 0;
  virtual passes::Pipeline pass_list(const PassListHooks& hooks) const = 0;
  // The alignment of arena offsets and the largest buffer the target's device binds.
  virtual passes::MemoryLimits memory_limits() const = 0;
  // The target's kernel tiers, the base tier first (every function is lowered for it, and it runs
  // wherever the target does); empty for a target of one lowering.
  virtual std::vector<TargetTier> tiers() const { return {}; }
  // The launches a node of a compiled function runs as in `tier` (one of tiers(), or empty for a
  // target without tiers; passes::builtin_lowering for the runtime's own kernels): kernels, and
  // for GPU targets dispatch grids, uniforms and workspace.
  virtual std::vector<passes::NodeLaunch> lower_node(const graph::Function& function, const graph::Node& node,
                                                     const std::string& tier) const = 0;
  // The layout weight `id` of a compiled function is stored in; nullopt for plain row-major.
  virtual std::optional<WeightLayout> weight_layout(const graph::Function& function, graph::ValueId id) const = 0;
  // Generates (and, where the target needs it, compiles) the kernels of the compiled functions in
  // each of options.tiers, for options.cpu_arch where the target compiles for a CPU. Throws
  // websd::Error("build") for an option the target does not take.
  virtual GeneratedKernels generate_kernels(const graph::Module& compiled, const KernelBuildOptions& options,
                                            const std::function<void(const std::string&)>& progress) const = 0;
  // The device the artifact's kernels and weight layouts were made for (recorded in the model section).
  virtual std::string device_name() const = 0;
  // Files the artifact carries besides kernels and weights so that it runs where the target does
  // (webgpu: the WebAssembly runtime and its JavaScript, for a web server or the Node runner):
  // artifact path -> bytes. Throws websd::Error("build") when they are not built.
  virtual std::vector<std::pair<std::string, std::vector<std::byte>>> runtime_files() const = 0;
  // What a device must offer to run these launch lists of `tier`, for the manifest's
  // `device_requirements` section and each tier's (WebGPU: the limits and features to request from
  // the adapter); null for none.
  virtual nlohmann::json device_requirements(const std::vector<runtime::LaunchList>& lists,
                                             const std::string& tier) const = 0;
};

}  // namespace websd::compiler
