// Checking the Ed25519 signature of a signed artifact (FORMAT.md, "Protections"): the keys a user
// trusts (`--trust-key P`, PEM public keys as `openssl pkey -pubout` writes them) and the check
// itself. Native builds use OpenSSL (artifact_signature_openssl.cpp); the WebAssembly build has no
// Ed25519 (artifact_signature_unavailable.cpp: the browser is to check signatures with WebCrypto),
// so a trust key there is refused with one clear error. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "artifact/artifact_seal.h"

namespace websd::artifact {

// False in builds that cannot check signatures (WebAssembly).
bool signature_checks_available();

// The Ed25519 public key in the PEM file at `path`. Throws websd::Error("artifact", ...) naming the
// file for one that cannot be read, holds no PEM public key, holds a private key (pass its public
// half), or a key of another algorithm; and always in a build that cannot check signatures.
Ed25519PublicKey read_trust_key(const std::string& path);

// Whether `signature` is `key`'s Ed25519 signature of `message`.
bool ed25519_verify(const Ed25519PublicKey& key, std::string_view message, const Ed25519Signature& signature);

}  // namespace websd::artifact
