// JSON parsing for configuration files. Configs written by Python (diffusers, transformers) may
// hold the non-standard literals Infinity, -Infinity and NaN; these parse to float values.
// Thread-safe (no shared state).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace websd {

// Parses `text`; `origin` (a path or description) prefixes error messages.
nlohmann::json json_parse(std::string_view text, const std::string& origin);
// Serialises `value` as Python's json module does, non-finite numbers as Infinity, -Infinity and NaN
// (nlohmann would write null), so that json_parse (and diffusers) read back the same values.
std::string json_dump(const nlohmann::json& value, int indent = -1);
// Reads and parses a file; throws websd::Error naming the path on I/O or syntax errors.
nlohmann::json json_read_file(const std::string& path);

}  // namespace websd
