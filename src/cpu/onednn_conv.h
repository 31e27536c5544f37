// 2-D convolution through oneDNN's convolution primitive (brgconv on AVX-512). Activations stay
// in websd's plain NCHW layout; oneDNN's preferred blocked layouts are reached by reorders around
// each call. Primitives are cached per shape; the cache is mutex-guarded, so calls are thread-safe.
#pragma once

#include <cstdint>

#include "core/host_tensor.h"

namespace websd::cpu {

// x [N,C,H,W], w [O,C,kh,kw], bias [O] or nullptr, y [N,O,OH,OW]; groups = 1.
void onednn_conv2d(const float* x, const Shape& x_shape, const float* w, const Shape& w_shape, const float* bias,
                   float* y, const Shape& y_shape, std::int64_t stride, std::int64_t padding);

}  // namespace websd::cpu
