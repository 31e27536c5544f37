// Merging modules: the classic failure (two imported functions both called "main") is refused with
// both origins named, or resolved by roles; real helper functions merge beside the networks and
// still compute what they promise.
#include "graph/module_merge.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "graph/printer.h"
#include "models/graphs/pipeline_helpers.h"
#include "models/graphs/sd_graphs.h"
#include "passes/verify.h"
#include "support/fixtures.h"
#include "targets/cpu/reference/cpu_executor.h"

namespace websd::graph {
namespace {

// What an importer that names every function "main" would produce.
Function as_main(const Function& function) {
  return Function::from_parts("main", function.values(), function.nodes(), function.inputs(), function.weights(),
                              function.outputs());
}

Module module_of(Function function, const std::string& origin) {
  Module module;
  module.add_function(std::move(function), origin);
  return module;
}

Module imported_unet() {
  return module_of(
      as_main(unet_graph(unet_config_read(test::fixture_path("tiny-sd15/model/unet/config.json")), 2, 16, 16)),
      "unet.mod");
}

Module imported_vae() {
  return module_of(
      as_main(vae_decode_graph(vae_config_read(test::fixture_path("tiny-sd15/model/vae/config.json")), 1, 16, 16)),
      "vae.mod");
}

Module helpers() {
  Module module;
  module.add_function(image_to_rgba_graph(2, 3), "pipeline_helpers");
  return module;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no websd::Error was thrown";
  return "";
}

TEST(ModuleMerge, TwoMainsWithoutRolesNameBothOrigins) {
  const Module unet = imported_unet();
  const Module vae = imported_vae();
  const std::string message = error_of([&] { merge_modules({{unet, "unet.mod"}, {vae, "vae.mod"}}); });
  EXPECT_NE(message.find("[merge]"), std::string::npos) << message;
  EXPECT_NE(message.find("'main'"), std::string::npos) << message;
  EXPECT_NE(message.find("unet.mod"), std::string::npos) << message;
  EXPECT_NE(message.find("vae.mod"), std::string::npos) << message;
  EXPECT_NE(message.find("rename_by_role"), std::string::npos) << message;
}

TEST(ModuleMerge, RolesRenameTheMainsAndHelpersJoinThem) {
  const Module unet = imported_unet();
  const Module vae = imported_vae();
  const Module helper_module = helpers();
  const Module merged = merge_modules({{unet, "unet.mod"}, {vae, "vae.mod"}, {helper_module, "helpers.mod"}},
                                      {{{"unet.mod", "main", "unet"}, {"vae.mod", "main", "vae_decode"}}});
  std::vector<std::string> symbols;
  for (const Function* function : merged.functions()) symbols.push_back(function->symbol());
  EXPECT_EQ(symbols, (std::vector<std::string>{"unet", "vae_decode", "image_to_rgba"}));
  EXPECT_EQ(merged.origin("unet"), "unet.mod @main");
  EXPECT_EQ(merged.origin("image_to_rgba"), "helpers.mod @image_to_rgba");
  EXPECT_NO_THROW(passes::verify(merged));
  // Renaming changes the symbol and nothing else.
  std::string unet_text = print_function(unet.at("main"));
  unet_text.replace(unet_text.find("@main"), 5, "@unet");
  EXPECT_EQ(print_function(merged.at("unet")), unet_text);
}

TEST(ModuleMerge, ARoleThatClashesIsRefusedToo) {
  const Module unet = imported_unet();
  const Module vae = imported_vae();
  const std::string message = error_of([&] {
    merge_modules({{unet, "unet.mod"}, {vae, "vae.mod"}},
                  {{{"unet.mod", "main", "decoder"}, {"vae.mod", "main", "decoder"}}});
  });
  EXPECT_NE(message.find("'decoder'"), std::string::npos) << message;
  EXPECT_NE(message.find("unet.mod (its 'main', renamed by role)"), std::string::npos) << message;
  EXPECT_NE(message.find("vae.mod (its 'main', renamed by role)"), std::string::npos) << message;
}

TEST(ModuleMerge, BadRolesAndOriginsAreRefused) {
  const Module unet = imported_unet();
  const Module helper_module = helpers();
  EXPECT_NE(error_of([&] {
              merge_modules({{unet, "unet.mod"}}, {{{"unet.mod", "mian", "unet"}}});
            }).find("role for 'mian' from unet.mod matches no function"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              merge_modules({{unet, "unet.mod"}}, {{{"unet.mod", "main", ""}}});
            }).find("is empty"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              merge_modules({{unet, "unet.mod"}}, {{{"unet.mod", "main", "a"}, {"unet.mod", "main", "b"}}});
            }).find("given twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              merge_modules({{unet, "same"}, {helper_module, "same"}});
            }).find("two modules have the origin 'same'"),
            std::string::npos);
}

TEST(ModuleMerge, MergedHelpersComputeTheirResults) {
  const Module helper_module = helpers();
  const Module merged = merge_modules({{helper_module, "helpers.mod"}});

  cpu::CpuExecutor rgba(merged.at("image_to_rgba"));
  // [1,3,2,3]: channel c, pixel p holds values that exercise both clamps and the linear middle.
  const std::vector<float> values = {-2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f};
  cpu::CpuTensor image = cpu::CpuTensor::allocate({DType::kF32, {1, 3, 2, 3}});
  for (std::size_t c = 0; c < 3; ++c) {
    for (std::size_t p = 0; p < 6; ++p) (*image.f32)[c * 6 + p] = values[(p + c) % 6];
  }
  const auto pixels = rgba.run({image});
  ASSERT_EQ(pixels[0].type.shape, (Shape{2, 3, 4}));
  for (std::size_t p = 0; p < 6; ++p) {
    for (std::size_t c = 0; c < 3; ++c) {
      const float x = values[(p + c) % 6];
      const float expected = 255.0f * std::fmin(std::fmax(x * 0.5f + 0.5f, 0.0f), 1.0f);
      EXPECT_FLOAT_EQ((*pixels[0].f32)[p * 4 + c], expected) << "pixel " << p << " channel " << c;
    }
    EXPECT_EQ((*pixels[0].f32)[p * 4 + 3], 255.0f) << "alpha of pixel " << p;
  }
}

TEST(ModuleMerge, HelperBuildersRejectBadSizes) { EXPECT_THROW(image_to_rgba_graph(0, 8), Error); }

}  // namespace
}  // namespace websd::graph
