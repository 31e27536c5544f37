#include "artifact/artifact_json.h"

#include <set>
#include <vector>

#include "core/error.h"
#include "core/message_text.h"

namespace websd::artifact {
std::string quote_for_message(std::string_view text) { return message_quote(text, 120); }

std::string json_kind(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return "the integer " + std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return "the integer " + std::to_string(value.get<std::int64_t>());
  if (value.is_number_float()) return "the number " + std::to_string(value.get<double>());
  if (value.is_string()) return "the string " + quote_for_message(value.get_ref<const std::string&>());
  return std::string("a JSON ") + value.type_name();
}

std::string json_field_name(std::string_view where, std::string_view key) {
  return where.empty() ? std::string(key) : std::string(where) + "." + std::string(key);
}

void JsonFieldReader::fail(const std::string& what) const {
  throw Error("artifact", origin_ + ": " + what + " (" + fix_ + ")");
}

nlohmann::json JsonFieldReader::parse(std::string_view text) const {
  std::vector<std::set<std::string, std::less<>>> open_objects;  // keys seen, per open object
  const auto on_event = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth) {
      fail("not valid JSON: nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end) {
      open_objects.pop_back();
    } else if (event == Event::key && !open_objects.back().insert(parsed.get<std::string>()).second) {
      fail("not valid JSON: the key " + quote_for_message(parsed.get<std::string>()) + " appears twice in one object");
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), on_event);
  } catch (const nlohmann::json::exception& error) {
    std::string reason = error.what();
    if (const auto start = reason.find("] "); start != std::string::npos) reason.erase(0, start + 2);
    fail("not valid JSON: " + quote_for_message(reason));
  }
}

const nlohmann::json& JsonFieldReader::field(const nlohmann::json& object, std::string_view key,
                                             std::string_view where) const {
  if (!object.is_object())
    fail((where.empty() ? "the document" : std::string(where)) + " is " + json_kind(object) + ", expected an object");
  const auto it = object.find(key);
  if (it == object.end()) fail("field '" + json_field_name(where, key) + "' is missing");
  return *it;
}

const nlohmann::json& JsonFieldReader::object(const nlohmann::json& object, std::string_view key,
                                              std::string_view where) const {
  const auto& value = field(object, key, where);
  if (!value.is_object())
    fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected an object");
  return value;
}

const nlohmann::json& JsonFieldReader::array(const nlohmann::json& object, std::string_view key,
                                             std::string_view where) const {
  const auto& value = field(object, key, where);
  if (!value.is_array())
    fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected an array");
  return value;
}

std::string JsonFieldReader::string(const nlohmann::json& object, std::string_view key, std::string_view where) const {
  const auto& value = field(object, key, where);
  if (!value.is_string())
    fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected a string");
  return value.get<std::string>();
}

std::int64_t JsonFieldReader::integer(const nlohmann::json& object, std::string_view key,
                                      std::string_view where) const {
  const auto& value = field(object, key, where);
  if (value.is_number_integer() && (!value.is_number_unsigned() || value.get<std::uint64_t>() <= INT64_MAX)) {
    return value.get<std::int64_t>();
  }
  fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected an integer");
}

std::uint64_t JsonFieldReader::unsigned_integer(const nlohmann::json& object, std::string_view key,
                                                std::string_view where) const {
  const auto& value = field(object, key, where);
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected a non-negative integer");
}

}  // namespace websd::artifact
