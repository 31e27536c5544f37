#include "pipeline/prompt_encoding.h"

#include "core/error.h"
#include "pipeline/finite_check.h"

namespace websd {

PromptIds prompt_token_ids(const ModelInfo& info, const ClipTokenizer& tokenizer, const std::string& prompt,
                           const std::string& negative_prompt, bool guided) {
  if (tokenizer.max_length() != info.max_tokens) {
    throw Error("pipeline", "the tokenizer pads to " + std::to_string(tokenizer.max_length()) +
                                " tokens but the text encoder of '" + info.name + "' takes " +
                                std::to_string(info.max_tokens) +
                                " (the tokenizer folder does not belong to this model)");
  }
  std::vector<std::string> texts;
  if (guided) texts.push_back(negative_prompt);
  texts.push_back(prompt);
  PromptIds result;
  for (const std::string& text : texts) {
    for (const TokenId id : tokenizer.encode(text)) result.ids.push_back(id);
  }
  result.batch = static_cast<std::int64_t>(texts.size());
  return result;
}

HostTensor checked_prompt_context(HostTensor context, const PromptIds& ids, const ModelInfo& info) {
  require_finite(context, "the text encoder's output", kCheckWeightsHint);
  if (context.shape.size() != 3 || context.shape[0] != ids.batch || context.shape[1] != info.max_tokens) {
    throw Error("pipeline", "text encoder returned shape " + shape_to_string(context.shape) + ", expected [" +
                                std::to_string(ids.batch) + "," + std::to_string(info.max_tokens) + ",hidden]");
  }
  return context;
}

}  // namespace websd
