#include "serve/byte_ranges.h"

#include <limits>
#include <optional>

namespace websd::serve {
namespace {

constexpr std::uint64_t kNoNumber = std::numeric_limits<std::uint64_t>::max();

// One range-spec as written: first and last positions, or a suffix length (first empty).
struct WrittenRange {
  std::optional<std::uint64_t> first;
  std::optional<std::uint64_t> last;  // for a suffix range: its length
};

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Decimal digits (checked by the caller); a number too large for 64 bits saturates (it lies past
// any file's end).
std::optional<std::uint64_t> position(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : digits) {
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    value = value > (kNoNumber - digit) / 10 ? kNoNumber : value * 10 + digit;
  }
  return value;
}

// One range-spec, or nullopt for a syntax error.
std::optional<WrittenRange> parse_spec(std::string_view spec) {
  spec = trimmed(spec);
  const std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos || spec.size() > 64) return std::nullopt;
  const std::string_view first_text = spec.substr(0, dash), last_text = spec.substr(dash + 1);
  for (const std::string_view digits : {first_text, last_text}) {
    if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  }
  WrittenRange range{position(first_text), position(last_text)};
  if (!range.first && !range.last) return std::nullopt;
  if (range.first && range.last && *range.first > *range.last) return std::nullopt;
  return range;
}

RangePlan unsatisfiable(std::string reason) { return {RangePlan::Kind::kUnsatisfiable, {}, std::move(reason)}; }

}  // namespace

RangePlan plan_byte_ranges(std::string_view header, std::uint64_t file_bytes) {
  header = trimmed(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.size() < kUnit.size()) return {};
  for (std::size_t i = 0; i < kUnit.size(); ++i) {
    const char c = header[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kUnit[i]) return {};
  }
  std::vector<WrittenRange> written;
  for (std::string_view rest = header.substr(kUnit.size());;) {
    const std::size_t comma = rest.find(',');
    const std::optional<WrittenRange> spec = parse_spec(rest.substr(0, comma));
    if (!spec) return {};  // not a range header RFC 9110 defines: ignored
    if (written.size() == kMaxByteRanges) {
      return unsatisfiable("at most " + std::to_string(kMaxByteRanges) + " ranges are served in one request");
    }
    written.push_back(*spec);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  RangePlan plan{RangePlan::Kind::kParts, {}, {}};
  for (const WrittenRange& range : written) {
    ByteSpan part;
    if (!range.first) {  // the last N bytes
      if (*range.last == 0) return unsatisfiable("a suffix range of zero bytes selects nothing");
      part.offset = *range.last >= file_bytes ? 0 : file_bytes - *range.last;
    } else {
      part.offset = *range.first;
    }
    if (part.offset >= file_bytes) return unsatisfiable("the range starts at or past the end of this file");
    const std::uint64_t end = range.first && range.last && *range.last < file_bytes ? *range.last + 1 : file_bytes;
    part.length = end - part.offset;
    if (!plan.parts.empty()) {
      const ByteSpan& previous = plan.parts.back();
      if (part.offset < previous.offset + previous.length) {
        return unsatisfiable("ranges must be in ascending order and must not overlap");
      }
    }
    plan.parts.push_back(part);
  }
  return plan;
}

std::string content_range(const ByteSpan& part, std::uint64_t file_bytes) {
  return "bytes " + std::to_string(part.offset) + "-" + std::to_string(part.offset + part.length - 1) + "/" +
         std::to_string(file_bytes);
}

std::string unsatisfied_content_range(std::uint64_t file_bytes) { return "bytes */" + std::to_string(file_bytes); }

}  // namespace websd::serve
