// `websd cache list` and `websd cache clear`: the prepared-weight cache (backends/prepared_weight_cache.h)
// that `generate --model` and `bench --model` keep so that their first step starts fast: what it
// holds (one file per checkpoint component and CPU), how large it is against its bound, and a way
// to empty it.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>

#include "app/command_registry.h"
#include "backends/prepared_weight_cache.h"
#include "core/byte_size_text.h"

namespace websd::app {
namespace {

backends::PreparedWeightCache default_cache() {
  return backends::PreparedWeightCache(
      {backends::PreparedWeightCache::default_dir(), backends::PreparedWeightCache::default_max_bytes(), nullptr});
}

std::string local_time(std::filesystem::file_time_type time) {
  const auto system = std::chrono::file_clock::to_sys(time);
  const std::time_t seconds = std::chrono::system_clock::to_time_t(system);
  std::tm parts{};
  ::localtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &parts);
  return text;
}

void run_list() {
  const backends::PreparedWeightCache cache = default_cache();
  const auto files = cache.list();
  std::uint64_t total = 0;
  for (const auto& file : files) total += file.bytes;
  std::cout << cache.dir() << ": " << files.size() << (files.size() == 1 ? " file, " : " files, ") << human_bytes(total)
            << " of at most " << human_bytes(cache.max_bytes()) << " (WEBSD_WEIGHT_CACHE_MAX)\n";
  for (const auto& file : files) {
    std::cout << "  " << local_time(file.last_used) << "  " << human_bytes(file.bytes) << "  ";
    if (file.problem.empty()) {
      std::cout << file.component << " of " << file.source << "\n";
    } else {
      std::cout << "unreadable (" << file.problem << "): removed when next used\n";
    }
  }
  if (!files.empty()) std::cout << "(least recently used first: removed first when the bound is reached)\n";
}

void run_clear() {
  backends::PreparedWeightCache cache = default_cache();
  const std::uint64_t freed = cache.clear();
  std::cout << "removed " << human_bytes(freed) << " of prepared weights from " << cache.dir() << "\n";
}

const bool registered = register_command(
    {"cache", "List or clear the prepared-weight cache that makes generate's first step fast", [](CLI::App& command) {
       command.require_subcommand(1);
       command.add_subcommand("list", "Show what the cache holds, least recently used first")->callback(run_list);
       command.add_subcommand("clear", "Remove everything the cache holds")->callback(run_clear);
     }});

}  // namespace
}  // namespace websd::app
