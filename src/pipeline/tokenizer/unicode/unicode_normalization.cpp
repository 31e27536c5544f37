#include "pipeline/tokenizer/unicode/unicode_normalization.h"

#include <algorithm>
#include <cstdint>

#include "pipeline/tokenizer/unicode/unicode_tables.h"

namespace websd {
namespace {

namespace tables = unicode_tables;

// Hangul syllables compose and decompose by arithmetic (Unicode 15, section 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

int range_value(const tables::ClassRange* ranges, std::size_t count, char32_t c) {
  const auto code = static_cast<std::int32_t>(c);
  const tables::ClassRange* end = ranges + count;
  const tables::ClassRange* it = std::upper_bound(
      ranges, end, code, [](std::int32_t value, const tables::ClassRange& r) { return value < r.first; });
  if (it == ranges) return 0;
  --it;
  return code <= it->last ? it->value : 0;
}

void append_decomposition(char32_t c, std::u32string& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t index = c - kSBase;
    out.push_back(kLBase + index / kNCount);
    out.push_back(kVBase + index % kNCount / kTCount);
    if (index % kTCount != 0) out.push_back(kTBase + index % kTCount);
    return;
  }
  const tables::Decomposition* end = tables::kDecompositions + tables::kDecompositionCount;
  const tables::Decomposition* it =
      std::lower_bound(tables::kDecompositions, end, static_cast<std::int32_t>(c),
                       [](const tables::Decomposition& d, std::int32_t value) { return d.code_point < value; });
  if (it == end || it->code_point != static_cast<std::int32_t>(c)) {
    out.push_back(c);
    return;
  }
  for (std::uint32_t i = 0; i < it->length; ++i) {
    out.push_back(static_cast<char32_t>(tables::kDecompositionCodePoints[it->offset + i]));
  }
}

// The primary composite of `first` + `second`, or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const tables::Composition* end = tables::kCompositions + tables::kCompositionCount;
  const auto key = std::pair(static_cast<std::int32_t>(first), static_cast<std::int32_t>(second));
  const tables::Composition* it =
      std::lower_bound(tables::kCompositions, end, key,
                       [](const tables::Composition& c, const auto& k) { return std::pair(c.first, c.second) < k; });
  if (it == end || it->first != key.first || it->second != key.second) return 0;
  return static_cast<char32_t>(it->composite);
}

}  // namespace

int unicode_combining_class(char32_t c) {
  return range_value(tables::kCombiningClassRanges, tables::kCombiningClassRangeCount, c);
}

bool unicode_is_letter(char32_t c) { return range_value(tables::kClassRanges, tables::kClassRangeCount, c) == 1; }

bool unicode_is_number(char32_t c) { return range_value(tables::kClassRanges, tables::kClassRangeCount, c) == 2; }

char32_t unicode_to_lower(char32_t c) {
  const tables::CodePointPair* end = tables::kLowerCase + tables::kLowerCaseCount;
  const tables::CodePointPair* it =
      std::lower_bound(tables::kLowerCase, end, static_cast<std::int32_t>(c),
                       [](const tables::CodePointPair& p, std::int32_t value) { return p.from < value; });
  return it != end && it->from == static_cast<std::int32_t>(c) ? static_cast<char32_t>(it->to) : c;
}

std::u32string unicode_nfc(std::u32string_view text) {
  std::u32string decomposed;
  decomposed.reserve(text.size());
  for (const char32_t c : text) append_decomposition(c, decomposed);
  // Canonical ordering: within each run of non-starters, a stable sort by combining class.
  for (std::size_t i = 1; i < decomposed.size(); ++i) {
    const int ccc = unicode_combining_class(decomposed[i]);
    if (ccc == 0) continue;
    for (std::size_t j = i; j > 0; --j) {
      const int before = unicode_combining_class(decomposed[j - 1]);
      if (before <= ccc) break;
      std::swap(decomposed[j - 1], decomposed[j]);
    }
  }
  // Canonical composition: each character joins the last starter unless something between them
  // blocks it (a character of the same or a higher combining class, or any starter).
  std::u32string out;
  out.reserve(decomposed.size());
  std::size_t starter = std::u32string::npos;
  int last_class = -1;  // combining class of the last character kept after the starter; -1: none
  for (const char32_t c : decomposed) {
    const int ccc = unicode_combining_class(c);
    if (starter != std::u32string::npos && (last_class == -1 || last_class < ccc)) {
      if (const char32_t composite = compose(out[starter], c); composite != 0) {
        out[starter] = composite;
        continue;
      }
    }
    if (ccc == 0) {
      starter = out.size();
      last_class = -1;
    } else {
      last_class = ccc;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace websd
