// NaN and infinity guard on what the networks return and on given latents: a checkpoint with
// non-finite weights (an fp32 model cast to fp16 with overflow, a corrupt file) or NaN init latents
// would otherwise produce an all-black image with exit status 0. Pure; thread-safe.
#pragma once

#include <string>

#include "core/host_tensor.h"

namespace websd {

// Throws websd::Error("pipeline", ...) when `tensor` holds a NaN or an infinity: `what` names the
// network and step ("the UNet's prediction at step 3 of 20"), `hint` how to find the cause.
void require_finite(const HostTensor& tensor, const std::string& what, const std::string& hint);

// The hint for a network's output: its weights are the usual cause.
inline constexpr const char* kCheckWeightsHint =
    "non-finite weights? `websd import --model M --verify` reads every weight and names the bad tensors";

}  // namespace websd
