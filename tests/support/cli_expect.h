// What a failed command owes its user, checked in one expression: for CLI tests. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "support/run_command.h"

namespace websd::test {

// Exit status `code` (1: bad input, 2: usage), within the deadline if one was given, and one error
// line "websd: error: ..." ending stderr (progress lines may precede it) that holds every part and is
// never an internal error.
inline void expect_one_error_line(const CommandResult& result, std::initializer_list<std::string> parts, int code = 1) {
  EXPECT_FALSE(result.timed_out) << "still running at the deadline: " << result.err;
  EXPECT_EQ(result.exit_code, code) << result.err << result.out;
  const std::size_t start = result.err.rfind("websd: error: ");
  ASSERT_NE(start, std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("websd: error: "), start) << "more than one error line: " << result.err;
  const std::string line = result.err.substr(start);
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "not one line: " << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
  for (const auto& part : parts) EXPECT_NE(line.find(part), std::string::npos) << line << "\nlacks: " << part;
}

}  // namespace websd::test
