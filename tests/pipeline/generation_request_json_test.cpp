// A generation request through JSON and back (pipeline/generation_request_json.h): every field
// kept, the seed exact to 64 bits, and a missing or mistyped field named.
#include "pipeline/generation_request_json.h"

#include <gtest/gtest.h>

#include "support/error_text.h"

namespace websd {
namespace {

TEST(GenerationRequestJson, EveryFieldSurvivesTheRoundTrip) {
  GenerationRequest request;
  request.params.prompt = "a lighthouse, \u00e9t\u00e9 \xF0\x9F\x8C\x8A";
  request.params.negative_prompt = "fog";
  request.params.steps = 13;
  request.params.guidance_scale = 6.25;
  request.params.seed = 18446744073709551557ull;  // beyond a double's 53 bits
  request.params.width = 640;
  request.params.height = 448;
  request.params.batch_count = 3;
  request.params.strength = 0.35;
  request.vae_tiling = {VaeTilingMode::kOn, 256};
  const GenerationRequest back =
      generation_request_from_json(nlohmann::json::parse(generation_request_to_json(request).dump()));
  EXPECT_EQ(back.params.prompt, request.params.prompt);
  EXPECT_EQ(back.params.negative_prompt, "fog");
  EXPECT_EQ(back.params.steps, 13);
  EXPECT_EQ(back.params.guidance_scale, 6.25);
  EXPECT_EQ(back.params.seed, 18446744073709551557ull);
  EXPECT_EQ(back.params.width, 640);
  EXPECT_EQ(back.params.height, 448);
  EXPECT_EQ(back.params.batch_count, 3);
  EXPECT_EQ(back.params.strength, 0.35);
  EXPECT_EQ(back.vae_tiling.mode, VaeTilingMode::kOn);
  EXPECT_EQ(back.vae_tiling.tile_size, 256);
}

TEST(GenerationRequestJson, AMissingOrMistypedFieldIsNamed) {
  nlohmann::json json = generation_request_to_json(GenerationRequest{});
  json.erase("steps");
  EXPECT_NE(test::error_of([&] { generation_request_from_json(json); }).find("field 'steps' is missing"),
            std::string::npos);
  json = generation_request_to_json(GenerationRequest{});
  // Seeds as every command reads them (parse_seed): no signs, spaces or wrap-around; -1 is random.
  for (const char* bad : {"12x", "+5", " 5", "-2", "18446744073709551616"}) {
    json["seed"] = bad;
    EXPECT_NE(test::error_of([&] { generation_request_from_json(json); }).find("field 'seed' '"), std::string::npos)
        << bad;
  }
  json["seed"] = "-1";
  EXPECT_LT(generation_request_from_json(json).params.seed, std::uint64_t{1} << 32);
  json = generation_request_to_json(GenerationRequest{});
  json["vae_tiling"] = "sometimes";
  EXPECT_NE(test::error_of([&] { generation_request_from_json(json); }).find("not auto, on or off"), std::string::npos);
  EXPECT_NE(test::error_of([] { generation_request_from_json(nlohmann::json::array()); }).find("JSON object"),
            std::string::npos);
}

}  // namespace
}  // namespace websd
