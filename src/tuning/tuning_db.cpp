#include "tuning/tuning_db.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/input_file.h"
#include "io/json_file.h"

namespace websd::tuning {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(const std::string& origin, const std::string& what) {
  throw Error("tuning", origin + ": " + what + " (fix or delete this line; FORMAT.md in src/tuning describes records)");
}

const json& field(const json& object, const char* name, const std::string& origin) {
  const auto found = object.find(name);
  if (found == object.end()) malformed(origin, std::string("missing \"") + name + "\"");
  return *found;
}

std::string string_field(const json& object, const char* name, const std::string& origin, bool required) {
  if (!required && !object.contains(name)) return {};
  const json& value = field(object, name, origin);
  if (!value.is_string() || (required && value.get_ref<const std::string&>().empty())) {
    malformed(origin, std::string("\"") + name + "\" must be a non-empty string, got " + json_preview(value));
  }
  return value.get<std::string>();
}

double milliseconds_field(const json& object, const std::string& origin) {
  const json& value = field(object, "median_ms", origin);
  if (!value.is_number() || value.get<double>() < 0) {
    malformed(origin, "\"median_ms\" must be a non-negative number, got " + json_preview(value));
  }
  return value.get<double>();
}

TuningParams params_field(const json& object, const std::string& origin) {
  const json& value = field(object, "params", origin);
  if (!value.is_object()) malformed(origin, "\"params\" must be an object of integers, got " + json_preview(value));
  TuningParams params;
  for (const auto& [name, parameter] : value.items()) {
    if (!parameter.is_number_integer()) {
      malformed(origin, "parameter \"" + name + "\" must be an integer, got " + json_preview(parameter));
    }
    params[name] = parameter.get<std::int64_t>();
  }
  return params;
}

json params_json(const TuningParams& params) {
  json object = json::object();
  for (const auto& [name, value] : params) object[name] = value;
  return object;
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

}  // namespace

std::string tuning_record_to_line(const TuningRecord& record) {
  // ordered_json keeps the documented field order, which makes the file easy to read.
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const auto& candidate : record.candidates) {
    candidates.push_back({{"params", params_json(candidate.params)}, {"median_ms", candidate.median_ms}});
  }
  const nlohmann::ordered_json line{
      {"workload", record.workload},           {"target", record.target},       {"device", record.device},
      {"params", params_json(record.params)},  {"median_ms", record.median_ms}, {"candidates", candidates},
      {"websd_version", record.websd_version}, {"created", record.created}};
  return line.dump();
}

TuningRecord tuning_record_from_line(std::string_view line, const std::string& origin) {
  const json object = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) malformed(origin, "not valid JSON");
  if (!object.is_object()) malformed(origin, "a record must be a JSON object, got " + json_preview(object));
  TuningRecord record;
  record.workload = string_field(object, "workload", origin, true);
  record.target = string_field(object, "target", origin, true);
  record.device = string_field(object, "device", origin, true);
  record.params = params_field(object, origin);
  record.median_ms = milliseconds_field(object, origin);
  if (object.contains("candidates")) {
    const json& candidates = object["candidates"];
    if (!candidates.is_array()) malformed(origin, "\"candidates\" must be an array, got " + json_preview(candidates));
    for (const json& candidate : candidates) {
      if (!candidate.is_object()) malformed(origin, "each candidate must be an object, got " + json_preview(candidate));
      record.candidates.push_back({params_field(candidate, origin), milliseconds_field(candidate, origin)});
    }
  }
  record.websd_version = string_field(object, "websd_version", origin, false);
  record.created = string_field(object, "created", origin, false);
  record.origin = origin;
  return record;
}

TuningDb TuningDb::read_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error) && !error) {
    throw Error("tuning",
                path + ": no such tuning database (check the path, or create it with `websd tune --db " + path + "`)");
  }
  const std::string text = input_file_read("tuning", path, input_kinds::kTuningDb);
  TuningDb db;
  db.path_ = path;
  std::size_t number = 1;
  for (std::size_t begin = 0; begin < text.size(); ++number) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (is_blank(line)) continue;
    db.add(tuning_record_from_line(line, path + ":" + std::to_string(number)));
  }
  return db;
}

void TuningDb::add(TuningRecord record) {
  auto key = std::make_tuple(record.workload, record.target, record.device);
  records_.insert_or_assign(std::move(key), std::move(record));
}

const TuningRecord* TuningDb::find(const std::string& workload, const std::string& target,
                                   const std::string& device) const {
  const auto found = records_.find(std::make_tuple(workload, target, device));
  return found == records_.end() ? nullptr : &found->second;
}

void tuning_db_append(const std::string& path, const TuningRecord& record) {
  // A file whose last line lacks its newline (an interrupted writer) must not swallow this record.
  bool needs_newline = false;
  std::error_code error;
  if (std::filesystem::symlink_status(path, error).type() != std::filesystem::file_type::not_found) {
    const InputFile existing("tuning", path, input_kinds::kTuningDb);  // a FIFO or a folder is refused
    char last = '\n';
    if (existing.size() > 0 && ::pread(existing.descriptor(), &last, 1, static_cast<off_t>(existing.size() - 1)) == 1) {
      needs_newline = last != '\n';
    }
  }
  std::ofstream stream(path, std::ios::binary | std::ios::app);
  if (!stream)
    throw Error("tuning", path + ": cannot open for appending (check that its folder exists and is writable)");
  if (needs_newline) stream << '\n';
  stream << tuning_record_to_line(record) << '\n';
  stream.flush();
  if (!stream) throw Error("tuning", path + ": write failed (disk full?)");
}

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace websd::tuning
