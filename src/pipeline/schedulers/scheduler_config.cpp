#include "pipeline/schedulers/scheduler_config.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "io/json_file.h"

namespace websd::schedulers {
namespace {

// A value short enough for a one-line message; arrays (trained_betas) are summarised.
std::string describe(const nlohmann::json& value) {
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " values";
  return json_preview(value);
}

// diffusers' extract_init_dict drops the keys that "_use_default_values" lists: register_to_config
// records there the keys a config was created without, so that another class loading the config
// uses its own defaults for them.
std::vector<std::string> keys_using_defaults(const nlohmann::json& given, const std::string& origin) {
  const auto found = given.find("_use_default_values");
  if (found == given.end() || found->is_null()) return {};
  std::vector<std::string> names;
  if (found->is_array()) {
    for (const auto& name : *found) {
      if (!name.is_string()) break;
      names.push_back(name.get<std::string>());
    }
    if (names.size() == found->size()) return names;
  }
  throw Error("scheduler", origin + ": key \"_use_default_values\" = " + describe(*found) +
                               ": expected a list of key names (the keys to leave at the class defaults)");
}

// The canonical form of a value, judged by the type of the key's default (see the header).
nlohmann::json canonical_form(const nlohmann::json& value, const nlohmann::json& default_value) {
  if (default_value.is_boolean()) {
    if (value.is_null()) return false;
    if (value.is_number_integer() && (value == 0 || value == 1)) return value == 1;
  }
  if (default_value.is_number_integer() && value.is_number_float()) {
    const double number = value.get<double>();
    if (std::isfinite(number) && std::trunc(number) == number && std::fabs(number) < 0x1p53) {
      return static_cast<std::int64_t>(number);
    }
  }
  return value;
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

SchedulerConfig::SchedulerConfig(std::string class_name, const std::vector<ConfigKey>& keys,
                                 const nlohmann::json& given, std::string origin)
    : class_name_(std::move(class_name)), origin_(std::move(origin)), values_(nlohmann::json::object()) {
  if (!given.is_object()) {
    throw Error("scheduler", origin_ + ": a scheduler config must be a JSON object, got " + describe(given) +
                                 " (pass a scheduler_config.json)");
  }
  const std::vector<std::string> defaulted = keys_using_defaults(given, origin_);
  for (const auto& key : keys) {
    const auto found = given.find(key.name);
    const bool use_default =
        found == given.end() || std::find(defaulted.begin(), defaulted.end(), key.name) != defaulted.end();
    values_[key.name] = use_default ? key.default_value : canonical_form(*found, key.default_value);
  }
}

const nlohmann::json& SchedulerConfig::get(const std::string& key) const {
  const auto found = values_.find(key);
  if (found == values_.end()) {
    throw Error("scheduler", origin_ + ": " + class_name_ + " has no config key \"" + key + "\"");
  }
  return *found;
}

void SchedulerConfig::fail(const std::string& key, const std::string& problem) const {
  const auto found = values_.find(key);
  const std::string value = found != values_.end() ? describe(*found) : "(missing)";
  throw Error("scheduler", origin_ + ": " + class_name_ + " key \"" + key + "\" = " + value + ": " + problem);
}

bool SchedulerConfig::get_bool(const std::string& key) const {
  const auto& value = get(key);
  // null, 0 and 1 were stored as booleans on construction; a string such as "false" is refused,
  // since Python would read any non-empty string as true.
  if (!value.is_boolean()) fail(key, "expected true or false (or null, 0, 1)");
  return value.get<bool>();
}

std::int64_t SchedulerConfig::get_int(const std::string& key, std::int64_t min_value, std::int64_t max_value) const {
  const auto& value = get(key);
  // Whole floats were stored as integers on construction; what is left is fractional or not a number.
  if (value.is_number_float()) fail(key, "expected an integer (a whole number such as 1000 or 1000.0)");
  if (!value.is_number_integer()) fail(key, "expected an integer");
  const std::int64_t number = value.get<std::int64_t>();
  if (number < min_value || number > max_value) {
    fail(key, "expected an integer in [" + std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
  }
  return number;
}

double SchedulerConfig::get_number(const std::string& key) const {
  const auto& value = get(key);
  if (!value.is_number()) fail(key, "expected a number");
  return value.get<double>();
}

std::optional<double> SchedulerConfig::get_optional_number(const std::string& key) const {
  if (get(key).is_null()) return std::nullopt;
  return get_number(key);
}

std::string SchedulerConfig::get_choice(const std::string& key, const std::vector<std::string>& supported) const {
  const auto& value = get(key);
  if (!value.is_string()) fail(key, "expected one of: " + join_names(supported));
  const auto text = value.get<std::string>();
  if (std::find(supported.begin(), supported.end(), text) == supported.end()) {
    fail(key, "not supported by websd (use one of: " + join_names(supported) + ")");
  }
  return text;
}

void SchedulerConfig::require_value(const std::string& key, const nlohmann::json& expected,
                                    const std::string& why) const {
  if (get(key) != expected) fail(key, "not supported by websd (" + why + ")");
}

void SchedulerConfig::require_false(const std::string& key, const std::string& why) const {
  if (get_bool(key)) fail(key, "not supported by websd (" + why + ")");
}

void SchedulerConfig::check_unused_number(const std::string& key) const {
  const auto& value = get(key);
  if (!value.is_null() && !value.is_number()) fail(key, "expected a number or null");
}

void SchedulerConfig::check_unused_string(const std::string& key) const {
  const auto& value = get(key);
  if (!value.is_null() && !value.is_string()) fail(key, "expected a string or null");
}

void SchedulerConfig::replace(const std::string& key, nlohmann::json value) {
  get(key);  // only keys of the class
  values_[key] = std::move(value);
}

}  // namespace websd::schedulers
