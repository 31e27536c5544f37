// Facts about the running websd process that commands report to users.
#pragma once

#include <cstdint>

namespace websd::app {

// The process's peak resident set size so far, in bytes.
std::uint64_t peak_rss_bytes();

}  // namespace websd::app
