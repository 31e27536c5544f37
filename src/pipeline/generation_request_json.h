// A generation request as JSON, for handing a run to another process: the native CLI validates a
// run's options and passes the request to the WebAssembly runtime under Node (a webgpu artifact),
// which reads it back. Only what travels as text: the parameters and the VAE tiling (the seed as a
// decimal string, since JSON numbers lose 64-bit integers); init images and latents do not travel.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "pipeline/generation_params.h"

namespace websd {

nlohmann::json generation_request_to_json(const GenerationRequest& request);
// Throws websd::Error("request") naming the key of a missing or mistyped field.
GenerationRequest generation_request_from_json(const nlohmann::json& json);

}  // namespace websd
