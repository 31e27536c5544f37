// Facts about the running websd process that commands report to users.
#pragma once

#include <cstdint>

namespace websd::app {

// The process's peak resident set size since it started or since the last reset_peak_rss(), in
// bytes (Linux VmHWM; getrusage's maximum where /proc is unavailable).
std::uint64_t peak_rss_bytes();
// Starts a new peak from the current resident set (Linux /proc/self/clear_refs "5"), so one process
// can measure several phases; returns false where the kernel does not support it.
bool reset_peak_rss();

}  // namespace websd::app
