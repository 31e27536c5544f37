// Linear layers (x @ W^T + b) whose operands enter the product as bf16, accumulating in f32:
// oneDNN's matmul primitive (brgemm with AVX512-BF16 or AMX). The f32 linear layers stay on
// oneDNN's sgemm (gemm.h). The weight is read where it lies, in torch's [out, in] order, either
// held as bf16 (kLinearBf16Layout) or as f32 narrowed on every call (a weight given as a graph
// input); the activations are narrowed into a buffer of the calling thread. Primitives are cached
// per shape behind a mutex, so all functions are thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace websd::cpu {

// The layout name of a linear weight held for a bf16 linear layer: row-major [out, in] as torch
// stores it, each value narrowed to bf16 (round to nearest even).
inline constexpr std::string_view kLinearBf16Layout = "bf16-row-major";
// The layout name of a linear weight held in f16 for an f32 linear layer (holds_weights_in_f16):
// row-major [out, in], each value narrowed to f16 (round to nearest even), widened for each call.
inline constexpr std::string_view kLinearF16Layout = "f16-row-major";

// y[m,n] = x[m,k] * w[n,k]^T (+ bias[n]); x, bias and y are f32, w is bf16 bits when `w_bf16` and
// f32 otherwise. Needs a CPU with native bf16 (bf16_support.h); throws websd::Error elsewhere.
void onednn_linear_bf16(std::int64_t m, std::int64_t n, std::int64_t k, const float* x, const void* w, bool w_bf16,
                        const float* bias, float* y);

// Bytes outside the arena a bf16 linear layer of these sizes holds while it runs: the narrowed
// activations and oneDNN's scratchpad (for the memory check before a network runs).
std::uint64_t linear_bf16_workspace_bytes(std::int64_t m, std::int64_t n, std::int64_t k, bool bias);

// Drops the cached primitives and the calling thread's buffers (see conv_release_caches).
void linear_release_caches();

}  // namespace websd::cpu
