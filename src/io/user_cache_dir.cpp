#include "io/user_cache_dir.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"

namespace websd {

std::string user_cache_dir(const std::string& what, const std::string& fix) {
  namespace fs = std::filesystem;
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && *cache != '\0') return (fs::path(cache) / "websd").string();
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return (fs::path(home) / ".cache" / "websd").string();
  throw Error("engine", "no place for " + what + ": neither XDG_CACHE_HOME nor HOME is set (" + fix + ")");
}

}  // namespace websd
