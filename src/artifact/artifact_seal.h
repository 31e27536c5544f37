// seal.json: what protects an artifact's manifest (see FORMAT.md, "Protections"). The manifest
// covers the weight index and every listed file by their SHA-256, and the index covers every shard,
// so the manifest's own digest, kept here, covers every byte of the artifact. An encrypted
// artifact's seal also holds an HMAC of the manifest under the artifact's key, and a signed one an
// Ed25519 signature of it. The reader accepts only the exact bytes seal_to_text writes, so no byte
// of seal.json can change without the change being refused. Value types and pure functions;
// thread-safe; portable (built for WebAssembly too).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "artifact/sha256.h"

namespace websd::artifact {

inline constexpr std::string_view kSealFileName = "seal.json";
inline constexpr std::string_view kSealFormat = "websd-artifact-seal";
inline constexpr std::int64_t kSealVersion = 1;
inline constexpr std::string_view kSignatureAlgorithm = "ed25519";

using Ed25519PublicKey = std::array<std::uint8_t, 32>;
using Ed25519Signature = std::array<std::uint8_t, 64>;

struct ArtifactSignature {
  Ed25519PublicKey public_key{};  // the signer's key, so a reader can name it; trust comes from --trust-key
  Ed25519Signature value{};       // over seal_message(manifest bytes)
};

struct ArtifactSeal {
  Sha256Digest manifest_sha256{};             // SHA-256 of manifest.json's bytes
  std::optional<Sha256Digest> manifest_hmac;  // encrypted artifacts: HMAC-SHA-256(key, seal_message(...))
  std::optional<ArtifactSignature> signature;
};

// Parses seal.json's bytes; `origin` (its path) starts every message. Throws websd::Error("artifact",
// ...) for anything but the canonical text of a seal: not JSON, a field missing or of the wrong form,
// a newer seal version (upgrade websd), or any byte that seal_to_text would not write.
ArtifactSeal parse_seal(std::string_view text, const std::string& origin);

// The canonical text of `seal`: indented JSON, fields in a fixed order, lower-case hex.
std::string seal_to_text(const ArtifactSeal& seal);

// What the HMAC and the signature cover: a label line that keeps them from being valid for any
// other message a key might authenticate, then the manifest's bytes.
std::string seal_message(std::string_view manifest_bytes);

// "ed25519:" + the first 16 bytes of the key's SHA-256 in hex: a short name for a signing key.
std::string public_key_fingerprint(const Ed25519PublicKey& key);

}  // namespace websd::artifact
