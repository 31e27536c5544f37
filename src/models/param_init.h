// Deterministic random initial values for one network parameter, in the spirit of PyTorch's defaults so
// that activations stay finite through a whole network: Linear/Conv weights and biases uniform in
// +-1/sqrt(fan_in) (what kaiming_uniform(a=sqrt(5)) gives), norm scales 1 and shifts 0, embeddings
// normal(0, 0.02). Each tensor draws from its own std::mt19937_64 stream seeded from (seed, component,
// name), so values do not depend on the order tensors are generated in. Not torch-reproducible by
// design. Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "models/model_params.h"

namespace websd {

// Writes numel(param) little-endian float16 values into `out` (exactly numel x 2 bytes).
// Throws websd::Error if `out` has the wrong size.
void param_init_f16(const ModelParam& param, std::uint64_t seed, const std::string& component,
                    std::span<std::byte> out);

}  // namespace websd
