// transformers' CLIPTextModel.forward up to last_hidden_state (no pooling, no attention mask: SD
// pipelines pass none, so only the causal mask applies).
#include "core/error.h"
#include "models/graphs/graph_sizes.h"
#include "models/graphs/layers.h"
#include "models/graphs/sd_graphs.h"

namespace websd {
namespace {

using graph::FunctionBuilder;
using graph::ValueId;

// CLIPTextEmbeddings: token embedding plus the position embedding of positions 0..tokens-1, which are
// the first rows of the table (broadcast over the batch).
ValueId embeddings(FunctionBuilder& b, const ClipTextConfig& config, ValueId ids) {
  const auto scope = b.scope("embeddings");
  const std::int64_t width = config.hidden_size, tokens = b.shape(ids)[1];
  const ValueId token_table = b.weight("token_embedding.weight", {config.vocab_size, width});
  const ValueId position_table = b.weight("position_embedding.weight", {config.max_position_embeddings, width});
  return b.add(b.op("gather_rows", {token_table, ids}), b.slice(position_table, 0, 0, tokens));
}

// CLIPEncoderLayer: pre-LayerNorm causal self-attention and MLP, each added to its input.
ValueId encoder_layer(FunctionBuilder& b, const ClipTextConfig& config, const std::string& name, ValueId x) {
  const auto scope = b.scope(name);
  const std::int64_t width = config.hidden_size;
  {
    const ValueId normed = layers::layer_norm(b, "layer_norm1", x, config.layer_norm_eps);
    const auto attention_scope = b.scope("self_attn");
    const ValueId q = layers::linear(b, "q_proj", normed, width);
    const ValueId k = layers::linear(b, "k_proj", normed, width);
    const ValueId v = layers::linear(b, "v_proj", normed, width);
    const ValueId attended = layers::multi_head_attention(b, q, k, v, config.num_attention_heads, true);
    x = b.add(x, layers::linear(b, "out_proj", attended, width));
  }
  const ValueId normed = layers::layer_norm(b, "layer_norm2", x, config.layer_norm_eps);
  const auto mlp_scope = b.scope("mlp");
  ValueId hidden = layers::linear(b, "fc1", normed, config.intermediate_size);
  hidden = b.op(config.hidden_act == ClipActivation::kGelu ? "gelu" : "quick_gelu", {hidden});
  return b.add(x, layers::linear(b, "fc2", hidden, width));
}

}  // namespace

graph::Function clip_text_graph(const ClipTextConfig& config, std::int64_t batch, std::int64_t tokens) {
  graph_sizes::require_positive("text_encoder", "clip_text_graph", "batch", batch);
  if (tokens < 1 || tokens > config.max_position_embeddings) {
    throw Error("text_encoder", "clip_text_graph: tokens = " + std::to_string(tokens) + " must be in [1, " +
                                    std::to_string(config.max_position_embeddings) +
                                    "] (max_position_embeddings); truncate the prompt ids");
  }
  graph::Function function("clip");
  FunctionBuilder b(function);
  const ValueId ids = b.input("input_ids", {DType::kI64, {batch, tokens}});
  const auto scope = b.scope("text_model");
  ValueId x = embeddings(b, config, ids);
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    x = encoder_layer(b, config, "encoder.layers." + std::to_string(layer), x);
  }
  function.set_outputs({layers::layer_norm(b, "final_layer_norm", x, config.layer_norm_eps)});
  return function;
}

}  // namespace websd
