#include "models/model_params.h"
#include "models/param_list_builder.h"

namespace websd {

std::vector<ModelParam> clip_text_params(const ClipTextConfig& config) {
  const std::int64_t width = config.hidden_size;
  ParamListBuilder builder;
  builder.embedding("text_model.embeddings.token_embedding", config.vocab_size, width);
  builder.embedding("text_model.embeddings.position_embedding", config.max_position_embeddings, width);
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    const std::string prefix = "text_model.encoder.layers." + std::to_string(layer) + ".";
    for (const char* projection : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
      builder.linear(prefix + "self_attn." + projection, width, width);
    }
    builder.norm(prefix + "layer_norm1", width);
    builder.linear(prefix + "mlp.fc1", width, config.intermediate_size);
    builder.linear(prefix + "mlp.fc2", config.intermediate_size, width);
    builder.norm(prefix + "layer_norm2", width);
  }
  builder.norm("text_model.final_layer_norm", width);
  return builder.take();
}

}  // namespace websd
