// The tuning database: the best kernel parameters found per workload, target and device, stored as
// JSON lines (one record per line; see FORMAT.md). A record is keyed by (workload, target, device);
// when a file holds several records for one key, the last one wins, so appending a newer tuning
// overrides an older one without rewriting the file.
//
//   const TuningDb db = TuningDb::read_file("tuning.jsonl");
//   if (const TuningRecord* record = db.find(workload.key(), "cpu", cpu_device_name())) ...
//
// TuningDb is a value type: immutable sharing is thread-safe, mutation is not synchronised.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace websd::tuning {

// Integer kernel parameters by name ("block_rows" -> 128): for graph ops, node attribute names.
using TuningParams = std::map<std::string, std::int64_t>;

struct TuningCandidate {
  TuningParams params;
  double median_ms = 0;
};

struct TuningRecord {
  std::string workload;                     // "<op>:<canonical signature>" (workload.h)
  std::string target;                       // "cpu", later "cuda", "webgpu"
  std::string device;                       // e.g. the CPU model name (cpu_device.h)
  TuningParams params;                      // the best candidate's parameters
  double median_ms = 0;                     // the best candidate's time
  std::vector<TuningCandidate> candidates;  // everything timed, for the curious
  std::string websd_version;
  std::string created;  // UTC, ISO 8601 ("2024-05-01T12:34:56Z")
  std::string origin;   // where it was read from ("tuning.jsonl:3"); not written
};

// One JSON object on one line (no newline).
std::string tuning_record_to_line(const TuningRecord& record);
// Parses one line; `origin` ("file:line") starts every error message.
TuningRecord tuning_record_from_line(std::string_view line, const std::string& origin);

class TuningDb {
 public:
  TuningDb() = default;
  // Reads a JSON-lines file, skipping blank lines. Throws websd::Error for a missing or unreadable
  // file, and for a malformed line naming file:line.
  static TuningDb read_file(const std::string& path);

  // Replaces any record with the same (workload, target, device).
  void add(TuningRecord record);
  // nullptr when no record has exactly this key.
  const TuningRecord* find(const std::string& workload, const std::string& target, const std::string& device) const;
  // Distinct keys.
  std::size_t size() const { return records_.size(); }
  // The file it was read from; empty for a database built in memory.
  const std::string& path() const { return path_; }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, TuningRecord> records_;
  std::string path_;
};

// Appends `record` as one line to `path`, creating the file if needed. Throws websd::Error naming
// the path when it cannot be written.
void tuning_db_append(const std::string& path, const TuningRecord& record);

// The current UTC time as ISO 8601 with seconds ("2024-05-01T12:34:56Z").
std::string utc_timestamp_now();

}  // namespace websd::tuning
