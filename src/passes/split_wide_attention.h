// Pass: attention whose head is too wide for a target's fused kernel (the webgpu target's flash
// attention keeps a query row and a key tile in 16 KiB of workgroup memory: SD's VAE attends with
// one head of 512) becomes explicit matmuls: scores = q @ k^T (matmul, transpose_b), scaled,
// softmax over the keys, then out = p @ (v^T)^T (permute v to [B, H, D, S], matmul with
// transpose_b). The scores are materialized ([B, H, Sq, Skv]: 64 MiB for the VAE at 512x512), so
// only the heads the kernel cannot take are split. Causal attention is left alone. Pure.
#pragma once

#include <functional>

#include "graph/function.h"

namespace websd::passes {

// `fits(head_dim, value_head_dim)`: whether the target's attention kernel takes those widths.
graph::Function split_wide_attention(const graph::Function& function,
                                     const std::function<bool(std::int64_t, std::int64_t)>& fits);

}  // namespace websd::passes
