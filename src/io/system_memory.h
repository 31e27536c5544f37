// How much memory this process may still take: the kernel's MemAvailable, bounded by the cgroup
// (container) limit and by the address space left under `ulimit -v` when they are set. Used to refuse, before any work,
// a request that cannot fit. Thread-safe (reads /proc and /sys).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace websd {

// nullopt where neither source can be read (not Linux).
std::optional<std::uint64_t> available_memory_bytes();

// "3.4 GiB"
std::string gibibytes_text(std::uint64_t bytes);

}  // namespace websd
