// Lower-case hexadecimal text for digests, IVs, tags and keys in artifact files. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace websd::artifact {

std::string hex_encode(std::span<const std::uint8_t> bytes);
// nullopt unless `text` is an even number of hex digits (either case).
std::optional<std::vector<std::uint8_t>> hex_decode(std::string_view text);

}  // namespace websd::artifact
