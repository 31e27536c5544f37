#include "support/fixtures.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace websd::test {

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
  return pattern;
}

}  // namespace websd::test
