// The message of the websd::Error that `body` throws, or "(no error)": lets a test check an error's
// text in one expression. Header-only.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"

namespace websd::test {

inline std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace websd::test
