#include "backends/demo_model.h"

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "models/random_checkpoint.h"

namespace websd::backends {
namespace fs = std::filesystem;

std::string demo_model_dir() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && *cache != '\0') return (fs::path(cache) / "websd" / "demo-tiny").string();
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return (fs::path(home) / ".cache" / "websd" / "demo-tiny").string();
  throw Error("engine", "no place for the demo model: neither XDG_CACHE_HOME nor HOME is set (pass --model DIR)");
}

std::string ensure_demo_model(const std::function<void(const std::string&)>& progress) {
  const fs::path dir = demo_model_dir();
  if (fs::exists(dir / "model_index.json")) return dir.string();
  std::error_code error;
  fs::create_directories(dir.parent_path(), error);
  if (error) throw Error("engine", dir.parent_path().string() + ": cannot create the cache folder: " + error.message());
  RandomCheckpointOptions options;
  options.preset = "tiny";
  options.out_dir = dir.string();
  options.force = true;  // a folder without model_index.json is a leftover of an interrupted write
  try {
    random_checkpoint_write(options, progress);
  } catch (const Error&) {
    if (!fs::exists(dir / "model_index.json")) throw;  // else another process finished it first
  }
  return dir.string();
}

}  // namespace websd::backends
