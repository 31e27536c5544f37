#include "backends/demo_model.h"

#include <filesystem>

#include "core/error.h"
#include "io/user_cache_dir.h"
#include "models/random_checkpoint.h"

namespace websd::backends {
namespace fs = std::filesystem;

std::string demo_model_dir() {
  return (fs::path(user_cache_dir("the demo model", "pass --model DIR")) / "demo-tiny").string();
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
