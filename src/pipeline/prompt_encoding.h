// Turns the prompt and negative prompt into the UNet's cross-attention context, as diffusers'
// StableDiffusionPipeline.encode_prompt does: each is tokenized to max_length ids (padded,
// truncated) and encoded by the text encoder; the negative prompt defaults to "".
// Stateless functions; the backend is used from the calling thread only.
#pragma once

#include <string>

#include "core/host_tensor.h"
#include "pipeline/diffusion_backend.h"
#include "pipeline/tokenizer/clip_tokenizer.h"

namespace websd {

// [2, tokens, hidden] with rows (negative, prompt) when `guided`, else [1, tokens, hidden] for the
// prompt alone. Throws websd::Error if the tokenizer's max_length differs from the model's max_tokens
// or the backend returns a tensor of another batch or token count.
HostTensor encode_prompt_context(DiffusionBackend& backend, const ClipTokenizer& tokenizer, const std::string& prompt,
                                 const std::string& negative_prompt, bool guided);

}  // namespace websd
