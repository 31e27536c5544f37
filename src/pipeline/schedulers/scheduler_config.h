// A scheduler's configuration resolved as diffusers' `<Scheduler>.from_config(config)` resolves it:
// every key the class knows takes the given file's value, keys the class does not know are ignored,
// and the class defaults fill the rest. Typed getters validate as they read, so a wrong type or an
// unsupported value becomes one websd::Error naming the origin, the class, the key and the value.
// Value type; immutable after construction apart from `replace`. Thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace websd::schedulers {

struct ConfigKey {
  std::string name;
  nlohmann::json default_value;
};

class SchedulerConfig {
 public:
  // `given` must be a JSON object (a scheduler_config.json); `origin` (a path, or a description such
  // as "--name euler") prefixes error messages.
  SchedulerConfig(std::string class_name, const std::vector<ConfigKey>& keys, const nlohmann::json& given,
                  std::string origin);

  const std::string& class_name() const { return class_name_; }
  const std::string& origin() const { return origin_; }
  // Every key of the class with its resolved value (sorted by key, as nlohmann::json keeps objects).
  const nlohmann::json& values() const { return values_; }

  const nlohmann::json& get(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::int64_t get_int(const std::string& key, std::int64_t min_value, std::int64_t max_value) const;
  double get_number(const std::string& key) const;
  std::optional<double> get_optional_number(const std::string& key) const;
  // A string that must be one of `supported`.
  std::string get_choice(const std::string& key, const std::vector<std::string>& supported) const;
  // Fails unless the key holds `expected` (features this implementation leaves out).
  void require_value(const std::string& key, const nlohmann::json& expected, const std::string& why) const;

  // Rewrites a resolved value, as diffusers' register_to_config does for legacy aliases.
  void replace(const std::string& key, nlohmann::json value);

  // Throws "[scheduler] <origin>: <class> key "<key>" = <value>: <problem>".
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

 private:
  std::string class_name_;
  std::string origin_;
  nlohmann::json values_;
};

// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

}  // namespace websd::schedulers
