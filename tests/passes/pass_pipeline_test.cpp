// The pass pipeline: the default list on a real network, IR dumps after each pass, notes, and
// failures that name the pass.
#include "passes/pass_pipeline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "graph/op_registry.h"
#include "graph/printer.h"
#include "models/graphs/sd_graphs.h"
#include "pass_test_support.h"
#include "passes/verify.h"
#include "support/fixtures.h"

namespace websd::passes {
namespace {

using graph::Function;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool keep_attention(const std::string& op) { return op == "attention"; }

TEST(PassPipeline, DefaultPipelineLowersAndReportsUnusedWeights) {
  Function unet = unet_graph(test::tiny_unet_config(), 1, 8, 8);
  unet.add_weight("leftover.weight", {DType::kF32, {3}});
  const Pipeline pipeline = default_pipeline(keep_attention);
  std::vector<std::string> names;
  for (const Pass& pass : pipeline) names.push_back(pass.name);
  EXPECT_EQ(names, (std::vector<std::string>{"verify", "dce", "constant_folding", "lower_composites", "verify"}));

  const PipelineResult result = run_pipeline(unet, pipeline);
  EXPECT_NO_THROW(verify(result.function));
  EXPECT_GT(test::count_op(result.function, "attention"), 0u);
  for (const graph::Node& node : result.function.nodes()) {
    EXPECT_TRUE(!node.op->has_trait(graph::kTraitComposite) || node.op->name == "attention") << node.op->name;
  }
  EXPECT_EQ(result.function.weights().size(), unet.weights().size() - 1);
  ASSERT_FALSE(result.notes.empty());
  EXPECT_NE(result.notes[0].find("dce: unet: dropped 1 weights that nothing uses: leftover.weight"), std::string::npos)
      << result.notes[0];
}

TEST(PassPipeline, DumpsTheIrAfterEachPass) {
  const std::string dir = test::make_temp_dir("pass_pipeline_dump") + "/ir";  // created by the pipeline
  const Function function = test::small_function();
  const PipelineResult result = run_pipeline(function, default_pipeline(keep_attention), {dir});
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files,
            (std::vector<std::string>{"00-input.f.ir", "01-verify.f.ir", "02-dce.f.ir", "03-constant_folding.f.ir",
                                      "04-lower_composites.f.ir", "05-verify.f.ir"}));
  EXPECT_EQ(read_text(dir + "/00-input.f.ir"), graph::print_function(function));
  EXPECT_EQ(read_text(dir + "/05-verify.f.ir"), graph::print_function(result.function));
}

TEST(PassPipeline, ModulesKeepSymbolsOriginsAndOrder) {
  graph::Module module;
  module.add_function(unet_graph(test::tiny_unet_config(), 1, 8, 8), "unet/config.json");
  module.add_function(test::small_function(), "small.mod");
  const std::string dir = test::make_temp_dir("pass_pipeline_module");
  const ModulePipelineResult result = run_pipeline(module, default_pipeline(keep_attention), {dir});
  const auto functions = result.module.functions();
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[0]->symbol(), "unet");
  EXPECT_EQ(functions[1]->symbol(), "f");
  EXPECT_EQ(result.module.origin("unet"), "unet/config.json");
  EXPECT_TRUE(std::filesystem::exists(dir + "/04-lower_composites.unet.ir"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/04-lower_composites.f.ir"));
}

TEST(PassPipeline, AFailingPassIsNamed) {
  const Pipeline pipeline = {
      {"verify", [](const Function& f, PassNotes&) { return f; }},
      {"explode",
       [](const Function&, PassNotes&) -> Function { throw Error("explode", "node 3: cannot do this (a test)"); }},
      {"dce", [](const Function& f, PassNotes&) { return f; }},
  };
  test::expect_error_mentions(
      [&] { run_pipeline(test::small_function(), pipeline); },
      {"[passes]", "pass 'explode' (2 of 3)", "function 'f'", "[explode] node 3: cannot do this"});
}

TEST(PassPipeline, ABrokenResultIsCaughtByTheNextVerify) {
  Pipeline pipeline = default_pipeline(keep_attention);
  pipeline.insert(pipeline.end() - 1, Pass{"break_types", [](const Function& f, PassNotes&) {
                                             std::vector<graph::Value> values = f.values();
                                             values.back().type.shape = {7};
                                             return Function::from_parts(f.symbol(), values, f.nodes(), f.inputs(),
                                                                         f.weights(), f.outputs());
                                           }});
  test::expect_error_mentions([&] { run_pipeline(test::small_function(), pipeline); },
                              {"pass 'verify' (6 of 6)", "[verify] function 'f' node 2 (mul)", "f32[7]"});
}

TEST(PassPipeline, BadPassesAndDumpFoldersAreRefused) {
  const PassFn identity = [](const Function& f, PassNotes&) { return f; };
  test::expect_error_mentions(
      [&] {
        run_pipeline(test::small_function(), {{"../escape", identity}});
      },
      {"[passes]", "'../escape'", "lower-case"});
  test::expect_error_mentions(
      [&] {
        run_pipeline(test::small_function(), {{"empty", nullptr}});
      },
      {"pass 'empty' has no function"});
  const std::string file = test::make_temp_dir("pass_pipeline_bad_dump") + "/a_file";
  std::ofstream(file) << "x";
  test::expect_error_mentions(
      [&] {
        run_pipeline(test::small_function(), {{"ok", identity}}, {file + "/ir"});
      },
      {"[passes]", "cannot create the IR dump folder", file});
}

}  // namespace
}  // namespace websd::passes
