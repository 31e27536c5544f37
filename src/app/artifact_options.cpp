#include "app/artifact_options.h"

namespace websd::app {

backends::ArtifactAccess ArtifactAccessOptions::access() const {
  backends::ArtifactAccess access;
  if (!key_file.empty()) access.key_file = key_file;
  access.trust_key_files = trust_keys;
  access.tier = tier;
  return access;
}

std::vector<InputPath> ArtifactAccessOptions::inputs() const {
  std::vector<InputPath> inputs = {{"--key-file", key_file}};
  for (const std::string& key : trust_keys) inputs.push_back({"--trust-key", key});
  return inputs;
}

void add_artifact_access_options(CLI::App& command, ArtifactAccessOptions& options, bool runs) {
  command.add_option("--key-file", options.key_file,
                     "Key of an encrypted artifact (32 raw bytes or 64 hex digits): decrypts the weights and "
                     "authenticates the manifest");
  command.add_option("--trust-key", options.trust_keys,
                     "Ed25519 public key (PEM) of a builder you trust: the artifact must be signed by it ('websd "
                     "build --sign-key'); repeat for several");
  if (runs) {
    command.add_option("--tier", options.tier,
                       "kernel tier to run (webgpu: f32, f16, subgroup-matrix; 'websd inspect' lists an artifact's); "
                       "default: the best one the device offers");
  }
}

}  // namespace websd::app
