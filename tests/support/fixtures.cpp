#include "support/fixtures.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace websd::test {
namespace {

// Every folder make_temp_dir hands out, removed when the test process exits (ctest runs each test
// in its own process), so a suite run leaves nothing behind in /tmp: thousands of runs had filled
// this machine's disk before.
class TempDirRegistry {
 public:
  ~TempDirRegistry() {
    for (const auto& dir : dirs_) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
  void add(const std::string& dir) {
    const std::lock_guard<std::mutex> hold(mutex_);
    dirs_.push_back(dir);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> dirs_;
};

TempDirRegistry& temp_dirs() {
  static TempDirRegistry registry;
  return registry;
}

}  // namespace

std::string fixtures_dir() {
  const char* overridden = std::getenv("WEBSD_FIXTURES");
  const std::string dir = overridden != nullptr && *overridden != '\0' ? overridden : WEBSD_DEFAULT_FIXTURES;
  if (!std::filesystem::is_directory(dir)) {
    throw std::runtime_error("fixtures not found at " + dir + " (set WEBSD_FIXTURES)");
  }
  return dir;
}

std::string fixture_path(const std::string& relative) {
  const std::string path = fixtures_dir() + "/" + relative;
  if (!std::filesystem::exists(path)) throw std::runtime_error("fixture missing: " + path);
  return path;
}

std::string make_temp_dir(const std::string& tag) {
  std::string pattern = (std::filesystem::temp_directory_path() / ("websd-test-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  temp_dirs().add(pattern);
  return pattern;
}

std::string copy_fixture(const std::string& relative, const std::string& tag) {
  const std::filesystem::path source = fixture_path(relative);
  const std::string copy = make_temp_dir(tag) + "/" + source.filename().string();
  std::filesystem::copy(source, copy, std::filesystem::copy_options::recursive);
  return copy;
}

std::string read_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

}  // namespace websd::test
