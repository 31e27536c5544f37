// What websd serve sends for a Range header (RFC 9110, section 14), decided before a byte is sent so
// that no request can make it send more than the file: at most kMaxByteRanges ranges, each within
// the file, in ascending order and not overlapping (so their total never exceeds the file's size);
// a suffix range of zero bytes, a range starting at or past the end, too many ranges or ranges out
// of order or overlapping are unsatisfiable (416). A header in another unit, or not of the form
// "bytes=first-last, ...", is ignored (the whole file), as RFC 9110 allows. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace websd::serve {

inline constexpr std::size_t kMaxByteRanges = 4;

struct ByteSpan {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;  // at least 1
};

struct RangePlan {
  enum class Kind { kWhole, kParts, kUnsatisfiable };
  Kind kind = Kind::kWhole;
  std::vector<ByteSpan> parts;  // kParts: one or more, ascending, disjoint, within the file
  std::string reason;           // kUnsatisfiable: one sentence for the 416's body
};

// The plan for Range header `header` (its value; empty: no header) on a file of `file_bytes`.
RangePlan plan_byte_ranges(std::string_view header, std::uint64_t file_bytes);

// "bytes first-last/size" for a part, "bytes */size" for a 416.
std::string content_range(const ByteSpan& part, std::uint64_t file_bytes);
std::string unsatisfied_content_range(std::uint64_t file_bytes);

}  // namespace websd::serve
