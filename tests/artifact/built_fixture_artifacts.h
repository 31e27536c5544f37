// Artifacts that the native websd binary builds of the tiny-sd15 fixture model, shared by the test
// processes of one test binary (ctest runs each test in its own) and built once per websd binary:
// their folder beside the test binary is named after the websd binary (path, size, time), and
// replaces the folders of earlier binaries; a lock file serialises the builds.
#pragma once

#include <string>
#include <vector>

namespace websd::test {

// `websd build --model <fixture> --target cpu --out <cache>/<name> <extra>`, once per websd binary.
std::string built_fixture_artifact(const std::string& name, const std::vector<std::string>& extra = {});
// A key file in the same folder, holding `hex` (64 hex digits).
std::string fixture_key_file(const std::string& hex);

}  // namespace websd::test
