#include "models/clip_config.h"

#include "core/error.h"
#include "io/json_file.h"
#include "models/config_limits.h"
#include "models/config_reader.h"

namespace websd {

ClipTextConfig clip_config_from_json(const nlohmann::json& config, const std::string& origin) {
  // A whole CLIPConfig (text and vision towers): transformers' CLIPTextConfig.from_pretrained reads its
  // text_config, and CLIPTextModel loads the text tower's weights from such a checkpoint.
  if (config.is_object() && config.value("model_type", nlohmann::json()) == "clip") {
    const auto text = config.find("text_config");
    if (text == config.end() || !text->is_object()) {
      throw Error("text_encoder", origin +
                                      ": model_type \"clip\" without a text_config object (expected a "
                                      "CLIPTextConfig, or a CLIPConfig holding one)");
    }
    nlohmann::json text_config = *text;
    text_config.erase("model_type");
    text_config.erase("architectures");
    return clip_config_from_json(text_config, origin + " (text_config)");
  }
  ConfigReader reader(config, "text_encoder", origin);
  ClipTextConfig out;
  out.vocab_size = reader.positive_int("vocab_size", out.vocab_size);
  out.hidden_size = reader.positive_int("hidden_size", out.hidden_size);
  out.intermediate_size = reader.positive_int("intermediate_size", out.intermediate_size);
  out.num_hidden_layers = reader.positive_int("num_hidden_layers", out.num_hidden_layers);
  out.num_attention_heads = reader.positive_int("num_attention_heads", out.num_attention_heads);
  out.max_position_embeddings = reader.positive_int("max_position_embeddings", out.max_position_embeddings);
  // transformers' ACT2FN: "gelu" and "gelu_python" are both the exact (erf) GELU.
  const std::string act = reader.choice("hidden_act", "quick_gelu", {"quick_gelu", "gelu", "gelu_python"});
  out.hidden_act = act == "quick_gelu" ? ClipActivation::kQuickGelu : ClipActivation::kGelu;
  out.layer_norm_eps = reader.number("layer_norm_eps", out.layer_norm_eps);
  out.projection_dim = reader.positive_int("projection_dim", out.projection_dim);
  using namespace config_limits;
  at_most(reader, "vocab_size", out.vocab_size, kVocabulary);
  at_most(reader, "hidden_size", out.hidden_size, kChannels);
  at_most(reader, "intermediate_size", out.intermediate_size, 4 * kChannels);
  at_most(reader, "num_hidden_layers", out.num_hidden_layers, kTextLayers);
  at_most(reader, "num_attention_heads", out.num_attention_heads, kHeads);
  at_most(reader, "max_position_embeddings", out.max_position_embeddings, kPositions);
  at_most(reader, "projection_dim", out.projection_dim, kChannels);
  if (out.layer_norm_eps <= 0) throw reader.unsupported("layer_norm_eps", "expected a positive number");
  if (out.hidden_size % out.num_attention_heads != 0) {
    throw reader.invalid("hidden_size=" + std::to_string(out.hidden_size) +
                         " is not divisible by num_attention_heads=" + std::to_string(out.num_attention_heads));
  }

  // The projection head of CLIPTextModelWithProjection is not used for SD's last_hidden_state (its
  // text_projection.weight is ignored at load); other model classes hold other networks.
  reader.require("model_type", "clip_text_model");
  reader.require_one_of("architectures", {nlohmann::json::array({"CLIPTextModel"}),
                                          nlohmann::json::array({"CLIPTextModelWithProjection"}), nullptr});
  reader.require_one_of("pruned_heads", {nlohmann::json::object(), nullptr});
  reader.ignore_private_keys();
  // Training, tokenizer and serialisation settings: no effect on the weights or on last_hidden_state.
  reader.ignore({"attention_dropout",
                 "dropout",
                 "initializer_range",
                 "initializer_factor",
                 "bos_token_id",
                 "eos_token_id",
                 "pad_token_id",
                 "torch_dtype",
                 "dtype",
                 "transformers_version",
                 "use_cache",
                 "return_dict",
                 "output_hidden_states",
                 "output_attentions",
                 "torchscript",
                 "use_bfloat16",
                 "tie_word_embeddings",
                 "is_encoder_decoder",
                 "is_decoder",
                 "add_cross_attention",
                 "tie_encoder_decoder",
                 "chunk_size_feed_forward",
                 "problem_type",
                 "id2label",
                 "label2id",
                 "tokenizer_class",
                 "prefix",
                 "sep_token_id",
                 "decoder_start_token_id",
                 "task_specific_params",
                 "finetuning_task",
                 "max_length",
                 "min_length",
                 "do_sample",
                 "early_stopping",
                 "num_beams",
                 "num_beam_groups",
                 "diversity_penalty",
                 "temperature",
                 "top_k",
                 "top_p",
                 "typical_p",
                 "repetition_penalty",
                 "length_penalty",
                 "no_repeat_ngram_size",
                 "encoder_no_repeat_ngram_size",
                 "bad_words_ids",
                 "num_return_sequences",
                 "output_scores",
                 "return_dict_in_generate",
                 "forced_bos_token_id",
                 "forced_eos_token_id",
                 "remove_invalid_values",
                 "exponential_decay_length_penalty",
                 "suppress_tokens",
                 "begin_suppress_tokens",
                 "cross_attention_hidden_size"});
  reader.finish();
  return out;
}

ClipTextConfig clip_config_read(const std::string& path) { return clip_config_from_json(json_read_file(path), path); }

}  // namespace websd
