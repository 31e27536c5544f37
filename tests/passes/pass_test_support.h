// Shared helpers of the pass tests: network configs (the tiny fixture model and the make-model
// presets), a small hand-written function, op counts and error-message checks.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "graph/function.h"
#include "models/unet_config.h"

namespace websd::test {

// The tiny fixture model's unet/config.json.
UNetConfig tiny_unet_config();
// The UNet config of a `websd make-model` preset ("sd15", "sd21", "tiny").
UNetConfig preset_unet_config(const std::string& preset);

// func @f(%0: f32[2,3] "x") { weight %1: f32[3] "w"; %2 = add(%0, %1); %3 = exp(%2); %4 = mul(%3, %0); return %4 }
graph::Function small_function();

std::size_t count_op(const graph::Function& function, const std::string& op);

// Runs `call`, which must throw websd::Error; fails the test unless the one-line message holds
// every needle. Returns the message.
std::string expect_error_mentions(const std::function<void()>& call, const std::vector<std::string>& needles);

}  // namespace websd::test
