#include "core/attributes.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace websd {
namespace {

std::string format_double(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

std::string format_value(const AttrValue& value) {
  struct Formatter {
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return format_double(v); }
    std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
    std::string operator()(const std::vector<std::int64_t>& v) const {
      std::string text = "[";
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) text += ",";
        text += std::to_string(v[i]);
      }
      return text + "]";
    }
    std::string operator()(const std::vector<double>& v) const {
      std::string text = "[";
      const std::size_t shown = std::min<std::size_t>(v.size(), 8);  // long constant tables stay readable
      for (std::size_t i = 0; i < shown; ++i) {
        if (i) text += ",";
        text += format_double(v[i]);
      }
      if (shown < v.size()) text += ",...(" + std::to_string(v.size()) + " values)";
      return text + "]";
    }
  };
  return std::visit(Formatter{}, value);
}

}  // namespace

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> entries) {
  for (const auto& [name, value] : entries) set(name, value);
}

Attrs& Attrs::set(const std::string& name, AttrValue value) {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                                   [](const auto& entry, const std::string& key) { return entry.first < key; });
  if (it != entries_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    entries_.insert(it, {name, std::move(value)});
  }
  return *this;
}

const AttrValue* Attrs::find(const std::string& name) const {
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                                   [](const auto& entry, const std::string& key) { return entry.first < key; });
  return it != entries_.end() && it->first == name ? &it->second : nullptr;
}

bool Attrs::has(const std::string& name) const { return find(name) != nullptr; }

template <typename T>
const T& Attrs::get_typed(const std::string& name, const std::string& op, const char* type_name) const {
  const AttrValue* value = find(name);
  if (value == nullptr) throw Error("graph", "op '" + op + "': missing attribute '" + name + "'");
  const T* typed = std::get_if<T>(value);
  if (typed == nullptr) {
    throw Error("graph",
                "op '" + op + "': attribute '" + name + "' = " + format_value(*value) + " is not " + type_name);
  }
  return *typed;
}

std::int64_t Attrs::get_int(const std::string& name, const std::string& op) const {
  return get_typed<std::int64_t>(name, op, "an integer");
}

std::int64_t Attrs::get_int(const std::string& name, std::int64_t fallback, const std::string& op) const {
  return has(name) ? get_int(name, op) : fallback;
}

double Attrs::get_float(const std::string& name, const std::string& op) const {
  const AttrValue* value = find(name);
  if (value != nullptr) {
    if (const auto* integer = std::get_if<std::int64_t>(value)) return static_cast<double>(*integer);
  }
  return get_typed<double>(name, op, "a number");
}

double Attrs::get_float(const std::string& name, double fallback, const std::string& op) const {
  return has(name) ? get_float(name, op) : fallback;
}

const std::string& Attrs::get_string(const std::string& name, const std::string& op) const {
  return get_typed<std::string>(name, op, "a string");
}

const std::vector<std::int64_t>& Attrs::get_ints(const std::string& name, const std::string& op) const {
  return get_typed<std::vector<std::int64_t>>(name, op, "an integer list");
}

const std::vector<double>& Attrs::get_floats(const std::string& name, const std::string& op) const {
  return get_typed<std::vector<double>>(name, op, "a float list");
}

std::string Attrs::to_string() const {
  std::string text;
  for (const auto& [name, value] : entries_) {
    if (!text.empty()) text += ", ";
    text += name + "=" + format_value(value);
  }
  return text;
}

}  // namespace websd
