// The CLIP text encoder graph against transformers' float64 output on the tiny fixture model.
#include <gtest/gtest.h>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_test_util.h"
#include "graph/printer.h"
#include "graph_test_support.h"
#include "import/diffusers_checkpoint.h"
#include "models/graphs/sd_graphs.h"

namespace websd {
namespace {

TEST(ClipGraph, MatchesTheReferenceOnTheTinyModel) {
  const auto checkpoint = DiffusersCheckpoint::open(test::tiny_model_dir());
  const graph::Function function = clip_text_graph(test::tiny_clip_config(), 2);
  const auto outputs = test::run_on_cpu(
      function,
      test::checkpoint_weights(checkpoint.component("text_encoder"), clip_text_params(test::tiny_clip_config())),
      {test::expected_i64_tensor("te.ids")});
  const cpu::CpuTensor expected = test::expected_tensor("te.out");
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].type.shape, expected.type.shape);
  const double error = cpu::test::relative_l2(*outputs[0].f32, *expected.f32);
  std::cout << "[ clip     ] relative L2 error vs float64 reference: " << error << "\n";
  EXPECT_LT(error, 1e-4);
}

TEST(ClipGraph, PrintsReadableIr) {
  const std::string text = graph::print_function(clip_text_graph(test::tiny_clip_config(), 2));
  for (const char* line : {
           "func @clip(%0: i64[2,77] \"input_ids\") {",
           "  weight %1: f32[49408,32] \"text_model.embeddings.token_embedding.weight\"",
           "  weight %2: f32[77,32] \"text_model.embeddings.position_embedding.weight\"",
           " = gather_rows(%1, %0) : f32[2,77,32]",
           " = slice(%2) {axis=0, end=77, start=0} : f32[77,32]",
           "\"text_model.encoder.layers.1.self_attn.q_proj.weight\"",
           " {causal=1, scale=0.353553391} : f32[2,4,77,8]",
           " = quick_gelu(",
           "\"text_model.final_layer_norm.bias\"",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\n" << text;
  }
  EXPECT_NE(text.find("layer_norm("), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 2), "}\n");
}

TEST(ClipGraph, GeluConfigUsesExactGelu) {
  ClipTextConfig config = test::tiny_clip_config();
  config.hidden_act = ClipActivation::kGelu;
  const std::string text = graph::print_function(clip_text_graph(config, 1));
  EXPECT_EQ(text.find("quick_gelu"), std::string::npos);
  EXPECT_NE(text.find(" = gelu("), std::string::npos);
}

TEST(ClipGraph, ShorterPromptsRunAndLongerOnesAreRefused) {
  const ClipTextConfig config = test::tiny_clip_config();
  const graph::Function function = clip_text_graph(config, 1, 5);
  cpu::CpuTensor ids = cpu::CpuTensor::allocate({DType::kI64, {1, 5}});
  *ids.i64 = {49406, 320, 1125, 539, 49407};
  const auto outputs = test::run_on_cpu(function, test::random_weights(clip_text_params(config), 1), {ids});
  EXPECT_EQ(outputs[0].type.shape, (Shape{1, 5, 32}));
  test::expect_finite_and_varied(outputs[0], "clip with 5 tokens");
  try {
    clip_text_graph(config, 1, 78);
    FAIL() << "78 tokens accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("tokens = 78"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("max_position_embeddings"), std::string::npos) << error.what();
  }
  EXPECT_THROW(clip_text_graph(config, 0), Error);
}

}  // namespace
}  // namespace websd
