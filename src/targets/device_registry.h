// The devices this build of websd runs artifacts on, by the target name an artifact's manifest
// records: the run-side counterpart of the compiler's target registry (compiler/target_registry.h).
// One list (device_registry.cpp), one entry per target folder built in (its CMake option); the
// backends, `websd inspect --verify` and tests open a device through it, so none of them names a
// target's device class. Read-only after start-up: thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace websd::targets {

struct DeviceTarget {
  std::string name;     // as in an artifact's manifest and `websd build --target`
  std::string summary;  // one line, for messages
  std::function<std::unique_ptr<runtime::Device>()> open;
  // Throws websd::Error with the figures when this machine lacks the memory a function needs (its
  // arenas, and its weights when `weights_to_load`), before anything is allocated; `before_run`:
  // asked before the run's first network, keeping aside what the networks running first leave
  // behind. Null for a device that reports running out itself (a GPU's allocation fails with a
  // clear error).
  std::function<void(const runtime::LaunchList&, bool weights_to_load, bool before_run)> require_memory;
  // Whether a function fits with its weights, asked before a run (to choose a tiled VAE decode);
  // null: it is assumed to.
  std::function<bool(const runtime::LaunchList&)> memory_fits;
  // Throws websd::Error("artifact") naming the artifact folder when this machine lacks what the
  // artifact's device_requirements section asks (the CPU: the instruction set its kernel library is
  // built for), before any kernel loads. Null: nothing to check on the host (a GPU's bridge checks
  // its adapter).
  std::function<void(const nlohmann::json& requirements, const std::string& artifact_dir)> check_requirements;
};

// Every target whose artifacts this build runs, in a fixed order.
const std::vector<DeviceTarget>& device_targets();
// Their names, in the same order (what Artifact::open is told to accept).
std::vector<std::string> device_target_names();

// The entry for artifacts of `target`. Throws websd::Error("artifact") naming the targets this
// build runs when it runs none called `target`.
const DeviceTarget& device_target(const std::string& target);
// device_target(target).open().
std::unique_ptr<runtime::Device> open_device(const std::string& target);

}  // namespace websd::targets
