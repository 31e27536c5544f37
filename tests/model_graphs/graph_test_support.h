// Shared helpers of the model-graph tests: weights from the tiny fixture checkpoint or generated at
// random for any config, the fixture's expected tensors, and runs of a graph on the CPU executor.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/param_spec.h"
#include "targets/cpu/reference/cpu_executor.h"
#include "graph/function.h"
#include "import/checkpoint_component.h"
#include "models/model_params.h"

namespace websd {

// Readable failure messages for EXPECT_EQ on parameter lists: "name [d0,d1]".
inline void PrintTo(const ParamSpec& spec, std::ostream* out) {
  *out << spec.name << " " << shape_to_string(spec.shape);
}

}  // namespace websd

namespace websd::test {

// The fixture's diffusers folder "tiny-sd15/model" and one of its parsed component configs.
std::string tiny_model_dir();
ClipTextConfig tiny_clip_config();
UNetConfig tiny_unet_config();
VaeConfig tiny_vae_config();

// Configurations of our own, parsed like a checkpoint's config.json, for the graphs no fixture covers:
// an SD 2.x-style UNet (linear projections, per-block heads 2/4/4, cross_attention_dim 48, one resnet
// per block, 2 transformer layers, 16 groups, upcast attention) -- with `linear_projection` false the
// same network with 1x1-conv projections; a 2-block UNet (per-block resnet and transformer counts,
// 8 groups, flip_sin_to_cos false, freq_shift 1, time_embedding_dim 96); a 3-level VAE (16 groups,
// one resnet per block); a 2-level VAE without quant convs and without mid-block attention.
UNetConfig sd2_style_unet_config(bool linear_projection = true);
UNetConfig two_block_unet_config();
VaeConfig three_level_vae_config();
VaeConfig plain_two_level_vae_config();

// The function's weights as (name, shape), sorted by name, and a param list sorted the same way.
std::vector<ParamSpec> sorted_weight_specs(const graph::Function& function);
std::vector<ParamSpec> sorted_specs(const std::vector<ModelParam>& params);

// Checks the checkpoint component against the network's parameter list (CheckpointComponent::bind:
// every tensor present, none unexpected, shapes equal), then serves the weights a function asks for,
// upcast to float32; a weight the list lacks or shapes differently fails the test. The component
// must outlive the source.
cpu::WeightSource checkpoint_weights(const CheckpointComponent& component, const std::vector<ModelParam>& params);
// Deterministic random weights (param_init_f16, upcast) for the parameters `params` lists; a weight
// the list lacks or shapes differently fails the test.
cpu::WeightSource random_weights(const std::vector<ModelParam>& params, std::uint64_t seed);

// An f32 tensor of the fixture's reference/expected.safetensors.
cpu::CpuTensor expected_tensor(const std::string& key);
cpu::CpuTensor expected_i64_tensor(const std::string& key);
cpu::CpuTensor filled_tensor(const Shape& shape, float value);

// Builds an executor for `function`, binds `weights` and runs it once.
std::vector<cpu::CpuTensor> run_on_cpu(const graph::Function& function, const cpu::WeightSource& weights,
                                       const std::vector<cpu::CpuTensor>& inputs);

// Every value finite, and not all equal (a broken graph often yields NaN or a constant).
void expect_finite_and_varied(const cpu::CpuTensor& tensor, const std::string& what);

}  // namespace websd::test
