#include "pipeline/prompt_encoding.h"

#include <vector>

#include "core/error.h"
#include "pipeline/finite_check.h"

namespace websd {

HostTensor encode_prompt_context(DiffusionBackend& backend, const ClipTokenizer& tokenizer, const std::string& prompt,
                                 const std::string& negative_prompt, bool guided) {
  const ModelInfo& info = backend.info();
  if (tokenizer.max_length() != info.max_tokens) {
    throw Error("pipeline", "the tokenizer pads to " + std::to_string(tokenizer.max_length()) +
                                " tokens but the text encoder of '" + info.name + "' takes " +
                                std::to_string(info.max_tokens) +
                                " (the tokenizer folder does not belong to this model)");
  }
  std::vector<std::string> texts;
  if (guided) texts.push_back(negative_prompt);
  texts.push_back(prompt);
  std::vector<std::int64_t> ids;
  for (const std::string& text : texts) {
    for (const TokenId id : tokenizer.encode(text)) ids.push_back(id);
  }
  const auto batch = static_cast<std::int64_t>(texts.size());
  HostTensor context = backend.encode_text(ids, batch);
  require_finite(context, "the text encoder's output", kCheckWeightsHint);
  if (context.shape.size() != 3 || context.shape[0] != batch || context.shape[1] != info.max_tokens) {
    throw Error("pipeline", "text encoder returned shape " + shape_to_string(context.shape) + ", expected [" +
                                std::to_string(batch) + "," + std::to_string(info.max_tokens) + ",hidden]");
  }
  return context;
}

}  // namespace websd
