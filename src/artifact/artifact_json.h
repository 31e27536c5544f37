// Reading the artifact's own JSON files (manifest.json, weights/index.json) defensively: they may
// come from anywhere, so parsing refuses deep nesting and duplicate keys, and every field access
// checks the type and names the field, the value found and the fix. Stateless apart from the
// origin and fix texts; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace websd::artifact {

// Far above what any artifact file needs; keeps hostile input from deep recursion downstream.
inline constexpr int kMaxJsonDepth = 64;

// Text taken from a file, made safe for a one-line message: single-quoted, control characters
// escaped, shortened past 120 bytes.
std::string quote_for_message(std::string_view text);

// What a JSON value is, for messages, without dumping it: "the integer -3", "a JSON string".
std::string json_kind(const nlohmann::json& value);

// Throws websd::Error("artifact", "<origin>: <what> (<fix>)") for every problem it finds.
class JsonFieldReader {
 public:
  JsonFieldReader(std::string origin, std::string fix) : origin_(std::move(origin)), fix_(std::move(fix)) {}

  [[noreturn]] void fail(const std::string& what) const;

  // Parses `text`; invalid JSON, nesting deeper than kMaxJsonDepth and a key repeated inside one
  // object all fail with "not valid JSON: <reason>".
  nlohmann::json parse(std::string_view text) const;

  // `where` names the object holding `key` in messages ("" for the top level, else "shards[2]").
  const nlohmann::json& field(const nlohmann::json& object, std::string_view key, std::string_view where) const;
  const nlohmann::json& object(const nlohmann::json& object, std::string_view key, std::string_view where) const;
  const nlohmann::json& array(const nlohmann::json& object, std::string_view key, std::string_view where) const;
  std::string string(const nlohmann::json& object, std::string_view key, std::string_view where) const;
  std::int64_t integer(const nlohmann::json& object, std::string_view key, std::string_view where) const;
  std::uint64_t unsigned_integer(const nlohmann::json& object, std::string_view key, std::string_view where) const;

 private:
  std::string origin_;
  std::string fix_;
};

// "key" at the top level, else "where.key".
std::string json_field_name(std::string_view where, std::string_view key);

}  // namespace websd::artifact
