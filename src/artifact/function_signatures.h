// The "functions" section of an artifact's manifest: one entry per compiled function, with its
// signature, the number of kernel launches in its launch list and the bytes of its planned arena.
// The compiler writes it, the runtime and `websd inspect` read it. Value types and pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_tensor.h"

namespace websd::artifact {

inline constexpr std::string_view kFunctionsSection = "functions";

struct TensorSignature {
  std::string name;
  std::string dtype;  // "f32", "f16", "bf16", "i64", ...
  Shape shape;        // -1 marks a dimension fixed only at run time
};

struct FunctionSignature {
  std::string symbol;  // unique within the artifact
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  std::uint64_t launches = 0;
  std::uint64_t arena_bytes = 0;
};

// Reads the section's JSON; `origin` (the manifest's path) starts messages. Throws
// websd::Error("artifact", ...) for fields of the wrong type and for a symbol that appears twice.
std::vector<FunctionSignature> parse_functions_section(const nlohmann::json& section, const std::string& origin);

nlohmann::json functions_section_to_json(const std::vector<FunctionSignature>& functions);

// "sample: f32[2,4,64,64]".
std::string tensor_signature_to_string(const TensorSignature& tensor);

// Throws websd::Error(`where`, ...) naming every one of `symbols` (the functions of the artifact
// at `dir`) when `symbol` is not among them.
void require_function(const std::vector<std::string>& symbols, const std::string& symbol, const std::string& dir,
                      const std::string& where);

}  // namespace websd::artifact
