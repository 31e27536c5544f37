// websd::bit_cast: std::bit_cast where the standard library has it; a memcpy copy (which compilers
// turn into the same register move) where it does not: Debian 12's emscripten 3.1.6 ships a libc++
// without std::bit_cast, and the random, dtype and scheduler code must build to WebAssembly too.
#pragma once

#include <bit>
#include <cstring>
#include <type_traits>

namespace websd {

template <class To, class From>
requires(sizeof(To) == sizeof(From) && std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>) To
    bit_cast(const From& from)
noexcept {
#if defined(__cpp_lib_bit_cast)
  return std::bit_cast<To>(from);
#else
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
#endif
}

}  // namespace websd
