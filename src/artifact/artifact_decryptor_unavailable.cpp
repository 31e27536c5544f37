// artifact_decryptor.h for builds without AES-256-GCM (WebAssembly): every encrypted artifact is
// refused when it is opened, whether or not a key is given, rather than failing at its first weight.
#include "artifact/artifact_decryptor.h"
#include "core/error.h"

namespace websd::artifact {

std::unique_ptr<ArtifactDecryptor> open_artifact_decryptor(const std::string& where, const std::optional<std::string>&,
                                                           const std::string&) {
  throw Error("artifact", where +
                              ": this build cannot decrypt artifact weights; the artifact is encrypted (aes-256-gcm) "
                              "and the WebAssembly build has no AES-256-GCM yet (build the artifact without "
                              "--encrypt-key-file, or load it with the native websd)");
}

}  // namespace websd::artifact
