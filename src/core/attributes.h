// Attributes of a graph op node: a small sorted map from name to int, float, string or int list.
// Value type; not synchronised.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace websd {

using AttrValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> entries);

  Attrs& set(const std::string& name, AttrValue value);
  bool has(const std::string& name) const;

  // Typed getters; `op` names the node's op in the error raised for a missing or mistyped attribute.
  std::int64_t get_int(const std::string& name, const std::string& op) const;
  std::int64_t get_int(const std::string& name, std::int64_t fallback, const std::string& op) const;
  double get_float(const std::string& name, const std::string& op) const;
  double get_float(const std::string& name, double fallback, const std::string& op) const;
  const std::string& get_string(const std::string& name, const std::string& op) const;
  const std::vector<std::int64_t>& get_ints(const std::string& name, const std::string& op) const;
  const std::vector<double>& get_floats(const std::string& name, const std::string& op) const;

  const std::vector<std::pair<std::string, AttrValue>>& entries() const { return entries_; }
  // "axis=-1, eps=1e-05"
  std::string to_string() const;

 private:
  const AttrValue* find(const std::string& name) const;
  template <typename T>
  const T& get_typed(const std::string& name, const std::string& op, const char* type_name) const;

  std::vector<std::pair<std::string, AttrValue>> entries_;  // sorted by name
};

}  // namespace websd
