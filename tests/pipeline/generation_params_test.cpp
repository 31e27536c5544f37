// The A1111 "parameters" text and the sampler names written into it.
#include "pipeline/generation_params.h"

#include <gtest/gtest.h>

#include "pipeline/sampler_name.h"
#include "pipeline/schedulers/scheduler_factory.h"

namespace websd {
namespace {

GenerationParams sample_params() {
  GenerationParams params;
  params.prompt = "a castle on a hill";
  params.negative_prompt = "fog";
  params.steps = 20;
  params.guidance_scale = 7.5;
  params.seed = 42;
  params.width = 512;
  params.height = 768;
  params.strength = 0.75;
  return params;
}

TEST(GenerationParameters, WritesTheA1111Layout) {
  EXPECT_EQ(generation_parameters_text(sample_params(), 1, "Euler a", "sd15", false),
            "a castle on a hill\nNegative prompt: fog\n"
            "Steps: 20, Sampler: Euler a, CFG scale: 7.5, Seed: 43, Size: 512x768, Model: sd15");
}

TEST(GenerationParameters, OmitsAnEmptyNegativePromptAndAddsImg2ImgStrength) {
  GenerationParams params = sample_params();
  params.negative_prompt.clear();
  params.guidance_scale = 7;
  EXPECT_EQ(generation_parameters_text(params, 0, "DDIM", "tiny", true),
            "a castle on a hill\n"
            "Steps: 20, Sampler: DDIM, CFG scale: 7, Seed: 42, Size: 512x768, Model: tiny, Denoising strength: 0.75");
}

TEST(SamplerName, FollowsA1111Names) {
  const auto name = [](const std::string& scheduler) {
    return sampler_display_name(*schedulers::create_scheduler_by_name(scheduler));
  };
  EXPECT_EQ(name("euler_a"), "Euler a");
  EXPECT_EQ(name("euler"), "Euler");
  EXPECT_EQ(name("euler_karras"), "Euler Karras");
  EXPECT_EQ(name("dpmpp_2m"), "DPM++ 2M");
  EXPECT_EQ(name("dpmpp_2m_karras"), "DPM++ 2M Karras");
  EXPECT_EQ(name("pndm"), "PLMS");
  EXPECT_EQ(name("ddim"), "DDIM");
  EXPECT_EQ(name("unipc"), "UniPC");
}

}  // namespace
}  // namespace websd
