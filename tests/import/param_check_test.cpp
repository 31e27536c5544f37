// Checking a component against the parameter list a network expects: every problem is collected
// and the error names the tensors, the files and the count.
#include <gtest/gtest.h>

#include "core/error.h"
#include "import/checkpoint_folder.h"
#include "import/diffusers_checkpoint.h"

namespace websd {
namespace {

class ParamCheckTest : public ::testing::Test {
 protected:
  std::string dir_ = test::write_checkpoint_folder("ckpt-check", {.unet_shards = 2});
  DiffusersCheckpoint checkpoint_ = DiffusersCheckpoint::open(dir_);
  const CheckpointComponent& unet_ = checkpoint_.component("unet");
};

TEST_F(ParamCheckTest, MatchingListBindsInTheExpectedOrder) {
  auto expected = test::unet_params();
  std::reverse(expected.begin(), expected.end());
  const auto bound = unet_.bind(expected);
  ASSERT_EQ(bound.size(), expected.size());
  for (std::size_t i = 0; i < bound.size(); ++i) {
    EXPECT_EQ(bound[i].spec, expected[i]);
    EXPECT_EQ(bound[i].location.entry->name, expected[i].name);
  }
}

TEST_F(ParamCheckTest, CollectsMissingUnexpectedAndWrongShape) {
  auto expected = test::unet_params();
  expected[0].shape = {8, 4, 1, 1};                                 // conv_in.weight: wrong shape
  expected.erase(expected.begin() + 5);                             // conv_out.bias: unexpected
  expected.push_back({"mid_block.attentions.0.proj.weight", {8}});  // missing
  expected.push_back({"mid_block.attentions.0.proj.bias", {8}});    // missing
  const ParamCheck check = unet_.check(expected);
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.count(ParamProblem::Kind::kWrongShape), 1u);
  EXPECT_EQ(check.count(ParamProblem::Kind::kMissing), 2u);
  EXPECT_EQ(check.count(ParamProblem::Kind::kUnexpected), 1u);
  ASSERT_EQ(check.problems.size(), 4u);
  const ParamProblem& wrong = check.problems[0];
  EXPECT_EQ(wrong.name, "conv_in.weight");
  EXPECT_EQ(wrong.actual, (Shape{8, 4, 3, 3}));
  EXPECT_EQ(wrong.file, dir_ + "/unet/diffusion_pytorch_model-00001-of-00002.safetensors");
  EXPECT_EQ(check.problems[3].name, "conv_out.bias");
  EXPECT_EQ(check.problems[3].file, dir_ + "/unet/diffusion_pytorch_model-00002-of-00002.safetensors");

  try {
    (void)unet_.bind(expected);
    FAIL();
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos);
    for (const char* part :
         {"unet (", "diffusion_pytorch_model.safetensors.index.json", "2 missing, 1 unexpected, 1 wrong shape",
          "'conv_in.weight' in diffusion_pytorch_model-00001-of-00002.safetensors has shape [8,4,3,3], expected "
          "[8,4,1,1]",
          "missing 'mid_block.attentions.0.proj.weight' [8]",
          "unexpected 'conv_out.bias' [4] in diffusion_pytorch_model-00002-of-00002.safetensors"}) {
      EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
    }
  }
}

TEST_F(ParamCheckTest, LongReportsListTheFirstFewAndTheCount) {
  std::vector<ParamSpec> expected = test::unet_params();
  for (int i = 0; i < 20; ++i) expected.push_back({"extra." + std::to_string(i), {1}});
  const ParamCheck check = unet_.check(expected);
  EXPECT_EQ(check.problems.size(), 20u);
  const std::string summary = check.summary(3);
  EXPECT_NE(summary.find("20 missing"), std::string::npos) << summary;
  EXPECT_NE(summary.find("missing 'extra.2' [1]; ... and 17 more"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("extra.3'"), std::string::npos) << summary;
}

TEST_F(ParamCheckTest, EmptyExpectationMakesEveryTensorUnexpected) {
  const ParamCheck check = unet_.check({});
  EXPECT_EQ(check.count(ParamProblem::Kind::kUnexpected), 6u);
}

TEST_F(ParamCheckTest, IntegerTensorCannotBindAsAParameter) {
  const auto dir = test::write_checkpoint_folder("ckpt-int", {.position_ids = true});
  const auto checkpoint = DiffusersCheckpoint::open(dir);
  auto expected = test::text_encoder_params();
  expected.push_back({"text_model.embeddings.position_ids", {1, 6}});
  const ParamCheck check = checkpoint.component("text_encoder").check(expected);
  ASSERT_EQ(check.problems.size(), 1u) << check.summary();
  EXPECT_EQ(check.problems[0].kind, ParamProblem::Kind::kNotFloat);
  EXPECT_NE(check.summary().find("'text_model.embeddings.position_ids' in model.safetensors is I64"), std::string::npos)
      << check.summary();
}

TEST_F(ParamCheckTest, DuplicateExpectedNamesAreABugInTheCaller) {
  const auto checkpoint = DiffusersCheckpoint::open(dir_);
  auto expected = test::text_encoder_params();
  expected.push_back({"final_layer_norm.bias", {4}});  // the same parameter in its other spelling
  EXPECT_THROW((void)checkpoint.component("text_encoder").check(expected), Error);
}

}  // namespace
}  // namespace websd
