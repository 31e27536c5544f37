#include "artifact/artifact_seal.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "artifact/artifact_hex.h"
#include "artifact/artifact_json.h"

namespace websd::artifact {
namespace {

constexpr const char* kSealFix = "the seal was edited or is corrupt: copy the artifact again or rebuild it";
constexpr std::string_view kSealMessageLabel = "websd-artifact manifest v1\n";

template <std::size_t N>
std::array<std::uint8_t, N> hex_field(const JsonFieldReader& reader, const nlohmann::json& object, std::string_view key,
                                      std::string_view where) {
  const std::string text = reader.string(object, key, where);
  const auto bytes = hex_decode(text);
  if (!bytes || bytes->size() != N) {
    reader.fail("field '" + json_field_name(where, key) + "' is " + json_kind(object.at(key)) + ", expected " +
                std::to_string(2 * N) + " hex digits");
  }
  std::array<std::uint8_t, N> out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

}  // namespace

ArtifactSeal parse_seal(std::string_view text, const std::string& origin) {
  const JsonFieldReader reader(origin, kSealFix);
  const nlohmann::json root = reader.parse(text);
  const std::string format = reader.string(root, "format", "");
  if (format != kSealFormat) {
    reader.fail("field 'format' is " + json_kind(root.at("format")) + ", expected '" + std::string(kSealFormat) + "'");
  }
  const std::int64_t version = reader.integer(root, "version", "");
  if (version > kSealVersion) {
    JsonFieldReader(origin, "upgrade websd to load this artifact")
        .fail("seal version " + std::to_string(version) + " is newer than this websd reads (" +
              std::to_string(kSealVersion) + ")");
  }
  if (version != kSealVersion) reader.fail("field 'version' is " + std::to_string(version) + ", expected 1");
  ArtifactSeal seal;
  seal.manifest_sha256 = hex_field<32>(reader, root, "manifest_sha256", "");
  if (root.contains("manifest_hmac_sha256"))
    seal.manifest_hmac = hex_field<32>(reader, root, "manifest_hmac_sha256", "");
  if (root.contains("signature")) {
    const nlohmann::json& signature = reader.object(root, "signature", "");
    const std::string algorithm = reader.string(signature, "algorithm", "signature");
    if (algorithm != kSignatureAlgorithm) {
      reader.fail("field 'signature.algorithm' is " + json_kind(signature.at("algorithm")) + ", expected '" +
                  std::string(kSignatureAlgorithm) + "'");
    }
    seal.signature = ArtifactSignature{hex_field<32>(reader, signature, "public_key", "signature"),
                                       hex_field<64>(reader, signature, "value", "signature")};
  }
  // Anything the fields above do not account for (spacing, order, case, an unknown field) is a change.
  const std::string canonical = seal_to_text(seal);
  if (canonical != text) {
    const auto differs = std::mismatch(canonical.begin(), canonical.end(), text.begin(), text.end());
    reader.fail("differs from the text websd writes for its fields at byte " +
                std::to_string(differs.second - text.begin()));
  }
  return seal;
}

std::string seal_to_text(const ArtifactSeal& seal) {
  nlohmann::ordered_json root;
  root["format"] = std::string(kSealFormat);
  root["version"] = kSealVersion;
  root["manifest_sha256"] = hex_encode(seal.manifest_sha256);
  if (seal.manifest_hmac) root["manifest_hmac_sha256"] = hex_encode(*seal.manifest_hmac);
  if (seal.signature) {
    root["signature"] = {{"algorithm", std::string(kSignatureAlgorithm)},
                         {"public_key", hex_encode(seal.signature->public_key)},
                         {"value", hex_encode(seal.signature->value)}};
  }
  return root.dump(2) + "\n";
}

std::string seal_message(std::string_view manifest_bytes) {
  std::string message(kSealMessageLabel);
  message.append(manifest_bytes);
  return message;
}

std::string public_key_fingerprint(const Ed25519PublicKey& key) {
  const Sha256Digest digest = sha256(std::as_bytes(std::span(key)));
  return "ed25519:" + hex_encode(std::span(digest).first(16));
}

}  // namespace websd::artifact
