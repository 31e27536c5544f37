// A scheduler's configuration resolved as diffusers' `<Scheduler>.from_config(config)` resolves it:
// every key the class knows takes the given file's value, keys the class does not know are ignored,
// keys named in "_use_default_values" (written by diffusers' register_to_config) are treated as
// absent, and the class defaults fill the rest. Typed getters validate as they read, so a wrong type
// or an unsupported value becomes one websd::Error naming the origin, the class, the key and the value.
//
// Value forms: Python reads a flag by its truth value and accepts 1000.0 wherever it computes with an
// integer, so the resolved config stores the canonical form of a key whose default is a boolean or
// an integer: null and 0 become false (None is falsy in Python), 1 becomes true, and a whole float
// such as 1000.0 becomes 1000. Other forms are left as given for the getters to judge; what each key
// accepts is tabled in CONFIG_FIELDS.md.
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
  bool is_null(const std::string& key) const { return get(key).is_null(); }
  bool get_bool(const std::string& key) const;
  // An integer (a whole float already stored as one); a fractional number is refused as such.
  std::int64_t get_int(const std::string& key, std::int64_t min_value, std::int64_t max_value) const;
  double get_number(const std::string& key) const;
  std::optional<double> get_optional_number(const std::string& key) const;
  // A string that must be one of `supported`.
  std::string get_choice(const std::string& key, const std::vector<std::string>& supported) const;
  // Fails unless the key holds `expected` (features this implementation leaves out).
  void require_value(const std::string& key, const nlohmann::json& expected, const std::string& why) const;
  // Fails if the flag is set (a feature this implementation leaves out); null and 0 read as unset.
  void require_false(const std::string& key, const std::string& why) const;
  // For keys diffusers never reads on the paths websd implements: null or any value of the type that
  // diffusers documents for the key is accepted, and ignored as diffusers ignores it.
  void check_unused_number(const std::string& key) const;
  void check_unused_string(const std::string& key) const;

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
