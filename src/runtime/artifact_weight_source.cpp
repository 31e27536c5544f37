#include "runtime/artifact_weight_source.h"

#include <optional>
#include <string>

#include "core/error.h"

namespace websd::runtime {

WeightBytes ArtifactWeightSource::read(const LaunchWeight& weight) {
  const artifact::WeightEntry* entry = artifact_.find_weight(weight.name);
  if (entry == nullptr) {
    throw Error("artifact",
                artifact_.dir() + ": the launch lists name weight '" + weight.name + "' which the index lacks");
  }
  if (release_shards_ && held_shard_ && *held_shard_ != entry->shard) release_held();
  held_shard_ = entry->shard;
  return {artifact_.weight(weight.name), entry->dtype, nullptr};
}

void ArtifactWeightSource::release_held() {
  if (!release_shards_ || !held_shard_) return;
  artifact_.release_shard(*held_shard_);
  held_shard_.reset();
}

namespace {

// The file the kernels section names as `library`'s kept source (`websd inspect --source`), if
// another file.
std::optional<std::string> kept_source_of(const artifact::Artifact& artifact, const std::string& library) {
  const nlohmann::json* kernels = artifact.section("kernels");
  if (kernels == nullptr || !kernels->is_array()) return std::nullopt;
  for (const auto& kernel : *kernels) {
    if (!kernel.is_object() || kernel.value("library", "") != library) continue;
    const auto source = kernel.find("source");
    if (source != kernel.end() && source->is_string() && *source != library) return source->get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

KernelFileResolver artifact_kernel_files(const artifact::Artifact& artifact) {
  return [&artifact](const std::string& path) {
    // The path first, then the bytes checked: a device loading by path reads what was checked
    // unless the file is replaced in between, as with any local file.
    std::optional<std::string> local_path = artifact.local_file_path(path);
    KernelFile file{artifact.file_bytes(path), std::move(local_path)};
    // Its source is never run, but checked with it: a byte changed anywhere in an artifact is
    // refused by whatever loads it.
    if (const std::optional<std::string> source = kept_source_of(artifact, path)) artifact.file_bytes(*source);
    return file;
  };
}

}  // namespace websd::runtime
