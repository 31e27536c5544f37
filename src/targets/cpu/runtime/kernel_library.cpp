#include "targets/cpu/runtime/kernel_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"
#include "targets/cpu/runtime/parallel.h"

namespace websd::cpu {
namespace {

// The runtime's side of websd_parallel_for_fn: the OpenMP pool of parallel.h (`pool` unused).
void parallel_for_callback(void*, std::int64_t count, std::int64_t min_chunk, websd_range_fn body, void* context) {
  parallel_for(count, std::max<std::int64_t>(1, min_chunk),
               [&](std::int64_t begin, std::int64_t end) { body(context, begin, end); });
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw Error("artifact", path + ": " + problem);
}

Shape read_shape(const nlohmann::json& json, const std::string& path, const std::string& what) {
  if (!json.is_array()) fail(path, "kernel library manifest: " + what + " is not a shape (expected [d0, d1, ...])");
  Shape shape;
  for (const auto& dim : json) {
    if (!dim.is_number_integer() || dim.get<std::int64_t>() < 0) {
      fail(path, "kernel library manifest: " + what + " has a dimension that is not a non-negative integer");
    }
    shape.push_back(dim.get<std::int64_t>());
  }
  return shape;
}

}  // namespace

KernelLibrary KernelLibrary::open(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    fail(path, "kernel library not found (rebuild the artifact or check its folder is complete)");
  }
  KernelLibrary library;
  library.path_ = path;
  dlerror();
  library.handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library.handle_ == nullptr) {
    const char* reason = dlerror();
    fail(path, "cannot load the kernel library: " + one_line(reason ? reason : "unknown dlopen failure") +
                   " (a missing dependency must be installed or placed on LD_LIBRARY_PATH)");
  }
  dlerror();
  const auto manifest_fn = reinterpret_cast<websd_manifest_fn>(dlsym(library.handle_, WEBSD_KERNEL_MANIFEST_SYMBOL));
  if (manifest_fn == nullptr) {
    fail(path, std::string("not a websd kernel library (it exports no ") + WEBSD_KERNEL_MANIFEST_SYMBOL + ")");
  }
  const char* text = manifest_fn();
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(text ? text : "");
  } catch (const nlohmann::json::exception& parse_error) {
    fail(path, "kernel library manifest is not JSON: " + one_line(parse_error.what()));
  }
  try {
    const std::int64_t abi = manifest.at("abi").get<std::int64_t>();
    if (abi != WEBSD_KERNEL_ABI_VERSION) {
      fail(path, "kernel library ABI version " + std::to_string(abi) + ", this runtime reads version " +
                     std::to_string(WEBSD_KERNEL_ABI_VERSION) + " (rebuild the artifact with this websd)");
    }
    const std::string target = manifest.at("target").get<std::string>();
    if (target != "cpu") {
      fail(path, "kernel library is for target '" + target + "', expected 'cpu' (use the artifact built for cpu)");
    }
    library.websd_version_ = manifest.at("websd_version").get<std::string>();
    for (const auto& entry : manifest.at("kernels")) {
      LibraryKernel kernel;
      kernel.name = entry.at("name").get<std::string>();
      for (const auto& shape : entry.at("inputs")) {
        kernel.inputs.push_back(read_shape(shape, path, "kernel '" + kernel.name + "' input"));
      }
      kernel.output = read_shape(entry.at("output"), path, "kernel '" + kernel.name + "' output");
      const std::string symbol = WEBSD_KERNEL_SYMBOL_PREFIX + kernel.name;
      kernel.entry = reinterpret_cast<websd_kernel_fn>(dlsym(library.handle_, symbol.c_str()));
      if (kernel.entry == nullptr) {
        fail(path, "the manifest lists kernel '" + kernel.name + "' but the library has no symbol " + symbol +
                       " (the library is damaged; rebuild the artifact)");
      }
      library.kernels_.push_back(std::move(kernel));
    }
  } catch (const nlohmann::json::exception& field_error) {
    fail(path, "kernel library manifest is malformed: " + one_line(field_error.what()));
  }
  return library;
}

KernelLibrary::KernelLibrary(KernelLibrary&& other) noexcept
    : path_(std::move(other.path_)),
      handle_(std::exchange(other.handle_, nullptr)),
      websd_version_(std::move(other.websd_version_)),
      kernels_(std::move(other.kernels_)) {}

KernelLibrary& KernelLibrary::operator=(KernelLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    path_ = std::move(other.path_);
    handle_ = std::exchange(other.handle_, nullptr);
    websd_version_ = std::move(other.websd_version_);
    kernels_ = std::move(other.kernels_);
  }
  return *this;
}

KernelLibrary::~KernelLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

const LibraryKernel* KernelLibrary::find(const std::string& name) const {
  for (const LibraryKernel& kernel : kernels_) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

const LibraryKernel& KernelLibrary::kernel(const std::string& name) const {
  const LibraryKernel* kernel = find(name);
  if (kernel == nullptr) {
    throw Error("artifact", path_ + ": the kernel library has no kernel '" + name + "' (it lists " +
                                std::to_string(kernels_.size()) +
                                "; the artifact's graph and library disagree, rebuild it)");
  }
  return *kernel;
}

void KernelLibrary::run(const LibraryKernel& kernel, const std::vector<const float*>& inputs, float* output) const {
  if (inputs.size() != kernel.inputs.size()) {
    throw Error("cpu", "kernel '" + kernel.name + "' takes " + std::to_string(kernel.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  }
  const int status = kernel.entry(inputs.data(), output, parallel_for_callback, nullptr);
  if (status != 0) {
    throw Error("cpu", path_ + ": kernel '" + kernel.name + "' failed with status " + std::to_string(status));
  }
}

void KernelLibrary::run(const LibraryKernel& kernel, const std::vector<const CpuTensor*>& inputs,
                        CpuTensor& output) const {
  if (inputs.size() != kernel.inputs.size()) {
    throw Error("cpu", "kernel '" + kernel.name + "' takes " + std::to_string(kernel.inputs.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  }
  std::vector<const float*> pointers;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->type.shape != kernel.inputs[i]) {
      throw Error("cpu", "kernel '" + kernel.name + "' input " + std::to_string(i) + " must have shape " +
                             shape_to_string(kernel.inputs[i]) + ", got " + inputs[i]->type.to_string());
    }
    pointers.push_back(inputs[i]->fdata());
  }
  if (output.type.shape != kernel.output) {
    throw Error("cpu", "kernel '" + kernel.name + "' output must have shape " + shape_to_string(kernel.output) +
                           ", got " + output.type.to_string());
  }
  run(kernel, pointers, output.fdata());
}

}  // namespace websd::cpu
