#include "targets/cpu/codegen/cpu_target.h"

#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "graph/op_registry.h"
#include "io/folder_lock.h"
#include "io/input_file.h"
#include "io/interrupt_cleanup.h"
#include "passes/channels_last.h"
#include "passes/fuse_conv_residual.h"
#include "passes/fuse_elementwise.h"
#include "passes/fuse_norm_activation.h"
#include "passes/launch_lowering.h"
#include "passes/merge_qkv.h"
#include "passes/verify.h"
#include "targets/cpu/codegen/cpu_kernel_source.h"
#include "targets/cpu/codegen/shared_library_compiler.h"
#include "targets/cpu/reference/cpu_executor.h"
#include "targets/cpu/runtime/cpu_arch.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "tuning/apply_tuning.h"
#include "tuning/cpu_device.h"

namespace websd::compiler {
namespace fs = std::filesystem;
namespace {

// Whether `program` is an executable file in a folder of $PATH.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path != nullptr ? path : "";
  for (std::size_t begin = 0; begin <= folders.size();) {
    const std::size_t end = std::min(folders.find(':', begin), folders.size());
    const std::string folder = folders.substr(begin, end - begin);
    if (!folder.empty() && ::access((folder + "/" + program).c_str(), X_OK) == 0) return true;
    begin = end + 1;
  }
  return false;
}

// How the kernel library is compiled for `arch` (one of cpu::kCpuArchs): -march of the level, and
// for the other family the cross compiler Debian ships (g++-aarch64-linux-gnu, g++-x86-64-linux-gnu).
codegen::SharedLibraryOptions library_options(const std::string& arch) {
  codegen::SharedLibraryOptions options;
  const bool arm = arch == "aarch64";
  options.march = arm ? "armv8-a" : arch;
  if (arm != (cpu::host_cpu_arch() == "aarch64")) {
    options.compiler = arm ? "aarch64-linux-gnu-g++" : "x86_64-linux-gnu-g++";
    if (!on_path(options.compiler)) {
      throw Error("build", "--cpu-arch " + arch + " needs the cross compiler " + options.compiler +
                               ", which is not installed (Debian: apt-get install " +
                               (arm ? "g++-aarch64-linux-gnu" : "g++-x86-64-linux-gnu") + ")");
    }
  }
  return options;
}

constexpr const char* kKernelLibraryPath = "kernels/cpu_kernels.so";
// Its generated C++, kept to read (`websd inspect --source KERNEL`).
constexpr const char* kKernelSourcePath = "kernels/cpu_kernels.cpp";

std::vector<std::byte> read_file_bytes(const std::string& path) {
  return InputFile("build", path, input_kinds::kArtifactFile).read_all_bytes();
}

// Every convolution and linear layer reads its activations and weights as bf16, and attention's two
// products take bf16 operands (all accumulating in f32): the `compute` attribute the kernels and the
// weight packing read. Norms, attention's softmax statistics, the elementwise ops and everything
// the scheduler sees stay f32.
graph::Function products_in_bf16(const graph::Function& function) {
  std::vector<graph::Node> nodes = function.nodes();
  for (auto& node : nodes) {
    const std::string& op = node.op->name;
    if (op == "conv2d_nhwc" || op == "linear" || op == "attention") node.attrs.set("compute", std::string("bf16"));
  }
  // An attribute the op accepts changes no value type, so the values stay as they are.
  return graph::Function::from_parts(function.symbol(), function.values(), std::move(nodes), function.inputs(),
                                     function.weights(), function.outputs());
}

// Every convolution and linear layer holds its weight in f16 (half the memory of f32, for CPUs
// without native bf16) and widens it to f32 for each call: the `weights` attribute the kernels and
// the weight packing read. Everything computes in f32.
graph::Function weights_in_f16(const graph::Function& function) {
  std::vector<graph::Node> nodes = function.nodes();
  for (auto& node : nodes) {
    const std::string& op = node.op->name;
    if (op == "conv2d_nhwc" || op == "linear") node.attrs.set("weights", std::string("f16"));
  }
  return graph::Function::from_parts(function.symbol(), function.values(), std::move(nodes), function.inputs(),
                                     function.weights(), function.outputs());
}

}  // namespace

std::string CpuTarget::name() const { return "cpu"; }

std::string CpuTarget::summary() const { return "this machine's CPU: oneDNN and generated C++ kernels"; }

bool CpuTarget::supports(const std::string& op) const { return cpu::cpu_supports(op); }

