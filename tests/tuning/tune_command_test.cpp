// `websd tune` and `--tuning-db` as a user runs them, on the demo model at a tiny size.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "support/fixtures.h"
#include "support/run_command.h"
#include "tuning/tuning_db.h"

namespace websd {
namespace {

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A fresh folder whose cache holds the demo model the child processes write.
std::string demo_dir() {
  const std::string dir = test::make_temp_dir("tune");
  EXPECT_EQ(::setenv("XDG_CACHE_HOME", (dir + "/cache").c_str(), 1), 0);  // inherited by the child
  return dir;
}

std::vector<std::string> generate_args(const std::string& dir, const std::string& db) {
  return {"generate", "--prompt", "a cat", "--steps",        "1",           "--width", "64", "--height", "64",
          "--seed",   "1",        "--out", dir + "/out.png", "--tuning-db", db};
}

TEST(TuneCommand, WritesRecordsThatGenerateThenApplies) {
  const std::string dir = demo_dir();
  const std::string db = dir + "/tuning.jsonl";
  const auto tune =
      test::run_websd({"tune", "--target", "cpu", "--db", db, "--width", "64", "--height", "64", "--runs", "1"});
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  EXPECT_NE(tune.out.find("block_rows"), std::string::npos) << tune.out;  // the table's header
  EXPECT_NE(tune.out.find("speedup"), std::string::npos) << tune.out;
  const tuning::TuningDb records = tuning::TuningDb::read_file(db);
  ASSERT_GT(records.size(), 0u);
  EXPECT_NE(tune.err.find("[1/" + std::to_string(records.size()) + "] attention:"), std::string::npos) << tune.err;

  const auto generate = test::run_websd(generate_args(dir, db));
  ASSERT_EQ(generate.exit_code, 0) << generate.err;
  // Every attention kernel of the three networks at this size was tuned.
  const std::string summary = "tuning: ";
  const auto at = generate.err.find(summary);
  ASSERT_NE(at, std::string::npos) << generate.err;
  const std::string line = generate.err.substr(at, generate.err.find('\n', at) - at);
  const auto of = line.find(" of ");
  const std::string tuned = line.substr(summary.size(), of - summary.size());
  EXPECT_GT(std::stoi(tuned), 0) << line;
  EXPECT_EQ(line, "tuning: " + tuned + " of " + tuned + " tunable kernels have records in " + db);
}

TEST(TuneCommand, GenerateWithoutMatchingRecordsStillRuns) {
  const std::string dir = demo_dir();
  const std::string db = dir + "/other.jsonl";
  std::ofstream(db) << R"({"workload":"attention:q=f32[1,1,1,1];k=f32[1,1,1,1];v=f32[1,1,1,1];causal=0",)"
                    << R"("target":"cpu","device":"elsewhere","params":{"block_rows":32},"median_ms":1})"
                    << "\n";
  const auto generate = test::run_websd(generate_args(dir, db));
  ASSERT_EQ(generate.exit_code, 0) << generate.err;
  EXPECT_NE(generate.err.find("tuning: 0 of "), std::string::npos) << generate.err;
}

TEST(TuneCommand, MalformedOrMissingDatabaseIsOneErrorLine) {
  const std::string dir = demo_dir();
  const std::string db = dir + "/broken.jsonl";
  std::ofstream(db) << "\n{not json\n";
  for (const auto& args : {generate_args(dir, db), std::vector<std::string>{"bench", "--tuning-db", db},
                           std::vector<std::string>{"tune", "--target", "cpu", "--db", db}}) {
    const auto result = test::run_websd(args);
    EXPECT_EQ(result.exit_code, 1) << args[0];
    EXPECT_EQ(result.err, "websd: error: [tuning] " + db +
                              ":2: not valid JSON (fix or delete this line; FORMAT.md "
                              "in src/tuning describes records)\n")
        << args[0];
  }
  const auto missing = test::run_websd(generate_args(dir, dir + "/absent.jsonl"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(line_count(missing.err), 1u) << missing.err;
  EXPECT_NE(missing.err.find(dir + "/absent.jsonl: no such tuning database"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::ifstream(dir + "/out.png").good());
}

TEST(TuneCommand, RejectsAnUnknownTargetAndZeroRuns) {
  const std::string dir = demo_dir();
  const auto target = test::run_websd({"tune", "--target", "vulkan", "--db", dir + "/t.jsonl"});
  EXPECT_EQ(target.exit_code, 1);
  EXPECT_EQ(line_count(target.err), 1u) << target.err;
  EXPECT_NE(target.err.find("--target vulkan"), std::string::npos) << target.err;
  const auto runs = test::run_websd({"tune", "--target", "cpu", "--runs", "0", "--db", dir + "/t.jsonl"});
  EXPECT_EQ(runs.exit_code, 2);
  EXPECT_NE(runs.err.find("--runs: 0 is not an integer from 1 to 2^31-1"), std::string::npos) << runs.err;
  EXPECT_FALSE(std::ifstream(dir + "/t.jsonl").good());
}

}  // namespace
}  // namespace websd
