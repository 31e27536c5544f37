// libFuzzer target: see fuzz_artifact_open() in fuzz_entries.h for what the bytes mean and what is checked.
#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return websd::fuzz::run_fuzz_entry(websd::fuzz::fuzz_artifact_open, data, size);
}