passes::Pipeline CpuTarget::pass_list(const PassListHooks& hooks) const {
  passes::Pipeline pipeline = passes::default_pipeline([this](const std::string& op) { return supports(op); });
  pipeline.pop_back();  // its closing verify: ours comes after the CPU passes
  pipeline.push_back(
      {"channels_last", [](const graph::Function& f, passes::PassNotes&) { return passes::to_channels_last(f); }});
  pipeline.push_back({"fuse_conv_residual",
                      [](const graph::Function& f, passes::PassNotes&) { return passes::fuse_conv_residual(f); }});
  pipeline.push_back({"fuse_norm_activation",
                      [](const graph::Function& f, passes::PassNotes&) { return passes::fuse_norm_activation(f); }});
  pipeline.push_back(passes::merge_qkv_pass(hooks.on_recipes));
  pipeline.push_back(
      {"fuse_elementwise", [](const graph::Function& f, passes::PassNotes&) { return passes::fuse_elementwise(f); }});
  pipeline.push_back({"apply_tuning", [tuning_db = hooks.tuning_db, on_tuning = hooks.on_tuning](
                                          const graph::Function& f, passes::PassNotes&) {
                        tuning::TunedFunction tuned =
                            tuning::apply_tuning(f, tuning_db, "cpu", tuning::cpu_device_name());
                        if (on_tuning) on_tuning(tuned.tuned_count, tuned.tunable_count);
                        return std::move(tuned.function);
                      }});
  if (hooks.compute == DType::kBF16) {
    pipeline.push_back(
        {"products_in_bf16", [](const graph::Function& f, passes::PassNotes&) { return products_in_bf16(f); }});
  } else if (hooks.compute == DType::kF16) {
    pipeline.push_back(
        {"weights_in_f16", [](const graph::Function& f, passes::PassNotes&) { return weights_in_f16(f); }});
  } else if (hooks.compute != DType::kF32) {
    throw Error("build", "the cpu target computes in f32 or bf16 (or in f32 over weights held in f16), not " +
                             dtype_lower_name(hooks.compute));
  }
  pipeline.push_back({"verify", [](const graph::Function& f, passes::PassNotes&) {
                        passes::verify(f);
                        return f;
                      }});
  return pipeline;
}

// Host memory: 64-byte alignment (cache lines, AVX-512 loads), no buffer limit worth planning for.
passes::MemoryLimits CpuTarget::memory_limits() const { return {}; }

// Fused elementwise groups run as entry points of the generated library, every other op as the
// runtime's own kernel.
std::vector<passes::NodeLaunch> CpuTarget::lower_node(const graph::Function&, const graph::Node& node,
                                                      const std::string&) const {
  runtime::Kernel kernel = passes::builtin_kernel(node);
  if (node.op->name == "fused_elementwise") {
    kernel.source = "file";
    kernel.file = kKernelLibraryPath;
    kernel.entry = node.attrs.get_string("kernel", node.op->name);
    kernel.name = kernel.entry;
  }
  return {passes::single_launch(node, std::move(kernel))};
}

std::optional<WeightLayout> CpuTarget::weight_layout(const graph::Function& function, graph::ValueId id) const {
  std::optional<cpu::WeightPacking> packing = cpu::cpu_weight_packing(function, id);
  if (!packing) return std::nullopt;
  return WeightLayout{packing->layout, std::move(packing->pack)};
}

GeneratedKernels CpuTarget::generate_kernels(const graph::Module& compiled, const KernelBuildOptions& options,
                                             const std::function<void(const std::string&)>& progress) const {
  const std::string arch = options.cpu_arch.empty() ? std::string(cpu::kDefaultCpuArch) : options.cpu_arch;
  if (!cpu::is_cpu_arch(arch)) {
    throw Error("build",
                "--cpu-arch " + arch + ": not an instruction set websd builds for (use " + cpu::cpu_arch_list() + ")");
  }
  const codegen::SharedLibraryOptions compile = library_options(arch);
  GeneratedKernels generated;
  const std::vector<codegen::CpuKernelSpec> specs = codegen::cpu_kernel_specs(compiled);
  if (specs.empty()) return generated;
  generated.requirements = {{"cpu_arch", arch}};
  if (progress) progress("compiling " + std::to_string(specs.size()) + " generated kernels for " + arch);
  // The compiler's scratch folder, locked while this build uses it (io/folder_lock.h); those that
  // killed builds left are removed first. (Older websd versions named theirs websd-build-<pid> and
  // held no lock: a different prefix keeps the sweep off their live folders.)
  const std::string temp = fs::temp_directory_path().string();
  for (const std::string& path : remove_abandoned_folders(temp, "websd-kernels-")) {
    if (progress) progress("removed " + path + ", left by a build that was killed");
  }
  FolderLock lock;
  const CleanupOnInterrupt cleanup([&] {
    lock = FolderLock::create(temp + "/websd-kernels-" + std::to_string(::getpid()) + "-XXXXXX", "codegen");
    return lock.path();
  });
  const fs::path scratch = lock.path();
  try {
    const std::string source = codegen::cpu_kernel_source(specs);
    const codegen::SharedLibraryBuild library =
        codegen::compile_shared_library(source, (scratch / "cpu_kernels.so").string(), compile);
    generated.compile_seconds = library.compile_seconds;
    generated.files.emplace_back(kKernelLibraryPath, read_file_bytes(library.library_path));
    const auto* text = reinterpret_cast<const std::byte*>(source.data());
    generated.files.emplace_back(kKernelSourcePath, std::vector<std::byte>(text, text + source.size()));
    generated.sources[kKernelLibraryPath] = kKernelSourcePath;
  } catch (...) {
    fs::remove_all(scratch);
    throw;
  }
  fs::remove_all(scratch);
  for (const auto& spec : specs) generated.kernels.emplace_back(spec.name, kKernelLibraryPath);
  return generated;
}

std::string CpuTarget::device_name() const { return tuning::cpu_device_name(); }

// The websd binary that runs a CPU artifact is its runtime: nothing to carry.
std::vector<std::pair<std::string, std::vector<std::byte>>> CpuTarget::runtime_files() const { return {}; }

// Host memory has no limits worth stating: the executor checks arenas against the device at load.
nlohmann::json CpuTarget::device_requirements(const std::vector<runtime::LaunchList>&, const std::string&) const {
  return nullptr;
}

const CpuTarget& cpu_target() {
  static const CpuTarget target;
  return target;
}

}  // namespace websd::compiler
