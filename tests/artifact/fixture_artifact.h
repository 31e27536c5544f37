// The cpu artifact that `websd build --model <fixtures>/tiny-sd15/model --target cpu` makes, for
// the tests that read a real artifact in both builds. Natively it is built once per websd binary
// (built_fixture_artifacts.cpp); the WebAssembly tests read the one that scripts/test-wasm.sh
// builds with the native websd (fixture_artifact_wasm.cpp). Tests must not change it: they copy it.
#pragma once

#include <string>

namespace websd::test {

std::string fixture_cpu_artifact();

}  // namespace websd::test
