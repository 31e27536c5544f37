// The options every command that opens an artifact shares (generate, bench, profile, inspect):
// the key of an encrypted artifact and the signing keys the user trusts (src/artifact/FORMAT.md,
// "Protections"). Not thread-safe (CLI setup).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "backends/artifact_backend.h"
#include "io/output_paths.h"

namespace websd::app {

struct ArtifactAccessOptions {
  std::string key_file;                 // --key-file
  std::vector<std::string> trust_keys;  // --trust-key, any number
  std::string tier;                     // --tier: the kernel tier to run (empty: the best the device offers)

  backends::ArtifactAccess access() const;
  // The files these options read, for check_outputs (io/output_paths.h).
  std::vector<InputPath> inputs() const;
  // Whether any of the options was given.
  bool given() const { return !key_file.empty() || !trust_keys.empty(); }
};

// Adds --key-file and --trust-key, and --tier for commands that run the artifact.
void add_artifact_access_options(CLI::App& command, ArtifactAccessOptions& options, bool runs = true);

}  // namespace websd::app
