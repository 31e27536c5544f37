#include "pipeline/generation_request_json.h"

#include <optional>
#include <string>

#include "core/error.h"
#include "pipeline/random/seed.h"

namespace websd {
namespace {

const nlohmann::json& field(const nlohmann::json& json, const char* key, bool (nlohmann::json::*is)() const noexcept,
                            const char* kind) {
  const auto found = json.find(key);
  if (found == json.end() || !((*found).*is)()) {
    throw Error("request", std::string("field '") + key + "' is missing or not " + kind);
  }
  return *found;
}

}  // namespace

nlohmann::json generation_request_to_json(const GenerationRequest& request) {
  const GenerationParams& p = request.params;
  return {{"prompt", p.prompt},
          {"negative_prompt", p.negative_prompt},
          {"steps", p.steps},
          {"guidance_scale", p.guidance_scale},
          {"seed", std::to_string(p.seed)},
          {"width", p.width},
          {"height", p.height},
          {"batch_count", p.batch_count},
          {"strength", p.strength},
          {"vae_tiling", vae_tiling_mode_name(request.vae_tiling.mode)},
          {"vae_tile_size", request.vae_tiling.tile_size}};
}

GenerationRequest generation_request_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw Error("request", "a generation request must be a JSON object");
  const auto is_string = &nlohmann::json::is_string;
  const auto is_integer = &nlohmann::json::is_number_integer;
  const auto is_number = &nlohmann::json::is_number;
  GenerationRequest request;
  GenerationParams& p = request.params;
  p.prompt = field(json, "prompt", is_string, "a string").get<std::string>();
  p.negative_prompt = field(json, "negative_prompt", is_string, "a string").get<std::string>();
  p.steps = field(json, "steps", is_integer, "an integer").get<int>();
  p.guidance_scale = field(json, "guidance_scale", is_number, "a number").get<double>();
  // As every command reads a seed (parse_seed): "-1" is a random one, signs, spaces and values past
  // 2^64 - 1 are refused rather than wrapped.
  const std::optional<std::uint64_t> seed =
      parse_seed(field(json, "seed", is_string, "a decimal string").get<std::string>(), "field 'seed'", "request");
  p.seed = seed ? *seed : random_seed();
  p.width = field(json, "width", is_integer, "an integer").get<std::int64_t>();
  p.height = field(json, "height", is_integer, "an integer").get<std::int64_t>();
  p.batch_count = field(json, "batch_count", is_integer, "an integer").get<int>();
  p.strength = field(json, "strength", is_number, "a number").get<double>();
  const std::string tiling = field(json, "vae_tiling", is_string, "a string").get<std::string>();
  const auto mode = vae_tiling_mode_from_name(tiling);
  if (!mode) throw Error("request", "field 'vae_tiling' is '" + tiling + "', not auto, on or off");
  request.vae_tiling.mode = *mode;
  request.vae_tiling.tile_size = field(json, "vae_tile_size", is_integer, "an integer").get<std::int64_t>();
  return request;
}

}  // namespace websd
