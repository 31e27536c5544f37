// UNet2DConditionModel.forward for SD 1.x / 2.x configs (see unet_config.h for what is supported).
#include <vector>

#include "models/graphs/graph_sizes.h"
#include "models/graphs/layers.h"
#include "models/graphs/sd_blocks.h"
#include "models/graphs/sd_graphs.h"

namespace websd {
namespace {

using graph::FunctionBuilder;
using graph::ValueId;

class UNetGraphWriter {
 public:
  UNetGraphWriter(const UNetConfig& config, FunctionBuilder& builder) : config_(config), b_(builder) {}

  ValueId build(ValueId sample, ValueId timestep, ValueId context) {
    context_ = context;
    time_features_ = layers::silu(b_, time_embedding(timestep));
    ValueId x = layers::conv2d(b_, "conv_in", sample, config_.block_out_channels[0], config_.conv_in_kernel, 1,
                               config_.conv_in_kernel / 2);
    skips_ = {x};
    for (std::size_t i = 0; i < config_.block_count(); ++i) x = down_block(i, x);
    x = mid_block(x);
    for (std::size_t i = 0; i < config_.block_count(); ++i) x = up_block(i, x);
    x = layers::silu(b_, layers::group_norm(b_, "conv_norm_out", x, config_.norm_num_groups, config_.norm_eps));
    return layers::conv2d(b_, "conv_out", x, config_.out_channels, config_.conv_out_kernel, 1,
                          config_.conv_out_kernel / 2);
  }

 private:
  // Timesteps (sinusoidal, width block_out_channels[0]) -> TimestepEmbedding (linear, silu, linear).
  ValueId time_embedding(ValueId timestep) {
    const ValueId sinusoid = b_.op("timestep_embedding", {timestep},
                                   {{"dim", config_.block_out_channels[0]},
                                    {"flip_sin_to_cos", std::int64_t{config_.flip_sin_to_cos ? 1 : 0}},
                                    {"freq_shift", config_.freq_shift}});
    const auto scope = b_.scope("time_embedding");
    const ValueId hidden = layers::silu(b_, layers::linear(b_, "linear_1", sinusoid, config_.time_embed_dim));
    return layers::linear(b_, "linear_2", hidden, config_.time_embed_dim);
  }

  ValueId resnet(const std::string& name, ValueId x, std::int64_t out_channels) {
    return blocks::resnet_block(b_, name, x, out_channels, time_features_, {config_.norm_num_groups, config_.norm_eps});
  }

  // Heads of down block `level` (up blocks and the mid block mirror a down block), `layers`
  // BasicTransformerBlocks. upcast_attention asks for float32 scores, which the attention op always computes.
  ValueId transformer(const std::string& name, ValueId x, std::size_t level, std::int64_t layers) {
    const blocks::TransformerSettings settings{config_.attention_heads[level], layers, config_.norm_num_groups,
                                               config_.use_linear_projection};
    return blocks::spatial_transformer(b_, name, x, context_, settings);
  }

  // CrossAttnDownBlock2D / DownBlock2D: every resnet(+transformer) output and the downsampled output
  // are kept as skip connections for the up path.
  ValueId down_block(std::size_t i, ValueId x) {
    const std::string prefix = "down_blocks." + std::to_string(i);
    const std::int64_t channels = config_.block_out_channels[i];
    for (std::int64_t j = 0; j < config_.layers_per_block[i]; ++j) {
      const std::string index = std::to_string(j);
      x = resnet(prefix + ".resnets." + index, x, channels);
      if (config_.down_block_types[i] == UNetBlockType::kCrossAttn) {
        x = transformer(prefix + ".attentions." + index, x, i, config_.down_transformer_layers[i][j]);
      }
      skips_.push_back(x);
    }
    if (i + 1 < config_.block_count()) {
      x = blocks::downsample(b_, prefix + ".downsamplers.0", x, config_.downsample_padding);
      skips_.push_back(x);
    }
    return x;
  }

  // UNetMidBlock2DCrossAttn: resnet, transformer, resnet at the deepest level; UNetMidBlock2D: one
  // resnet; no mid block: the down path's output goes straight up.
  ValueId mid_block(ValueId x) {
    if (config_.mid_block_type == UNetMidBlockType::kNone) return x;
    const std::int64_t channels = config_.block_out_channels.back();
    x = resnet("mid_block.resnets.0", x, channels);
    if (config_.mid_block_type == UNetMidBlockType::kResnetOnly) return x;
    x = transformer("mid_block.attentions.0", x, config_.block_count() - 1, config_.mid_transformer_layers);
    return resnet("mid_block.resnets.1", x, channels);
  }

  // CrossAttnUpBlock2D / UpBlock2D i mirrors down block (blocks - 1 - i): each resnet first joins the
  // most recent skip connection along channels (hidden first, as torch.cat([hidden, skip], dim=1)).
  ValueId up_block(std::size_t i, ValueId x) {
    const std::size_t mirror = config_.block_count() - 1 - i;
    const std::string prefix = "up_blocks." + std::to_string(i);
    const std::int64_t channels = config_.block_out_channels[mirror];
    for (std::int64_t j = 0; j <= config_.layers_per_block[mirror]; ++j) {
      const std::string index = std::to_string(j);
      x = b_.concat({x, skips_.back()}, 1);
      skips_.pop_back();
      x = resnet(prefix + ".resnets." + index, x, channels);
      if (config_.up_block_types[i] == UNetBlockType::kCrossAttn) {
        x = transformer(prefix + ".attentions." + index, x, mirror, config_.up_transformer_layers[i][j]);
      }
    }
    if (i + 1 < config_.block_count()) x = blocks::upsample(b_, prefix + ".upsamplers.0", x);
    return x;
  }

  const UNetConfig& config_;
  FunctionBuilder& b_;
  ValueId context_ = -1;
  ValueId time_features_ = -1;  // silu(time embedding), shared by every resnet
  std::vector<ValueId> skips_;
};

}  // namespace

graph::Function unet_graph(const UNetConfig& config, std::int64_t batch, std::int64_t latent_h, std::int64_t latent_w,
                           std::int64_t tokens) {
  graph_sizes::require_positive("unet", "unet_graph", "batch", batch);
  graph_sizes::require_positive("unet", "unet_graph", "tokens", tokens);
  graph_sizes::require_spatial("unet", "unet_graph", "latent", latent_h, latent_w, config.block_count());
  graph::Function function("unet");
  FunctionBuilder b(function);
  const ValueId sample = b.input("sample", {DType::kF32, {batch, config.in_channels, latent_h, latent_w}});
  const ValueId timestep = b.input("timestep", {DType::kF32, {batch}});
  const ValueId context = b.input("encoder_hidden_states", {DType::kF32, {batch, tokens, config.cross_attention_dim}});
  function.set_outputs({UNetGraphWriter(config, b).build(sample, timestep, context)});
  return function;
}

}  // namespace websd
