// Typed, exhaustive reading of one component's config.json (diffusers or transformers). Every key of
// the file must be accounted for: read with its library default, pinned to the only value websd
// supports, or declared as metadata with no effect on the network. `finish()` rejects whatever is left,
// so a config that asks for something websd does not implement is never silently ignored.
// Errors read "[component] origin: key=value is not supported (...)".
// Not thread-safe: it records which keys were consumed; use one reader per parse.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace websd {

class ConfigReader {
 public:
  // `component` names the network ("unet"), `origin` the file ("model/unet/config.json").
  ConfigReader(const nlohmann::json& config, std::string component, std::string origin);

  // The integer a JSON number stands for (1.0 written as a float included), else nullopt.
  static std::optional<std::int64_t> integer_value(const nlohmann::json& value);

  const std::string& component() const { return component_; }
  const std::string& origin() const { return origin_; }

  // A positive integer (1.0 written as a float is accepted); absent or null gives `fallback`.
  std::int64_t positive_int(const std::string& key, std::int64_t fallback);
  // A finite number; absent gives `fallback`.
  double number(const std::string& key, double fallback);
  // Absent gives `fallback`; null is false, as Python's `if flag:` reads None.
  bool flag(const std::string& key, bool fallback);
  // A string from `allowed`; absent gives `fallback`.
  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed);
  // An integer when present and not null.
  std::optional<std::int64_t> optional_int(const std::string& key);
  // A non-empty list of positive integers; absent gives `fallback`.
  std::vector<std::int64_t> positive_int_list(const std::string& key, const std::vector<std::int64_t>& fallback);
  // A non-empty list of strings; absent gives `fallback`.
  std::vector<std::string> string_list(const std::string& key, const std::vector<std::string>& fallback);
  // One positive integer for every block, or a list of exactly `blocks` of them.
  std::vector<std::int64_t> per_block_ints(const std::string& key, std::int64_t fallback, std::size_t blocks);
  // One value for every block, or a list of exactly `blocks` values, each checked by `item` (which
  // throws its own error naming the key); absent gives `blocks` copies of `fallback`.
  std::vector<nlohmann::json> per_block_values(const std::string& key, const nlohmann::json& fallback,
                                               std::size_t blocks);
  // An integer or a [height, width] pair of positive integers (diffusers' `int | tuple[int, int]`);
  // absent or null gives nullopt. A single integer means a square.
  std::optional<std::pair<std::int64_t, std::int64_t>> optional_int_or_pair(const std::string& key);

  // The key may be absent; if present it must equal `supported` (numbers compare by value).
  void require(const std::string& key, const nlohmann::json& supported);
  // As `require`, with several accepted values (e.g. null or false).
  void require_one_of(const std::string& key, const std::vector<nlohmann::json>& supported);
  // Keys that describe the file or training, not the network: consumed without a check.
  void ignore(const std::vector<std::string>& keys);
  // Consumes every key starting with '_' (library bookkeeping such as _diffusers_version).
  void ignore_private_keys();
  // Throws for the first key that no call above consumed.
  void finish() const;

  // "[component] origin: key=value is not supported (why)" as an exception to throw.
  Error unsupported(const std::string& key, const std::string& why) const;
  // "[component] origin: what" for errors that involve several keys.
  Error invalid(const std::string& what) const;

 private:
  // The value of `key` if present, marking it consumed.
  const nlohmann::json* take(const std::string& key);
  Error bad_type(const std::string& key, const std::string& expected) const;

  const nlohmann::json& config_;
  std::string component_;
  std::string origin_;
  std::set<std::string> consumed_;
};

}  // namespace websd
