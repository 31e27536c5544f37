#include "pipeline/random/seed.h"

#include <charconv>
#include <random>

#include "core/error.h"

namespace websd {

std::optional<std::uint64_t> parse_seed(const std::string& text, const std::string& option,
                                        const std::string& component) {
  if (text == "-1") return std::nullopt;
  std::uint64_t seed = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seed);
  if (text.empty() || error != std::errc() || stop != end) {
    std::string shown = text.substr(0, 40) + (text.size() > 40 ? "..." : "");
    for (char& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    throw Error(component, option + " '" + shown +
                               "': not a seed (an integer from 0 to 18446744073709551615, or -1 for a random one)");
  }
  return seed;
}

std::uint64_t random_seed() { return std::random_device{}() & 0xFFFFFFFFu; }

}  // namespace websd
