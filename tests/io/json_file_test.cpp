#include "io/json_file.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace websd {
namespace {

TEST(JsonFile, AcceptsPythonNonStandardLiterals) {
  const auto value =
      json_parse(R"({"a": Infinity, "b": -Infinity, "c": NaN, "d": [1, NaN], "e": "NaN Infinity"})", "test");
  EXPECT_TRUE(std::isinf(value["a"].get<double>()) && value["a"].get<double>() > 0);
  EXPECT_TRUE(std::isinf(value["b"].get<double>()) && value["b"].get<double>() < 0);
  EXPECT_TRUE(std::isnan(value["c"].get<double>()));
  EXPECT_TRUE(std::isnan(value["d"][1].get<double>()));
  EXPECT_EQ(value["e"].get<std::string>(), "NaN Infinity");  // strings untouched
}

TEST(JsonFile, EscapedQuotesDoNotConfuseTheScanner) {
  const auto value = json_parse(R"({"a": "say \"NaN\"", "b": NaN})", "test");
  EXPECT_EQ(value["a"].get<std::string>(), "say \"NaN\"");
  EXPECT_TRUE(std::isnan(value["b"].get<double>()));
}

TEST(JsonFile, ErrorsNameTheOrigin) {
  try {
    json_parse("{\"a\": }", "scheduler/scheduler_config.json");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("scheduler/scheduler_config.json"), std::string::npos);
  }
  EXPECT_THROW(json_read_file("/nonexistent/config.json"), Error);
}

TEST(JsonFile, RefusesHostileNestingButNotDeepConfigs) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  try {
    json_parse(deep, "deep.json");
    FAIL() << "accepted 100000 levels";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("deep.json: nested more than"), std::string::npos) << error.what();
  }
  const std::string fine = std::string(200, '[') + std::string(200, ']');
  EXPECT_TRUE(json_parse(fine, "fine.json").is_array());
}

}  // namespace
}  // namespace websd
