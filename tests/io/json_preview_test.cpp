// json_preview: how an error message echoes a JSON value from a file, whatever its size.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <string>

#include "io/json_file.h"

namespace websd {
namespace {

using Json = nlohmann::json;

TEST(JsonPreview, SmallValuesReadAsTheirCompactJson) {
  for (const Json& value : {Json(1000), Json(-3), Json(0.5), Json(0.1159), Json(1e9), Json(true), Json(nullptr),
                            Json("relu"), Json::array({32, 64, 64}), Json::array({Json::array({1, 1}), 1, 1, 1}),
                            Json::parse(R"({"content":"<|endoftext|>","special":true})"), Json::array(), Json::object(),
                            Json::array({"AttnDownBlock2D", "CrossAttnDownBlock2D"})}) {
    EXPECT_EQ(json_preview(value), value.dump());
  }
}

TEST(JsonPreview, NonFiniteNumbersReadAsPythonWritesThem) {
  EXPECT_EQ(json_preview(Json(std::numeric_limits<double>::quiet_NaN())), "NaN");
  EXPECT_EQ(json_preview(Json(std::numeric_limits<double>::infinity())), "Infinity");
  EXPECT_EQ(json_preview(Json::array({-std::numeric_limits<double>::infinity()})), "[-Infinity]");
}

TEST(JsonPreview, LongStringsAreCutAndSized) {
  const Json value(std::string(10 * 1024 * 1024, 'a'));
  EXPECT_EQ(json_preview(value), "\"" + std::string(80, 'a') + "...(10485760 bytes)\"");
  EXPECT_EQ(json_preview(value, 10), "\"aaaaaaaaaa...(10485760 bytes)\"");
}

TEST(JsonPreview, LargeArraysAndObjectsAreCounted) {
  EXPECT_EQ(json_preview(Json(std::vector<int>(1000, 7))), "an array of 1000 values");
  Json object = Json::object();
  for (int i = 0; i < 50; ++i) object["key" + std::to_string(i)] = i;
  EXPECT_EQ(json_preview(object), "an object of 50 keys");
  EXPECT_EQ(json_preview(Json::array({std::string(100, 'b')})), "an array of 1 values");
  EXPECT_EQ(json_preview(Json::object({{std::string(200, 'k'), 1}})), "an object of 1 keys");
}

TEST(JsonPreview, PreviewsAHugeValueWithoutSerialisingIt) {
  Json huge = Json::array();
  for (int i = 0; i < 200'000; ++i) huge.push_back(Json::array({i, "x"}));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(json_preview(huge), "an array of 200000 values");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0) << "json_preview looks at the whole value";  // 1000 dump()s would take seconds
}

TEST(JsonPreview, EscapesControlBytesAndInvalidUtf8) {
  EXPECT_EQ(json_preview(Json("\x1b[31mred")), "\"\\x1b[31mred\"");
  EXPECT_EQ(json_preview(Json::array({"a\nb"})), "[\"a\\x0ab\"]");
  // nlohmann keeps invalid UTF-8 in a parsed value (dump() would throw on it).
  Json raw = Json::parse("[\"x\"]");
  raw[0] = std::string(
      "\x9b"
      "31m");
  EXPECT_EQ(json_preview(raw), "[\"\\x9b31m\"]");
  EXPECT_EQ(json_preview(raw[0]), "\"\\x9b31m\"");
  EXPECT_EQ(json_preview(Json::object({{"k\x1b", 1}})), "{\"k\\x1b\":1}");
}

}  // namespace
}  // namespace websd
