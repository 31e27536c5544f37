#include "targets/webgpu/codegen/wgsl_module.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace websd::webgpu {

namespace {

// `text` (of template `name`) with its `// requires:` lines replaced by their snippets, themselves
// expanded (a snippet may require others; `depth` stops a cycle).
std::string expand_requires(const std::string& name, const std::string& text, int depth) {
  const auto& sources = wgsl_template_sources();
  if (depth > 8) throw Error("codegen", name + ".wgsl: snippets require each other more than 8 deep");
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    constexpr const char* kRequires = "// requires: ";
    if (line.rfind(kRequires, 0) == 0) {
      std::string wanted = line.substr(std::strlen(kRequires));
      wanted = wanted.substr(0, wanted.find_first_of(" \t"));
      const auto snippet = sources.find("common/" + wanted);
      if (snippet == sources.end()) throw Error("codegen", name + ".wgsl requires a missing snippet '" + wanted + "'");
      out += expand_requires(snippet->first, snippet->second, depth + 1);
    } else {
      out += line + "\n";
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace

std::string wgsl_template(const std::string& family) {
  const auto& sources = wgsl_template_sources();
  const auto found = sources.find(family);
  if (found == sources.end()) throw Error("codegen", "no WGSL template '" + family + "'");
  return expand_requires(family, found->second, 0);
}

namespace {
bool is_directive(const std::string& line) {
  for (const char* keyword : {"enable", "requires", "diagnostic"}) {
    const std::size_t n = std::strlen(keyword);
    if (line.compare(0, n, keyword) != 0 || line.size() == n) continue;
    const char next = line[n];
    if (std::isalnum(static_cast<unsigned char>(next)) || next == '_') continue;
    const std::size_t last = line.find_last_not_of(" \t\r");
    return last != std::string::npos && line[last] == ';';
  }
  return false;
}
}  // namespace

std::string wgsl_specialize(const std::string& constant_lines, const std::string& module) {
  std::string directives, rest;
  std::size_t begin = 0;
  bool first_rest = true;
  while (true) {
    const std::size_t end = module.find('\n', begin);
    const std::string line = module.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (is_directive(line)) {
      directives += line + "\n";
    } else {
      if (!first_rest) rest += "\n";
      rest += line;
      first_rest = false;
    }
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return directives + constant_lines + rest;
}

std::string wgsl_float_literal(float value) {
  if (!std::isfinite(value)) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return "bitcast<f32>(" + std::to_string(bits) + "u)";
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
  std::string literal = text;
  if (literal.find_first_of(".en") == std::string::npos) literal += ".0";
  // WGSL rejects a float literal that underflows f32's normal range in some compilers: name it by bits.
  if (value != 0.0f && std::fabs(value) < std::numeric_limits<float>::min()) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return "bitcast<f32>(" + std::to_string(bits) + "u)";
  }
  return literal;
}

std::string wgsl_constant_lines(const std::vector<WgslConstant>& constants) {
  std::string lines;
  for (const WgslConstant& constant : constants) {
    std::string value;
    if (constant.type == "bool") {
      value = constant.value != 0 ? "true" : "false";
    } else if (constant.type == "u32") {
      value = std::to_string(static_cast<std::uint32_t>(constant.value)) + "u";
    } else if (constant.type == "i32") {
      value = std::to_string(static_cast<std::int32_t>(constant.value)) + "i";
    } else if (constant.type == "f32") {
      value = wgsl_float_literal(static_cast<float>(constant.value));
    } else {
      throw Error("codegen", "constant " + constant.name + " has type '" + constant.type + "'");
    }
    lines += "const " + constant.name + ": " + constant.type + " = " + value + ";\n";
  }
  return lines;
}

std::string wgsl_all_bindings_writable(std::string text) {
  static const std::string kRead = "var<storage, read>";
  static const std::string kReadWrite = "var<storage, read_write>";
  for (std::size_t at = text.find(kRead); at != std::string::npos; at = text.find(kRead, at + kReadWrite.size())) {
    text.replace(at, kRead.size(), kReadWrite);
  }
  return text;
}

std::string wgsl_drop_bindings(const std::string& text, const std::vector<std::string>& names) {
  static const std::string kPrefix = "@group(0) @binding(";
  std::string out;
  std::size_t dropped = 0, next = 0, begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    if (line.rfind(kPrefix, 0) != 0) {
      out += line + "\n";
      continue;
    }
    // "@group(0) @binding(N) var<...> NAME: TYPE;"
    const std::size_t close = line.find(')', kPrefix.size());
    const std::size_t var_end = line.find('>', close);
    const std::size_t colon = line.find(':', var_end);
    if (close == std::string::npos || var_end == std::string::npos || colon == std::string::npos) {
      throw Error("codegen", "a binding line the compiler cannot read: " + line);
    }
    std::string name = line.substr(var_end + 1, colon - var_end - 1);
    name.erase(0, name.find_first_not_of(' '));
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      out += "var<private> " + name + ": array<f32, 1>;  // not bound: switched off\n";
      ++dropped;
      continue;
    }
    out += kPrefix + std::to_string(next++) + line.substr(close) + "\n";
  }
  if (dropped != names.size()) throw Error("codegen", "a dropped binding is not in the module");
  return out;
}

std::vector<runtime::UniformField> uniform_fields(const std::vector<ParamField>& fields) {
  std::vector<runtime::UniformField> out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out.push_back({fields[i].name, fields[i].type, static_cast<std::int64_t>(4 * i)});
  }
  return out;
}

