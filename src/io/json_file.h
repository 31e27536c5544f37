// JSON parsing for configuration files. Configs written by Python (diffusers, transformers) may
// hold the non-standard literals Infinity, -Infinity and NaN; these parse to float values.
// Thread-safe (no shared state).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "io/input_file.h"

namespace websd {

// Parses `text`; `origin` (a path or description) prefixes error messages.
nlohmann::json json_parse(std::string_view text, const std::string& origin);
// Serialises `value` as Python's json module does, non-finite numbers as Infinity, -Infinity and NaN
// (nlohmann would write null), so that json_parse (and diffusers) read back the same values.
std::string json_dump(const nlohmann::json& value, int indent = -1);
// Reads (under the input rule, io/input_file.h: a regular file within the kind's cap) and parses a
// file; throws websd::Error naming the path on I/O or syntax errors.
nlohmann::json json_read_file(const std::string& path, const InputKind& kind = input_kinds::kJsonConfig);

// A JSON value as an error message echoes it, never longer than about `max_bytes`, built without
// serialising the whole value: a value whose compact JSON fits is shown as value.dump() shows it
// (1000, 0.5, "relu", [32,64], {"content":"x"}; non-finite numbers as NaN, Infinity, -Infinity), else
// a longer string is cut ("abc...(10485760 bytes)"), an array reads "an array of N values" and an
// object "an object of N keys". Control bytes and invalid UTF-8 are escaped (see message_safe).
std::string json_preview(const nlohmann::json& value, std::size_t max_bytes = 80);

}  // namespace websd
