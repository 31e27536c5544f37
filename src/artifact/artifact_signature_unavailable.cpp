// artifact_signature.h for builds without Ed25519 (WebAssembly): a trust key is refused with one
// clear error; an artifact's digest is still checked (SHA-256 works everywhere).
#include "artifact/artifact_signature.h"
#include "core/error.h"

namespace websd::artifact {

bool signature_checks_available() { return false; }

Ed25519PublicKey read_trust_key(const std::string& path) {
  throw Error("artifact", path +
                              ": this build cannot check artifact signatures (the WebAssembly build has no Ed25519; "
                              "check the signature with the native websd, or in the page with WebCrypto)");
}

bool ed25519_verify(const Ed25519PublicKey&, std::string_view, const Ed25519Signature&) {
  throw Error("artifact", "this build cannot check artifact signatures (the WebAssembly build has no Ed25519)");
}

}  // namespace websd::artifact
