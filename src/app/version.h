#pragma once

#include <string_view>

namespace websd {

// Set by CMake from project(VERSION ...).
inline constexpr std::string_view kVersion = WEBSD_VERSION;

}  // namespace websd
