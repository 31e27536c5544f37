// 2-D convolution through oneDNN's convolution primitive (brgconv on AVX-512, Winograd for large
// 3x3 ones, matmul over im2col rows for few-pixel ones), on NCHW or channels-last (NHWC)
// activations. NHWC activations are what brgconv reads natively; other layouts a kernel wants are
// reordered around each call. Weights may be packed once, ahead of time, into the layout the
// primitive wants (conv_weight_layout / conv_pack_weight), or given as plain OIHW and reordered per
// call. Primitives are cached per geometry behind a mutex, so all functions are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host_tensor.h"

namespace websd::cpu {

enum class ConvLayout { kNchw, kNhwc };

struct ConvGeometry {
  Shape x;  // [N,C,H,W] or [N,H,W,C] per layout
  Shape w;  // [O,C,kh,kw] (groups = 1)
  Shape y;  // [N,O,OH,OW] or [N,OH,OW,O]
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  bool bias = true;
  bool accumulate = false;  // y += conv(x) + bias instead of y = ...
  ConvLayout layout = ConvLayout::kNchw;
  // Activations and weights enter the primitive as bf16 (accumulation, bias and output stay f32):
  // the CPU needs native bf16 (AVX512-BF16 or AMX), see onednn_bf16_available() (bf16_support.h).
  bool bf16 = false;
  // Where a convolution would run as Winograd (oneDNN's, or websd's F(2x2, 3x3): see
  // onednn_conv.cpp), false runs it direct: for benchmarks and tests that compare the two.
  bool allow_winograd = true;
  // The packed weight is held as f16 (its layout's element order, half the memory of f32) and
  // widened to f32 for each call; the convolution computes in f32. Ignored where `bf16` is set.
  bool f16_weights = false;
};

// Whether a packed weight of `layout` (conv_weight_layout's name) is read as bf16 by its kernel.
// conv_pack_weight still gives its values as f32, in the layout's element order: narrowing each
// to bf16 gives the bytes the kernel reads.
bool conv_layout_reads_bf16(const std::string& layout);
// Whether a packed weight of `layout` is held as f16 (ConvGeometry::f16_weights): as for bf16,
// conv_pack_weight gives f32 values in the layout's order, and narrowing each to f16 gives the bytes.
bool conv_layout_holds_f16(const std::string& layout);

// Names the weight layout the primitive for `geometry` wants; empty when that is plain OIHW.
std::string conv_weight_layout(const ConvGeometry& geometry);
// The OIHW weight `oihw` in conv_weight_layout(geometry), padded as the primitive needs (as f32
// values even where the primitive reads bf16: see conv_layout_reads_bf16).
std::vector<float> conv_pack_weight(const ConvGeometry& geometry, const float* oihw);

// What decides conv_pack_weight's bytes besides the geometry and the layout name: the oneDNN
// version and the instruction set its kernels were generated for ("oneDNN 2.6.3 avx2"). A cache of
// packed weights keys them by it.
std::string conv_packing_identity();

// Bytes a kernel reads of a packed weight: conv_pack_weight's result in the type it is held in.
std::uint64_t conv_packed_weight_bytes(const ConvGeometry& geometry);

// Drops every cached primitive (and the scratch memory oneDNN holds for it) and the calling
// thread's reorder and im2col buffers; later calls rebuild what they need. For a backend that
// switches to another network: the previous network's convolutions would otherwise stay resident
// (1.7 GiB after a 512x512 VAE decode). Must not run concurrently with a convolution.
void conv_release_caches();

// Bytes outside the arena that running every convolution of `geometries` in turn on one thread
// holds at its peak: input and output copies in the layout the primitive wants, im2col rows and
// oneDNN's scratchpad (a 2048x2048 VAE decode's reorders alone are ~4 GiB). For the memory check that
// runs before a network allocates anything.
std::uint64_t conv_workspace_bytes(const std::vector<ConvGeometry>& geometries);

// `w` is in conv_weight_layout(geometry) when `w_packed` (bf16 values where the layout reads bf16),
// else plain OIHW f32; bias [O] or nullptr.
void onednn_conv2d(const ConvGeometry& geometry, const float* x, const float* w, bool w_packed, const float* bias,
                   float* y);

}  // namespace websd::cpu
