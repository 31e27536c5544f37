#include "models/model_params.h"
#include "models/param_list_builder.h"

namespace websd {
namespace {

// Mirrors the module tree of diffusers' UNet2DConditionModel, in forward order.
class UNetParamWriter {
 public:
  explicit UNetParamWriter(const UNetConfig& config) : config_(config) {}

  std::vector<ModelParam> build() {
    const auto& channels = config_.block_out_channels;
    builder_.conv("conv_in", config_.in_channels, channels[0], config_.conv_in_kernel);
    builder_.linear("time_embedding.linear_1", channels[0], config_.time_embed_dim);
    builder_.linear("time_embedding.linear_2", config_.time_embed_dim, config_.time_embed_dim);
    for (std::size_t i = 0; i < config_.block_count(); ++i) down_block(i);
    mid_block();
    for (std::size_t i = 0; i < config_.block_count(); ++i) up_block(i);
    builder_.norm("conv_norm_out", channels[0]);
    builder_.conv("conv_out", channels[0], config_.out_channels, config_.conv_out_kernel);
    return builder_.take();
  }

 private:
  void down_block(std::size_t i) {
    const std::string prefix = "down_blocks." + std::to_string(i) + ".";
    const std::int64_t out = config_.block_out_channels[i];
    const std::int64_t in = i == 0 ? out : config_.block_out_channels[i - 1];
    for (std::int64_t j = 0; j < config_.layers_per_block[i]; ++j) {
      const std::string index = std::to_string(j);
      resnet(prefix + "resnets." + index + ".", j == 0 ? in : out, out);
      if (config_.down_block_types[i] == UNetBlockType::kCrossAttn) {
        transformer(prefix + "attentions." + index + ".", out, config_.down_transformer_layers[i][j]);
      }
    }
    if (i + 1 < config_.block_count()) builder_.conv(prefix + "downsamplers.0.conv", out, out, 3);
  }

  void mid_block() {
    const std::int64_t channels = config_.block_out_channels.back();
    if (config_.mid_block_type == UNetMidBlockType::kNone) return;
    resnet("mid_block.resnets.0.", channels, channels);
    if (config_.mid_block_type == UNetMidBlockType::kResnetOnly) return;
    transformer("mid_block.attentions.0.", channels, config_.mid_transformer_layers);
    resnet("mid_block.resnets.1.", channels, channels);
  }

  // Up block i mirrors down block (blocks - 1 - i) and concatenates its skip connections: the last
  // resnet takes the skip from the block above, whose width is that of the next shallower level.
  void up_block(std::size_t i) {
    const std::size_t blocks = config_.block_count();
    const std::size_t mirror = blocks - 1 - i;
    const std::string prefix = "up_blocks." + std::to_string(i) + ".";
    const std::int64_t out = config_.block_out_channels[mirror];
    const std::int64_t previous = i == 0 ? config_.block_out_channels.back() : config_.block_out_channels[mirror + 1];
    const std::int64_t skip_last = config_.block_out_channels[mirror == 0 ? 0 : mirror - 1];
    const std::int64_t layers = config_.layers_per_block[mirror] + 1;
    for (std::int64_t j = 0; j < layers; ++j) {
      const std::string index = std::to_string(j);
      const std::int64_t skip = j == layers - 1 ? skip_last : out;
      resnet(prefix + "resnets." + index + ".", (j == 0 ? previous : out) + skip, out);
      if (config_.up_block_types[i] == UNetBlockType::kCrossAttn) {
        transformer(prefix + "attentions." + index + ".", out, config_.up_transformer_layers[i][j]);
      }
    }
    if (i + 1 < blocks) builder_.conv(prefix + "upsamplers.0.conv", out, out, 3);
  }

  void resnet(const std::string& prefix, std::int64_t in, std::int64_t out) {
    builder_.norm(prefix + "norm1", in);
    builder_.conv(prefix + "conv1", in, out, 3);
    builder_.linear(prefix + "time_emb_proj", config_.time_embed_dim, out);
    builder_.norm(prefix + "norm2", out);
    builder_.conv(prefix + "conv2", out, out, 3);
    if (in != out) builder_.conv(prefix + "conv_shortcut", in, out, 1);
  }

  // Transformer2DModel: GroupNorm, proj_in, BasicTransformerBlocks (self-attention, cross-attention,
  // GEGLU feed-forward with 4x inner width), proj_out.
  void transformer(const std::string& prefix, std::int64_t channels, std::int64_t layers) {
    builder_.norm(prefix + "norm", channels);
    projection(prefix + "proj_in", channels);
    for (std::int64_t k = 0; k < layers; ++k) {
      const std::string block = prefix + "transformer_blocks." + std::to_string(k) + ".";
      builder_.norm(block + "norm1", channels);
      attention(block + "attn1", channels, channels);
      builder_.norm(block + "norm2", channels);
      attention(block + "attn2", channels, config_.cross_attention_dim);
      builder_.norm(block + "norm3", channels);
      builder_.linear(block + "ff.net.0.proj", channels, channels * 4 * 2);
      builder_.linear(block + "ff.net.2", channels * 4, channels);
    }
    projection(prefix + "proj_out", channels);
  }

  void attention(const std::string& prefix, std::int64_t dim, std::int64_t context_dim) {
    builder_.linear(prefix + ".to_q", dim, dim, false);
    builder_.linear(prefix + ".to_k", context_dim, dim, false);
    builder_.linear(prefix + ".to_v", context_dim, dim, false);
    builder_.linear(prefix + ".to_out.0", dim, dim);
  }

  void projection(const std::string& name, std::int64_t channels) {
    if (config_.use_linear_projection) {
      builder_.linear(name, channels, channels);
    } else {
      builder_.conv(name, channels, channels, 1);
    }
  }

  const UNetConfig& config_;
  ParamListBuilder builder_;
};

}  // namespace

std::vector<ModelParam> unet_params(const UNetConfig& config) { return UNetParamWriter(config).build(); }

}  // namespace websd
