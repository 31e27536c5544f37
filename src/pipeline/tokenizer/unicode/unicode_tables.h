// The Unicode data of the CLIP tokenizer, generated at build time from the system's utf8proc by
// websd_unicode_tables (generate_unicode_tables.cpp). Every table is sorted by its first field.
#pragma once

#include <cstddef>
#include <cstdint>

namespace websd::unicode_tables {

struct ClassRange {
  std::int32_t first, last;
  std::int32_t value;
};
struct CodePointPair {
  std::int32_t from, to;
};
struct Decomposition {
  std::int32_t code_point;
  std::uint32_t offset, length;  // into kDecompositionCodePoints
};
struct Composition {
  std::int32_t first, second, composite;
};

extern const char* const kUnicodeVersion;
// 1: letter (general category L*), 2: number (N*); code points in no range are neither.
extern const ClassRange kClassRanges[];
extern const std::size_t kClassRangeCount;
// Canonical combining class; 0 outside every range.
extern const ClassRange kCombiningClassRanges[];
extern const std::size_t kCombiningClassRangeCount;
// Simple lower-case mappings that change the code point.
extern const CodePointPair kLowerCase[];
extern const std::size_t kLowerCaseCount;
// Full canonical decompositions, Hangul syllables excepted (they decompose algorithmically).
extern const std::int32_t kDecompositionCodePoints[];
extern const Decomposition kDecompositions[];
extern const std::size_t kDecompositionCount;
// Primary composites by the pair they compose from, sorted by (first, second).
extern const Composition kCompositions[];
extern const std::size_t kCompositionCount;

}  // namespace websd::unicode_tables
