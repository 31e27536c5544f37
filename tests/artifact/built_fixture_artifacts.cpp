#include "built_fixture_artifacts.h"

#include <filesystem>
#include <functional>
#include <stdexcept>

#include "artifact_file_edits.h"
#include "fixture_artifact.h"
#include "support/binary_cache.h"
#include "support/file_lock.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

fs::path cache_dir() {
  static const fs::path dir = websd_binary_cache_dir("fixture_artifact_cache");
  return dir;
}

}  // namespace

std::string built_fixture_artifact(const std::string& name, const std::vector<std::string>& extra) {
  const fs::path out = cache_dir() / name;
  FileLock lock(cache_dir() / "lock");
  if (!fs::exists(out / "manifest.json")) {
    std::vector<std::string> args = {"build", "--model",   fixture_path("tiny-sd15/model"), "--target", "cpu",
                                     "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult result = run_websd(args);
    if (result.exit_code != 0) {
      throw std::runtime_error("websd build failed: exit " + std::to_string(result.exit_code) + "\nstdout:\n" +
                               result.out + "\nstderr:\n" + result.err);
    }
  }
  return out.string();
}

std::string fixture_key_file(const std::string& hex) {
  const fs::path path = cache_dir() / ("key-" + hex.substr(0, 8) + ".hex");
  FileLock lock(cache_dir() / "lock");
  if (!fs::exists(path)) write_text(path.string(), hex + "\n");
  return path.string();
}

std::string fixture_cpu_artifact() { return built_fixture_artifact("tiny.art"); }

}  // namespace websd::test
