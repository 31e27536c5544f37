// Text made safe for a one-line error message: whatever a file, a prompt or a path holds is echoed
// through message_safe, so no message can move the cursor, recolour a terminal, break the line or
// grow without bound. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace websd {

// The most bytes of one printed error line (the CLI's cap; values inside are previewed far shorter).
inline constexpr std::size_t kMessageMaxBytes = 4096;

// `text` with every byte sequence a terminal could act on escaped, at most `max_bytes` long:
//  - C0 controls and DEL as \xHH ("\x1b", "\x0a"), bytes that are not strict UTF-8 (a lone 0x9b, an
//    overlong form, a surrogate) as \xHH too, one per byte;
//  - the C1 controls U+0080..U+009F, and U+2028/U+2029 (line and paragraph separators) as \uHHHH;
//  - anything else (printable ASCII, valid UTF-8) unchanged, so the result is idempotent.
// Longer results are cut at a character boundary after at most `max_bytes` bytes and end with
// "...(N bytes)", N being the size of `text`. Only the part shown is scanned, so previewing a
// 200 MB value costs what its first `max_bytes` cost.
std::string message_safe(std::string_view text, std::size_t max_bytes = kMessageMaxBytes);

// message_safe in single quotes: 'name' (for names and strings taken from files).
std::string message_quote(std::string_view text, std::size_t max_bytes);

}  // namespace websd
