// A folder beside the running test binary, shared by its test processes (ctest runs every test in
// its own) and tied to the websd binary under test and the oneDNN ISA cap: named after that
// binary's path, size and time and ONEDNN_MAX_CPU_ISA, it replaces the folders made for others.
// A lock file serialises its creation.
// Header-only; for fixtures that take seconds to build (artifacts), built once per websd binary.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

#include "support/file_lock.h"
#include "support/run_command.h"

namespace websd::test {

inline std::filesystem::path websd_binary_cache_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path binary = websd_binary();
  const auto stamp = fs::last_write_time(binary).time_since_epoch().count();
  std::ostringstream tag;
  // The oneDNN ISA cap too: artifacts hold weights packed for the CPU kernels that built them, so a
  // run with ONEDNN_MAX_CPU_ISA=AVX2 must not reuse those built without it (and the other way).
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  tag << std::hex
      << std::hash<std::string>{}(binary.string() + "|" + std::to_string(fs::file_size(binary)) + "|" +
                                  std::to_string(stamp) + "|" + (isa != nullptr ? isa : ""));
  const fs::path root = fs::read_symlink("/proc/self/exe").parent_path() / name;
  fs::create_directories(root);
  const fs::path tagged = root / tag.str();
  FileLock lock(root / "lock");
  if (!fs::exists(tagged)) {
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.is_directory()) fs::remove_all(entry.path());
    }
    fs::create_directories(tagged);
  }
  return tagged;
}

}  // namespace websd::test
