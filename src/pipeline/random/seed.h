// Seeds as every websd command reads them (generate, noise, make-model): a decimal integer in
// [0, 2^64), the range of torch.Generator.manual_seed, or -1 for a random one (as the A1111 webui
// has it; the seed actually used is printed and recorded with the output). Anything else, a sign,
// spaces, a fraction, or a value of 2^64 and above, is refused instead of wrapping around.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace websd {

// nullopt for "-1" (random). Throws websd::Error(component, ...) naming `option` and the text.
std::optional<std::uint64_t> parse_seed(const std::string& text, const std::string& option,
                                        const std::string& component);

// A fresh random seed below 2^32 (short enough to type back).
std::uint64_t random_seed();

}  // namespace websd
