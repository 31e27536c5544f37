// The tuning database format: round trip, last-record-wins, key matching and errors naming file:line.
#include "tuning/tuning_db.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "support/fixtures.h"
#include "tuning/cpu_device.h"

namespace websd::tuning {
namespace {

TuningRecord sample_record(std::int64_t block_rows, double ms) {
  TuningRecord record;
  record.workload = "attention:q=f32[2,8,64,40];k=f32[2,8,77,40];v=f32[2,8,77,40];causal=0";
  record.target = "cpu";
  record.device = "Test CPU @ 1.00GHz";
  record.params = {{"block_rows", block_rows}};
  record.median_ms = ms;
  record.candidates = {{{{"block_rows", 32}}, ms + 1.5}, {{{"block_rows", block_rows}}, ms}};
  record.websd_version = "0.1.0";
  record.created = "2024-05-01T12:34:56Z";
  return record;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = test::make_temp_dir("tuning_db") + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(TuningDb, RecordRoundTripsThroughOneLine) {
  const TuningRecord record = sample_record(64, 12.25);
  const std::string line = tuning_record_to_line(record);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind("{\"workload\":", 0), 0u) << line;  // documented field order
  const TuningRecord read = tuning_record_from_line(line, "memory:1");
  EXPECT_EQ(read.workload, record.workload);
  EXPECT_EQ(read.target, "cpu");
  EXPECT_EQ(read.device, record.device);
  EXPECT_EQ(read.params, record.params);
  EXPECT_DOUBLE_EQ(read.median_ms, 12.25);
  ASSERT_EQ(read.candidates.size(), 2u);
  EXPECT_EQ(read.candidates[0].params.at("block_rows"), 32);
  EXPECT_DOUBLE_EQ(read.candidates[0].median_ms, 13.75);
  EXPECT_EQ(read.websd_version, "0.1.0");
  EXPECT_EQ(read.created, "2024-05-01T12:34:56Z");
  EXPECT_EQ(read.origin, "memory:1");
}

TEST(TuningDb, AppendedFileReadsBackAndTheLastRecordWins) {
  const std::string path = test::make_temp_dir("tuning_db") + "/db.jsonl";
  tuning_db_append(path, sample_record(64, 12.0));
  TuningRecord other = sample_record(256, 3.0);
  other.workload = "attention:q=f32[1,1,16,8];k=f32[1,1,16,8];v=f32[1,1,16,8];causal=1";
  tuning_db_append(path, other);
  tuning_db_append(path, sample_record(32, 9.0));  // a later, better tuning of the first workload
  const TuningDb db = TuningDb::read_file(path);
  EXPECT_EQ(db.size(), 2u);
  EXPECT_EQ(db.path(), path);
  const TuningRecord* found = db.find(sample_record(0, 0).workload, "cpu", "Test CPU @ 1.00GHz");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->params.at("block_rows"), 32);
  EXPECT_EQ(found->origin, path + ":3");
  ASSERT_NE(db.find(other.workload, "cpu", other.device), nullptr);
}

TEST(TuningDb, AppendAfterATruncatedLastLineStartsANewLine) {
  const std::string path = write_file("db.jsonl", tuning_record_to_line(sample_record(64, 1.0)));  // no newline
  tuning_db_append(path, sample_record(128, 2.0));
  EXPECT_EQ(TuningDb::read_file(path)
                .find(sample_record(0, 0).workload, "cpu", "Test CPU @ 1.00GHz")
                ->params.at("block_rows"),
            128);
}

TEST(TuningDb, DeviceOrTargetMismatchIsNotAMatch) {
  TuningDb db;
  db.add(sample_record(64, 1.0));
  const std::string workload = sample_record(0, 0).workload;
  EXPECT_NE(db.find(workload, "cpu", "Test CPU @ 1.00GHz"), nullptr);
  EXPECT_EQ(db.find(workload, "cpu", "Other CPU @ 2.00GHz"), nullptr);
  EXPECT_EQ(db.find(workload, "webgpu", "Test CPU @ 1.00GHz"), nullptr);
  EXPECT_EQ(db.find(workload + " ", "cpu", "Test CPU @ 1.00GHz"), nullptr);
}

TEST(TuningDb, BlankLinesAreSkipped) {
  const std::string line = tuning_record_to_line(sample_record(64, 1.0));
  const std::string path = write_file("db.jsonl", "\n" + line + "\r\n   \n\n");
  EXPECT_EQ(TuningDb::read_file(path).size(), 1u);
}

TEST(TuningDb, MalformedLineErrorNamesFileAndLine) {
  const std::string good = tuning_record_to_line(sample_record(64, 1.0));
  const std::string path = write_file("bad.jsonl", good + "\n\n{\"workload\": \"x\", oops}\n" + good + "\n");
  const std::string message = error_of([&] { TuningDb::read_file(path); });
  EXPECT_NE(message.find("[tuning] " + path + ":3: not valid JSON"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(TuningDb, RecordsWithWrongFieldsAreRejectedWithTheField) {
  const auto message_for = [](const std::string& line) {
    return error_of([&] { tuning_record_from_line(line, "db.jsonl:7"); });
  };
  const std::string base = R"("workload":"attention:x","target":"cpu","device":"d")";
  EXPECT_NE(message_for("[1,2]").find("db.jsonl:7: a record must be a JSON object"), std::string::npos);
  EXPECT_NE(message_for(R"({"target":"cpu","device":"d","params":{},"median_ms":1})").find("missing \"workload\""),
            std::string::npos);
  EXPECT_NE(message_for("{" + base + R"(,"params":{"block_rows":1.5},"median_ms":1})").find("\"block_rows\""),
            std::string::npos);
  EXPECT_NE(message_for("{" + base + R"(,"params":{"block_rows":64},"median_ms":"fast"})").find("\"median_ms\""),
            std::string::npos);
  EXPECT_NE(message_for("{" + base + R"(,"params":{},"median_ms":1,"candidates":{}})").find("\"candidates\""),
            std::string::npos);
  EXPECT_NE(message_for(R"({"workload":"","target":"cpu","device":"d","params":{},"median_ms":1})").find("non-empty"),
            std::string::npos);
}

TEST(TuningDb, MissingFileIsAClearError) {
  const std::string path = test::make_temp_dir("tuning_db") + "/absent.jsonl";
  const std::string message = error_of([&] { TuningDb::read_file(path); });
  EXPECT_NE(message.find(path + ": no such tuning database"), std::string::npos) << message;
}

TEST(TuningDb, TimestampIsUtcIso8601) {
  const std::string now = utc_timestamp_now();
  ASSERT_EQ(now.size(), 20u) << now;
  EXPECT_EQ(now[4], '-');
  EXPECT_EQ(now[10], 'T');
  EXPECT_EQ(now.back(), 'Z');
}

TEST(CpuDevice, ModelNameComesFromCpuinfoWithSpacesCollapsed) {
  EXPECT_EQ(cpu_model_name_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)  "
                                        "CPU @ 2.70GHz  \nflags\t: fpu\n"),
            "Intel(R) Xeon(R) CPU @ 2.70GHz");
  EXPECT_EQ(cpu_model_name_from_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n"), "");
  EXPECT_FALSE(cpu_device_name().empty());
  EXPECT_EQ(cpu_device_name(), cpu_device_name());
}

}  // namespace
}  // namespace websd::tuning
