// Every seed under fuzz/corpus/<target>/, every input the fuzzers learned (fuzz/learned/<target>.tar.xz,
// unpacked by CMake at configure time) and every reproducer under fuzz/regressions/<target>/ is
// fed to the entry function of its fuzz target (fuzz/fuzz_entries.h), exactly as the fuzzer would.
// Each must either succeed or throw websd::Error; a broken invariant (FuzzInvariantError), any
// other exception or a crash fails. Seeds are valid inputs, so they must also be accepted, which
// keeps the corpora from silently rotting into inputs that stop at the first check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_entries.h"

namespace websd::fuzz {
namespace {

namespace fs = std::filesystem;

using Entry = void (*)(FuzzInput);

const std::map<std::string, Entry>& fuzz_targets() {
  static const std::map<std::string, Entry> targets = {{"safetensors_fuzz", fuzz_safetensors},
                                                       {"tokenizer_fuzz", fuzz_tokenizer},
                                                       {"artifact_manifest_fuzz", fuzz_artifact_manifest},
                                                       {"artifact_open_fuzz", fuzz_artifact_open},
                                                       {"launch_list_fuzz", fuzz_launch_list},
                                                       {"launch_list_exec_fuzz", fuzz_launch_list_exec}};
  return targets;
}

fs::path fuzz_dir() { return WEBSD_FUZZ_DIR; }
fs::path learned_dir() { return WEBSD_FUZZ_LEARNED_DIR; }

// The files of `folder` in name order; none when it does not exist (no crash found yet).
std::vector<fs::path> files_in(const fs::path& folder) {
  std::vector<fs::path> files;
  if (!fs::is_directory(folder)) return files;
  for (const auto& item : fs::directory_iterator(folder)) {
    if (item.is_regular_file() && item.path().filename() != "README.md") files.push_back(item.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

enum class Outcome { kAccepted, kRejected, kBug };

// Runs one input; a bug is reported as a test failure naming the file.
Outcome replay(Entry entry, const fs::path& path) {
  const std::vector<std::uint8_t> bytes = read_bytes(path);
  try {
    entry(FuzzInput(bytes));
    return Outcome::kAccepted;
  } catch (const Error&) {
    return Outcome::kRejected;
  } catch (const std::exception& error) {
    ADD_FAILURE() << path << ": " << error.what();
  } catch (...) {
    ADD_FAILURE() << path << ": a non-standard exception escaped";
  }
  return Outcome::kBug;
}

TEST(FuzzRegressionTest, EveryCorpusAndRegressionFolderNamesAFuzzTarget) {
  for (const fs::path& kind : {fuzz_dir() / "corpus", learned_dir(), fuzz_dir() / "regressions"}) {
    if (!fs::is_directory(kind)) continue;
    for (const auto& item : fs::directory_iterator(kind)) {
      if (!item.is_directory()) continue;
      EXPECT_TRUE(fuzz_targets().count(item.path().filename().string()))
          << item.path() << " is not the folder of a fuzz target (a typo would leave its files unreplayed)";
    }
  }
  // An archive whose name is no target's would unpack to a folder of that name, caught above.
  for (const auto& item : fs::directory_iterator(fuzz_dir() / "learned")) {
    EXPECT_EQ(item.path().extension(), ".xz") << item.path() << ": fuzz/learned/ holds only <target>.tar.xz";
  }
}

TEST(FuzzRegressionTest, EverySeedIsAcceptedByItsTarget) {
  for (const auto& [target, entry] : fuzz_targets()) {
    const std::vector<fs::path> seeds = files_in(fuzz_dir() / "corpus" / target);
    EXPECT_GE(seeds.size(), 3u) << target << " needs a few seed inputs in fuzz/corpus/" << target;
    for (const fs::path& seed : seeds) {
      const std::vector<std::uint8_t> bytes = read_bytes(seed);
      try {
        entry(FuzzInput(bytes));
      } catch (const std::exception& error) {
        ADD_FAILURE() << seed << " should be a valid input but: " << error.what();
      }
    }
  }
}

TEST(FuzzRegressionTest, EveryRegressionInputIsRejectedOrAcceptedWithoutABug) {
  for (const auto& [target, entry] : fuzz_targets()) {
    for (const fs::path& reproducer : files_in(fuzz_dir() / "regressions" / target)) {
      EXPECT_NE(replay(entry, reproducer), Outcome::kBug) << target;
    }
  }
}

// The corpus the fuzzers learned (scripts/fuzz.sh keeps it minimized in fuzz/learned/<target>.tar.xz):
// mostly inputs that a check rejects, which must stay clean rejections.
TEST(FuzzRegressionTest, EveryLearnedInputIsRejectedOrAcceptedWithoutABug) {
  std::size_t inputs = 0;
  for (const auto& [target, entry] : fuzz_targets()) {
    for (const fs::path& input : files_in(learned_dir() / target)) {
      ++inputs;
      EXPECT_NE(replay(entry, input), Outcome::kBug) << target;
    }
  }
  // Thousands are kept (6925 on 2026-12-06): none means the archives were not unpacked.
  EXPECT_GE(inputs, 1000u) << "the learned corpora (fuzz/learned/*.tar.xz) are missing from " << learned_dir();
}

TEST(FuzzRegressionTest, TruncatedSeedsAreRejectedOrAcceptedWithoutABug) {
  // Every prefix of every seed: cheap, deterministic coverage of the "file ends early" paths.
  for (const auto& [target, entry] : fuzz_targets()) {
    for (const fs::path& seed : files_in(fuzz_dir() / "corpus" / target)) {
      const std::vector<std::uint8_t> bytes = read_bytes(seed);
      for (std::size_t size = 0; size < bytes.size(); size += std::max<std::size_t>(1, bytes.size() / 64)) {
        try {
          entry(FuzzInput(bytes.data(), size));
        } catch (const Error&) {
        } catch (const std::exception& error) {
          ADD_FAILURE() << seed << " cut to " << size << " bytes: " << error.what();
        }
      }
    }
  }
}

TEST(FuzzRegressionTest, ABrokenInvariantIsNotMistakenForACleanRejection) {
  // run_fuzz_entry swallows websd::Error only; FuzzInvariantError must reach libFuzzer.
  const auto broken = [](FuzzInput) { throw FuzzInvariantError("example"); };
  const auto rejecting = [](FuzzInput) { throw Error("fuzz", "bad input"); };
  EXPECT_THROW(run_fuzz_entry(broken, nullptr, 0), FuzzInvariantError);
  EXPECT_EQ(run_fuzz_entry(rejecting, nullptr, 0), 0);
}

}  // namespace
}  // namespace websd::fuzz
