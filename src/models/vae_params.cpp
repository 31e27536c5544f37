#include "models/model_params.h"
#include "models/param_list_builder.h"

namespace websd {
namespace {

// Mirrors the module tree of diffusers' AutoencoderKL (Encoder, Decoder, quant convs), in forward order.
class VaeParamWriter {
 public:
  explicit VaeParamWriter(const VaeConfig& config) : config_(config) {}

  std::vector<ModelParam> build() {
    encoder();
    if (config_.use_quant_conv)
      builder_.conv("quant_conv", 2 * config_.latent_channels, 2 * config_.latent_channels, 1);
    if (config_.use_post_quant_conv)
      builder_.conv("post_quant_conv", config_.latent_channels, config_.latent_channels, 1);
    decoder();
    return builder_.take();
  }

 private:
  void encoder() {
    const auto& channels = config_.block_out_channels;
    builder_.conv("encoder.conv_in", config_.in_channels, channels[0], 3);
    for (std::size_t i = 0; i < config_.block_count(); ++i) {
      const std::string prefix = "encoder.down_blocks." + std::to_string(i) + ".";
      const std::int64_t out = channels[i];
      const std::int64_t in = i == 0 ? out : channels[i - 1];
      for (std::int64_t j = 0; j < config_.layers_per_block; ++j) {
        resnet(prefix + "resnets." + std::to_string(j) + ".", j == 0 ? in : out, out);
      }
      if (i + 1 < config_.block_count()) builder_.conv(prefix + "downsamplers.0.conv", out, out, 3);
    }
    mid_block("encoder.mid_block.");
    builder_.norm("encoder.conv_norm_out", channels.back());
    // The encoder predicts mean and log-variance: twice the latent channels.
    builder_.conv("encoder.conv_out", channels.back(), 2 * config_.latent_channels, 3);
  }

  void decoder() {
    const auto& channels = config_.block_out_channels;
    const std::size_t blocks = config_.block_count();
    builder_.conv("decoder.conv_in", config_.latent_channels, channels.back(), 3);
    mid_block("decoder.mid_block.");
    for (std::size_t i = 0; i < blocks; ++i) {
      const std::string prefix = "decoder.up_blocks." + std::to_string(i) + ".";
      const std::size_t mirror = blocks - 1 - i;
      const std::int64_t out = channels[mirror];
      const std::int64_t in = i == 0 ? channels.back() : channels[mirror + 1];
      for (std::int64_t j = 0; j < config_.layers_per_block + 1; ++j) {
        resnet(prefix + "resnets." + std::to_string(j) + ".", j == 0 ? in : out, out);
      }
      if (i + 1 < blocks) builder_.conv(prefix + "upsamplers.0.conv", out, out, 3);
    }
    builder_.norm("decoder.conv_norm_out", channels[0]);
    builder_.conv("decoder.conv_out", channels[0], config_.out_channels, 3);
  }

  void mid_block(const std::string& prefix) {
    const std::int64_t channels = config_.block_out_channels.back();
    resnet(prefix + "resnets.0.", channels, channels);
    if (config_.mid_block_add_attention) {
      // Single-head self-attention; current diffusers names its projections to_q/to_k/to_v/to_out.0.
      const std::string attention = prefix + "attentions.0.";
      builder_.norm(attention + "group_norm", channels);
      for (const char* projection : {"to_q", "to_k", "to_v", "to_out.0"}) {
        builder_.linear(attention + projection, channels, channels);
      }
    }
    resnet(prefix + "resnets.1.", channels, channels);
  }

  // ResnetBlock2D without a time embedding.
  void resnet(const std::string& prefix, std::int64_t in, std::int64_t out) {
    builder_.norm(prefix + "norm1", in);
    builder_.conv(prefix + "conv1", in, out, 3);
    builder_.norm(prefix + "norm2", out);
    builder_.conv(prefix + "conv2", out, out, 3);
    if (in != out) builder_.conv(prefix + "conv_shortcut", in, out, 1);
  }

  const VaeConfig& config_;
  ParamListBuilder builder_;
};

}  // namespace

std::vector<ModelParam> vae_params(const VaeConfig& config) { return VaeParamWriter(config).build(); }

}  // namespace websd
