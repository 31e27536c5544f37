#include "graph/printer.h"

#include <gtest/gtest.h>

#include "graph/function_builder.h"

namespace websd::graph {
namespace {

TEST(Printer, WritesReadableText) {
  Function function("clip");
  FunctionBuilder b(function);
  const ValueId ids = b.input("input_ids", {DType::kI64, {1, 77}});
  const ValueId table = b.weight("token_embedding.weight", {49408, 32});
  const ValueId embedded = b.op("gather_rows", {table, ids});
  function.set_outputs({b.op("layer_norm", {embedded, b.weight("ln.weight", {32}), b.weight("ln.bias", {32})},
                             {{"eps", 1e-5}})});
  const std::string text = print_function(function);
  EXPECT_NE(text.find("func @clip(%0: i64[1,77] \"input_ids\")"), std::string::npos) << text;
  EXPECT_NE(text.find("weight %1: f32[49408,32] \"token_embedding.weight\""), std::string::npos) << text;
  EXPECT_NE(text.find("%2 = gather_rows(%1, %0) : f32[1,77,32]"), std::string::npos) << text;
  EXPECT_NE(text.find("layer_norm(%2, %3, %4) {eps=1e-05} : f32[1,77,32]"), std::string::npos) << text;
  EXPECT_NE(text.find("return %5"), std::string::npos) << text;
}

}  // namespace
}  // namespace websd::graph
