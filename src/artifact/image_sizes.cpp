#include "artifact/image_sizes.h"

#include <charconv>

namespace websd::artifact {
namespace {

// A positive decimal integer filling `text`.
std::optional<std::int64_t> positive(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

}  // namespace

std::string image_size_text(const ImageSize& size) {
  return std::to_string(size.width) + "x" + std::to_string(size.height);
}

std::string image_sizes_text(const std::vector<ImageSize>& sizes) {
  std::string text;
  for (const ImageSize& size : sizes) text += (text.empty() ? "" : ", ") + image_size_text(size);
  return text;
}

std::optional<ImageSize> parse_image_size(std::string_view text) {
  const std::size_t x = text.find_first_of("xX");
  if (x == std::string_view::npos) return std::nullopt;
  const auto width = positive(text.substr(0, x));
  const auto height = positive(text.substr(x + 1));
  if (!width || !height) return std::nullopt;
  return ImageSize{*width, *height};
}

std::string sized_symbol(std::string_view role, const ImageSize& size, const ImageSize& default_size) {
  if (size == default_size) return std::string(role);
  return std::string(role) + "_" + image_size_text(size);
}

std::string_view symbol_role(std::string_view symbol) {
  const std::size_t underscore = symbol.rfind('_');
  if (underscore == std::string_view::npos) return symbol;
  const std::string_view suffix = symbol.substr(underscore + 1);
  if (suffix.find_first_of("X") != std::string_view::npos || !parse_image_size(suffix)) return symbol;
  return symbol.substr(0, underscore);
}

}  // namespace websd::artifact
