#include "io/system_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace websd {
namespace {

std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::uint64_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

// Address space left under `ulimit -v` (RLIMIT_AS), if one is set.
std::optional<std::uint64_t> address_space_left() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  const std::uint64_t used = pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return limit.rlim_cur > used ? limit.rlim_cur - used : 0;
}

}  // namespace

std::optional<std::uint64_t> available_memory_bytes() {
  std::optional<std::uint64_t> available = mem_available();
  if (const auto room = address_space_left()) available = available ? std::min(*available, *room) : *room;
  const auto limit = read_number("/sys/fs/cgroup/memory.max");
  const auto used = read_number("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const std::uint64_t room = *limit > *used ? *limit - *used : 0;
    available = available ? std::min(*available, room) : room;
  }
  return available;
}

std::string gibibytes_text(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace websd
