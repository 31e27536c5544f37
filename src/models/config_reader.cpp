#include "models/config_reader.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/message_text.h"
#include "io/json_file.h"

namespace websd {
namespace {

bool json_values_equal(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

// An integer-valued JSON number (Python configs sometimes write 1.0 for 1).
std::optional<std::int64_t> as_integer(const nlohmann::json& value) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
  }
  return std::nullopt;
}

std::string join_values(const std::vector<nlohmann::json>& values) {
  std::string out;
  for (const auto& value : values) out += (out.empty() ? "" : " or ") + json_preview(value);
  return out;
}

}  // namespace

std::optional<std::int64_t> ConfigReader::integer_value(const nlohmann::json& value) { return as_integer(value); }

ConfigReader::ConfigReader(const nlohmann::json& config, std::string component, std::string origin)
    : config_(config), component_(std::move(component)), origin_(std::move(origin)) {
  if (!config_.is_object()) throw invalid("expected a JSON object, got " + std::string(config_.type_name()));
}

const nlohmann::json* ConfigReader::take(const std::string& key) {
  consumed_.insert(key);
  const auto it = config_.find(key);
  return it == config_.end() ? nullptr : &*it;
}

Error ConfigReader::unsupported(const std::string& key, const std::string& why) const {
  const auto it = config_.find(key);
  const std::string value = it == config_.end() ? "(absent)" : json_preview(*it);
  return Error(component_, origin_ + ": " + key + "=" + value + " is not supported (" + why + ")");
}

Error ConfigReader::invalid(const std::string& what) const { return Error(component_, origin_ + ": " + what); }

Error ConfigReader::bad_type(const std::string& key, const std::string& expected) const {
  return unsupported(key, "expected " + expected);
}

std::int64_t ConfigReader::positive_int(const std::string& key, std::int64_t fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || value->is_null()) return fallback;
  const auto integer = as_integer(*value);
  if (!integer || *integer <= 0) throw bad_type(key, "a positive integer");
  return *integer;
}

double ConfigReader::number(const std::string& key, double fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (!value->is_number() || !std::isfinite(value->get<double>())) throw bad_type(key, "a finite number");
  return value->get<double>();
}

bool ConfigReader::flag(const std::string& key, bool fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (value->is_null()) return false;
  if (!value->is_boolean()) throw bad_type(key, "true or false");
  return value->get<bool>();
}

std::string ConfigReader::choice(const std::string& key, const std::string& fallback,
                                 const std::vector<std::string>& allowed) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (value->is_string()) {
    const auto text = value->get<std::string>();
    if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return text;
  }
  throw unsupported(key, "supported: " + join_values(std::vector<nlohmann::json>(allowed.begin(), allowed.end())));
}

std::optional<std::int64_t> ConfigReader::optional_int(const std::string& key) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  const auto integer = as_integer(*value);
  if (!integer) throw bad_type(key, "an integer or null");
  return integer;
}

std::vector<std::int64_t> ConfigReader::positive_int_list(const std::string& key,
                                                          const std::vector<std::int64_t>& fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (!value->is_array() || value->empty()) throw bad_type(key, "a non-empty list of positive integers");
  std::vector<std::int64_t> out;
  for (const auto& item : *value) {
    const auto integer = as_integer(item);
    if (!integer || *integer <= 0) throw bad_type(key, "a non-empty list of positive integers");
    out.push_back(*integer);
  }
  return out;
}

std::vector<std::string> ConfigReader::string_list(const std::string& key, const std::vector<std::string>& fallback) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return fallback;
  if (!value->is_array() || value->empty()) throw bad_type(key, "a non-empty list of strings");
  std::vector<std::string> out;
  for (const auto& item : *value) {
    if (!item.is_string()) throw bad_type(key, "a non-empty list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::int64_t> ConfigReader::per_block_ints(const std::string& key, std::int64_t fallback,
                                                       std::size_t blocks) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return std::vector<std::int64_t>(blocks, fallback);
  if (!value->is_array()) {
    const auto integer = as_integer(*value);
    if (!integer || *integer <= 0) throw bad_type(key, "a positive integer or one per block");
    return std::vector<std::int64_t>(blocks, *integer);
  }
  if (value->size() != blocks) {
    throw unsupported(key, "expected one value per block: " + std::to_string(blocks) + " values, got " +
                               std::to_string(value->size()));
  }
  std::vector<std::int64_t> out;
  for (const auto& item : *value) {
    const auto integer = as_integer(item);
    if (!integer || *integer <= 0) throw bad_type(key, "a positive integer per block");
    out.push_back(*integer);
  }
  return out;
}

std::vector<nlohmann::json> ConfigReader::per_block_values(const std::string& key, const nlohmann::json& fallback,
                                                           std::size_t blocks) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return std::vector<nlohmann::json>(blocks, fallback);
  if (!value->is_array()) return std::vector<nlohmann::json>(blocks, *value);
  if (value->size() != blocks) {
    throw unsupported(key, "expected one value per block: " + std::to_string(blocks) + " values, got " +
                               std::to_string(value->size()));
  }
  return std::vector<nlohmann::json>(value->begin(), value->end());
}

std::optional<std::pair<std::int64_t, std::int64_t>> ConfigReader::optional_int_or_pair(const std::string& key) {
  const nlohmann::json* value = take(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  const auto positive = [](const nlohmann::json& item) {
    const auto integer = as_integer(item);
    return integer && *integer > 0 ? integer : std::nullopt;
  };
  if (const auto side = positive(*value)) return std::pair{*side, *side};
  if (value->is_array() && value->size() == 2) {
    const auto height = positive((*value)[0]);
    const auto width = positive((*value)[1]);
    if (height && width) return std::pair{*height, *width};
  }
  throw bad_type(key, "a positive integer, a [height, width] pair of them, or null");
}

void ConfigReader::require(const std::string& key, const nlohmann::json& supported) {
  require_one_of(key, {supported});
}

void ConfigReader::require_one_of(const std::string& key, const std::vector<nlohmann::json>& supported) {
  const nlohmann::json* value = take(key);
  if (value == nullptr) return;
  for (const auto& accepted : supported) {
    if (json_values_equal(*value, accepted)) return;
  }
  throw unsupported(key, "supported: " + join_values(supported));
}

void ConfigReader::ignore(const std::vector<std::string>& keys) { consumed_.insert(keys.begin(), keys.end()); }

void ConfigReader::ignore_private_keys() {
  for (const auto& [key, value] : config_.items()) {
    if (!key.empty() && key[0] == '_') consumed_.insert(key);
  }
}

void ConfigReader::finish() const {
  for (const auto& [key, value] : config_.items()) {
    if (consumed_.count(key) == 0) {
      throw Error(component_, origin_ + ": unknown key " + message_quote(key, 80) + "=" + json_preview(value) +
                                  " (websd does not know what it changes; remove it if it has no effect)");
    }
  }
}

}  // namespace websd
