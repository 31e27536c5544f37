#include "import/param_check.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

#include "io/safetensors_reader.h"

namespace websd {

std::string ParamProblem::describe() const {
  const std::string quoted = safetensors_quote_name(name);
  const std::string in_file = " in " + std::filesystem::path(file).filename().string();
  switch (kind) {
    case Kind::kMissing:
      return "missing " + quoted + " " + shape_to_string(expected);
    case Kind::kUnexpected:
      return "unexpected " + quoted + " " + shape_to_string(actual) + in_file;
    case Kind::kWrongShape:
      return quoted + in_file + " has shape " + shape_to_string(actual) + ", expected " + shape_to_string(expected);
    case Kind::kNotFloat:
      return quoted + in_file + " is " + dtype + ", expected a float type";
  }
  return quoted;
}

std::size_t ParamCheck::count(ParamProblem::Kind kind) const {
  return static_cast<std::size_t>(std::count_if(problems.begin(), problems.end(),
                                                [&](const ParamProblem& problem) { return problem.kind == kind; }));
}

std::string ParamCheck::summary(std::size_t max_listed) const {
  if (ok()) return component + " (" + origin + "): matches the expected parameters";
  using Kind = ParamProblem::Kind;
  constexpr std::array<std::pair<Kind, const char*>, 4> kCounted = {{{Kind::kMissing, "missing"},
                                                                     {Kind::kUnexpected, "unexpected"},
                                                                     {Kind::kWrongShape, "wrong shape"},
                                                                     {Kind::kNotFloat, "not float"}}};
  std::string counts;
  for (const auto& [kind, label] : kCounted) {
    if (const auto n = count(kind); n > 0) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + label;
  }
  std::string text = component + " (" + origin + ") does not match the network's parameters (" + counts + "): ";
  for (std::size_t i = 0; i < problems.size() && i < max_listed; ++i) {
    text += (i ? "; " : "") + problems[i].describe();
  }
  if (problems.size() > max_listed) text += "; ... and " + std::to_string(problems.size() - max_listed) + " more";
  return text + " (is the config.json from the same model as the weights?)";
}

}  // namespace websd