std::int64_t uniform_bytes(const std::vector<ParamField>& fields) {
  return ceil_div(static_cast<std::int64_t>(4 * fields.size()), 16) * 16;
}

std::vector<std::byte> pack_params(const std::vector<ParamField>& fields, const std::map<std::string, double>& values) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(uniform_bytes(fields)));
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto found = values.find(fields[i].name);
    if (found == values.end()) throw Error("codegen", "Params field '" + fields[i].name + "' has no value");
    const double value = found->second;
    std::uint32_t bits = 0;
    if (fields[i].type == "u32") {
      if (!(value >= 0 && value <= 4294967295.0) || value != std::floor(value)) {
        throw Error("codegen", "Params." + fields[i].name + " = " + std::to_string(value) + " is not a u32");
      }
      bits = static_cast<std::uint32_t>(value);
    } else if (fields[i].type == "i32") {
      if (!(value >= -2147483648.0 && value <= 2147483647.0) || value != std::floor(value)) {
        throw Error("codegen", "Params." + fields[i].name + " = " + std::to_string(value) + " is not an i32");
      }
      const auto signed_value = static_cast<std::int32_t>(value);
      std::memcpy(&bits, &signed_value, sizeof bits);
    } else {
      const auto f = static_cast<float>(value);
      std::memcpy(&bits, &f, sizeof bits);
    }
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<std::byte>((bits >> (8 * b)) & 0xffu);
  }
  return bytes;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::array<std::int64_t, 3> fold_1d(std::int64_t groups) {
  if (groups <= kMaxWorkgroupsPerDimension) return {std::max<std::int64_t>(groups, 1), 1, 1};
  const std::int64_t y = ceil_div(groups, kMaxWorkgroupsPerDimension);
  if (y > kMaxWorkgroupsPerDimension) {
    throw Error("codegen", std::to_string(groups) + " workgroups do not fit a folded grid");
  }
  return {ceil_div(groups, y), y, 1};
}

std::array<std::int64_t, 3> fold_yz(std::int64_t x, std::int64_t rows) {
  if (x > kMaxWorkgroupsPerDimension) throw Error("codegen", std::to_string(x) + " workgroups in x");
  const auto folded = fold_1d(rows);
  return {std::max<std::int64_t>(x, 1), folded[0], folded[1]};
}

std::string text_digest(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash));
  return out;
}

}  // namespace websd::webgpu
