// fixture_artifact.h for the WebAssembly tests: the module cannot run websd, so the artifact is the
// one scripts/test-wasm.sh builds natively before the tests run (WEBSD_FIXTURE_ARTIFACT).
#include <filesystem>
#include <stdexcept>

#include "fixture_artifact.h"

namespace websd::test {

std::string fixture_cpu_artifact() {
  const std::string dir = WEBSD_FIXTURE_ARTIFACT;
  if (!std::filesystem::exists(dir + "/manifest.json")) {
    throw std::runtime_error("no fixture artifact at " + dir +
                             " (scripts/test-wasm.sh builds it with the native websd)");
  }
  return dir;
}

}  // namespace websd::test
