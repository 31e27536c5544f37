// Turns the prompt and negative prompt into the UNet's cross-attention context, as diffusers'
// StableDiffusionPipeline.encode_prompt does: each is tokenized to max_length ids (padded,
// truncated) and encoded by the text encoder; the negative prompt defaults to "". In two halves
// around the text encoder (DiffusionBackend::submit_encode_text), so that a caller may await the
// device between them. Stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/tokenizer/clip_tokenizer.h"

namespace websd {

// The text encoder's input: `batch` rows of max_tokens ids, (negative, prompt) when guided.
struct PromptIds {
  std::vector<std::int64_t> ids;
  std::int64_t batch = 1;
};

// Throws websd::Error if the tokenizer's max_length differs from the model's max_tokens.
PromptIds prompt_token_ids(const ModelInfo& info, const ClipTokenizer& tokenizer, const std::string& prompt,
                           const std::string& negative_prompt, bool guided);

// The text encoder's output for `ids`, checked: [batch, max_tokens, hidden], finite. Throws
// websd::Error otherwise.
HostTensor checked_prompt_context(HostTensor context, const PromptIds& ids, const ModelInfo& info);

}  // namespace websd
