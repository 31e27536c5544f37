#include "runtime/artifact_weight_source.h"

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

KernelFileResolver artifact_kernel_files(const artifact::Artifact& artifact) {
  return [&artifact](const std::string& path) {
    // The path first, then the bytes checked: a device loading by path reads what was checked
    // unless the file is replaced in between, as with any local file.
    std::optional<std::string> local_path = artifact.local_file_path(path);
    return KernelFile{artifact.file_bytes(path), std::move(local_path)};
  };
}

}  // namespace websd::runtime
