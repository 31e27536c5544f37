#include "pass_test_support.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "graph/function_builder.h"
#include "graph/op_registry.h"
#include "models/model_presets.h"
#include "support/fixtures.h"

namespace websd::test {

UNetConfig tiny_unet_config() { return unet_config_read(fixture_path("tiny-sd15/model/unet/config.json")); }

UNetConfig preset_unet_config(const std::string& preset) {
  return unet_config_from_json(nlohmann::json::parse(model_preset(preset).unet), "preset " + preset);
}

graph::Function small_function() {
  graph::Function function("f");
  graph::FunctionBuilder b(function);
  const graph::ValueId x = b.input("x", {DType::kF32, {2, 3}});
  const graph::ValueId w = b.weight("w", {3});
  function.set_outputs({b.mul(b.op("exp", {b.add(x, w)}), x)});
  return function;
}

std::size_t count_op(const graph::Function& function, const std::string& op) {
  std::size_t count = 0;
  for (const graph::Node& node : function.nodes()) count += node.op->name == op;
  return count;
}

std::string expect_error_mentions(const std::function<void()>& call, const std::vector<std::string>& needles) {
  try {
    call();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos) << needle << " in: " << message;
    return message;
  }
  ADD_FAILURE() << "no websd::Error was thrown";
  return "";
}

}  // namespace websd::test
