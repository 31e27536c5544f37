// The runtime's view of an artifact's weights and kernel files: a WeightSource that reads each
// launch weight's verified bytes from the artifact's shards (in place: a mapped or decrypted shard
// lives as long as the artifact), and the resolver that gives a device a kernel file's verified
// bytes and, where the artifact's source has one, its local path. Borrow the artifact, which must outlive every
// executor bound through them.
#pragma once

#include <cstddef>
#include <optional>

#include "artifact/artifact.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace websd::runtime {

class ArtifactWeightSource final : public WeightSource {
 public:
  explicit ArtifactWeightSource(const artifact::Artifact& artifact) : artifact_(artifact) {}
  // Throws websd::Error("artifact") when the index lacks the weight or its shard fails verification.
  WeightBytes read(const LaunchWeight& weight) override;

  // Streaming, for a device that copies what it imports (!DeviceLimits::adopts_weight_bytes): a
  // read from another shard first releases the shard read before (the executor has imported its
  // weights by then), so about one 32 MiB shard is held at a time (verify, import, release; a
  // shard read again is verified again).
  void set_release_shards(bool release) { release_shards_ = release; }
  // Releases the shard held since the last read (call once an executor has bound its weights).
  void release_held();

 private:
  const artifact::Artifact& artifact_;
  bool release_shards_ = false;
  std::optional<std::size_t> held_shard_;
};

// Artifact::file_bytes (size and SHA-256 checked against the manifest) and local_file_path.
KernelFileResolver artifact_kernel_files(const artifact::Artifact& artifact);

}  // namespace websd::runtime
