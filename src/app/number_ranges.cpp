#include "app/number_ranges.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/message_text.h"

namespace websd::app {
namespace {

// The value as given, short and without control bytes.
std::string shown(const std::string& text) { return message_safe(text, 40); }

std::string bound_text(std::int64_t bound) {
  if (bound == std::numeric_limits<std::int64_t>::max()) return "2^63-1";
  if (bound == std::numeric_limits<int>::max()) return "2^31-1";
  if (bound == std::numeric_limits<std::int64_t>::min()) return "-2^63";
  if (bound == std::numeric_limits<int>::min()) return "-2^31";
  return std::to_string(bound);
}

std::string bound_text(double bound) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", bound);
  return text;
}

}  // namespace

CLI::Validator integer_range(std::int64_t min, std::int64_t max) {
  const std::string range = "an integer from " + bound_text(min) + " to " + bound_text(max);
  return CLI::Validator(
      [min, max, range](std::string& input) -> std::string {
        std::int64_t value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, error] = std::from_chars(input.data(), end, value);
        if (input.empty() || error != std::errc() || stop != end || value < min || value > max) {
          return shown(input) + " is not " + range;
        }
        return {};
      },
      range);
}

CLI::Validator integer_multiple(std::int64_t factor) {
  const std::string rule = "a multiple of " + std::to_string(factor);
  return CLI::Validator(
      [factor, rule](std::string& input) -> std::string {
        std::int64_t value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, error] = std::from_chars(input.data(), end, value);
        if (input.empty() || error != std::errc() || stop != end || value % factor != 0) {
          return shown(input) + " is not " + rule;
        }
        return {};
      },
      rule);
}

CLI::Validator number_range(double min, double max) {
  std::string range = "a finite number";
  if (std::isfinite(min) && std::isfinite(max)) {
    range = "a number from " + bound_text(min) + " to " + bound_text(max);
  } else if (std::isfinite(min)) {
    range = "a number of at least " + bound_text(min);
  } else if (std::isfinite(max)) {
    range = "a number of at most " + bound_text(max);
  }
  return CLI::Validator(
      [min, max, range](std::string& input) -> std::string {
        // Plain decimal forms only: strtod's "inf", "nan" and hexadecimal forms are refused.
        char* stop = nullptr;
        const double value = std::strtod(input.c_str(), &stop);
        const bool plain = !input.empty() && input.find_first_not_of("0123456789+-.eE") == std::string::npos;
        if (!plain || stop != input.c_str() + input.size() || !std::isfinite(value) || value < min || value > max) {
          return shown(input) + " is not " + range;
        }
        return {};
      },
      range);
}

}  // namespace websd::app
