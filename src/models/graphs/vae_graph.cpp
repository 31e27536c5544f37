// AutoencoderKL's decode (post_quant_conv + Decoder) and encode (Encoder + quant_conv + the diagonal
// Gaussian's mean and clamped log-variance).
#include "models/graphs/graph_sizes.h"
#include "models/graphs/layers.h"
#include "models/graphs/sd_blocks.h"
#include "models/graphs/sd_graphs.h"

namespace websd {
namespace {

using graph::FunctionBuilder;
using graph::ValueId;

// Encoder and Decoder hard-code eps 1e-6 for every GroupNorm (resnets, attention, conv_norm_out).
constexpr double kVaeNormEps = 1e-6;
// DiagonalGaussianDistribution clamps the log-variance to this range.
constexpr double kLogvarMin = -30.0;
constexpr double kLogvarMax = 20.0;

blocks::NormSettings vae_norm(const VaeConfig& config) { return {config.norm_num_groups, kVaeNormEps}; }

ValueId resnet(FunctionBuilder& b, const VaeConfig& config, const std::string& name, ValueId x,
               std::int64_t out_channels) {
  return blocks::resnet_block(b, name, x, out_channels, std::nullopt, vae_norm(config));
}

// UNetMidBlock2D without time embedding: resnet, single-head self-attention (if enabled), resnet.
ValueId mid_block(FunctionBuilder& b, const VaeConfig& config, ValueId x) {
  const auto scope = b.scope("mid_block");
  const std::int64_t channels = config.block_out_channels.back();
  x = resnet(b, config, "resnets.0", x, channels);
  if (config.mid_block_add_attention) x = blocks::spatial_self_attention(b, "attentions.0", x, vae_norm(config));
  return resnet(b, config, "resnets.1", x, channels);
}

// conv_norm_out, silu, conv_out.
ValueId output_head(FunctionBuilder& b, const VaeConfig& config, ValueId x, std::int64_t out_channels) {
  x = layers::silu(b, layers::group_norm(b, "conv_norm_out", x, config.norm_num_groups, kVaeNormEps));
  return layers::conv2d(b, "conv_out", x, out_channels, 3, 1, 1);
}

ValueId decoder(FunctionBuilder& b, const VaeConfig& config, ValueId z) {
  const auto scope = b.scope("decoder");
  const auto& channels = config.block_out_channels;
  const std::size_t levels = config.block_count();
  ValueId x = mid_block(b, config, layers::conv2d(b, "conv_in", z, channels.back(), 3, 1, 1));
  // UpDecoderBlock2D i runs at the width of encoder level (blocks - 1 - i), with one more resnet.
  for (std::size_t i = 0; i < levels; ++i) {
    const std::string prefix = "up_blocks." + std::to_string(i);
    for (std::int64_t j = 0; j <= config.layers_per_block; ++j) {
      x = resnet(b, config, prefix + ".resnets." + std::to_string(j), x, channels[levels - 1 - i]);
    }
    if (i + 1 < levels) x = blocks::upsample(b, prefix + ".upsamplers.0", x);
  }
  return output_head(b, config, x, config.out_channels);
}

ValueId encoder(FunctionBuilder& b, const VaeConfig& config, ValueId image) {
  const auto scope = b.scope("encoder");
  const auto& channels = config.block_out_channels;
  ValueId x = layers::conv2d(b, "conv_in", image, channels[0], 3, 1, 1);
  for (std::size_t i = 0; i < config.block_count(); ++i) {
    const std::string prefix = "down_blocks." + std::to_string(i);
    for (std::int64_t j = 0; j < config.layers_per_block; ++j) {
      x = resnet(b, config, prefix + ".resnets." + std::to_string(j), x, channels[i]);
    }
    // DownEncoderBlock2D's Downsample2D has padding 0: asymmetric pad, then a stride-2 conv.
    if (i + 1 < config.block_count()) x = blocks::downsample(b, prefix + ".downsamplers.0", x, 0);
  }
  // double_z: the encoder predicts mean and log-variance together.
  return output_head(b, config, mid_block(b, config, x), 2 * config.latent_channels);
}

}  // namespace

graph::Function vae_decode_graph(const VaeConfig& config, std::int64_t batch, std::int64_t latent_h,
                                 std::int64_t latent_w) {
  graph_sizes::require_positive("vae", "vae_decode_graph", "batch", batch);
  // The decoder only doubles, so any latent size works.
  graph_sizes::require_spatial("vae", "vae_decode_graph", "latent", latent_h, latent_w, 1);
  graph::Function function("vae_decode");
  FunctionBuilder b(function);
  ValueId z = b.input("latents", {DType::kF32, {batch, config.latent_channels, latent_h, latent_w}});
  if (config.use_post_quant_conv) z = layers::conv2d(b, "post_quant_conv", z, config.latent_channels, 1);
  function.set_outputs({decoder(b, config, z)});
  return function;
}

graph::Function vae_encode_graph(const VaeConfig& config, std::int64_t batch, std::int64_t height, std::int64_t width) {
  graph_sizes::require_positive("vae", "vae_encode_graph", "batch", batch);
  graph_sizes::require_spatial("vae", "vae_encode_graph", "image", height, width, config.block_count());
  graph::Function function("vae_encode");
  FunctionBuilder b(function);
  const ValueId image = b.input("image", {DType::kF32, {batch, config.in_channels, height, width}});
  ValueId moments = encoder(b, config, image);
  if (config.use_quant_conv) moments = layers::conv2d(b, "quant_conv", moments, 2 * config.latent_channels, 1);
  const std::int64_t latent = config.latent_channels;
  const ValueId mean = b.slice(moments, 1, 0, latent);
  const ValueId logvar =
      b.op("clamp", {b.slice(moments, 1, latent, 2 * latent)}, {{"min", kLogvarMin}, {"max", kLogvarMax}});
  function.set_outputs({mean, logvar});
  return function;
}

}  // namespace websd
