// How the CLI runs a webgpu artifact: under Node with Dawn, by the artifact's own runtime
// (runtime/node/websd_node.mjs driving runtime/websd_web.wasm; see src/targets/webgpu/README.md).
// The CLI validates the run and writes the results; the runner does the GPU work, prints progress
// on standard error (passed through) and one JSON line per result on standard output.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace websd {

// Whether `dir`'s manifest names the webgpu target (false when it cannot be read: the usual
// artifact path then reports why).
bool is_webgpu_artifact(const std::string& dir);

// Runs `node runtime/node/websd_node.mjs MODE DIR REQUEST [scratch]` on `request` (written to a
// private scratch folder, removed afterwards, with `files` beside it, by name, for the request to
// name; MODE "generate" also gets the folder for the images) and
// hands each JSON line of its output to `on_result` while it runs. The npm `webgpu` package this
// websd was built with is found through WEBGPU_MODULE unless the caller set it. Throws
// websd::Error(command) when node cannot start or the runner fails (its message is on stderr).
// `tier` (--tier; WEBSD_TIER for the runner) picks the kernel tier; empty: the best the adapter runs.
void run_webgpu_node(const std::string& command, const std::string& mode, const std::string& dir,
                     const std::string& tier, const nlohmann::json& request,
                     const std::function<void(const nlohmann::json&)>& on_result,
                     const std::map<std::string, std::span<const std::byte>>& files = {});

}  // namespace websd
