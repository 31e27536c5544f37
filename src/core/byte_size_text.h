// Byte counts as people read them in messages and listings. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace websd {

// "512 B", "1.5 KiB", "3.4 GiB" (binary units, one decimal above bytes).
std::string human_bytes(std::uint64_t bytes);

}  // namespace websd
