// The transforms of Winograd's minimal filtering F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2015) for 3x3 convolutions with stride 1 and padding 1 on NHWC
// activations. Each 2x2 block of output pixels (a tile) is A^T [(G g G^T) . (B^T d B)] A for its 4x4
// input window d: the 3x3 x C x O products per output pixel become 16 x C x O per four pixels
// (2.25x fewer), computed as 16 independent matrix products [tiles x C] x [C x O], one per point of
// the 4x4 transform. These functions are the parts around those products; onednn_conv.cpp runs the
// products through oneDNN's batched matmul, in bf16 or (where oneDNN has no Winograd kernel of its
// own: without AVX-512) in f32. Thread-safe; the input and output transforms use the
// machine's threads.
#pragma once

#include <cstdint>

namespace websd::cpu {

inline constexpr std::int64_t kWinogradPoints = 16;  // points of the 4x4 transform

// The tiles of one convolution: output pixels equal input pixels (stride 1, padding 1); an odd
// height or width gives a last row or column of tiles half outside the image.
struct WinogradTiling {
  std::int64_t batch, height, width, channels, out_channels;
  std::int64_t tiles_y() const { return (height + 1) / 2; }
  std::int64_t tiles_x() const { return (width + 1) / 2; }
  std::int64_t tiles() const { return batch * tiles_y() * tiles_x(); }
};

// U[point][c][o] = (G g G^T)[point] for the OIHW weight g [out_channels][channels][3][3] (f32).
void winograd_transform_weight(std::int64_t out_channels, std::int64_t channels, const float* oihw, float* u);

// V[point][t][c] (`chunk` rows per point) = (B^T d B)[point] for the tiles first + t, t < chunk,
// of the NHWC input x, as bf16 bits or f32; rows of tiles past the last one are zeros.
void winograd_transform_input(const WinogradTiling& tiling, const float* x, std::int64_t first, std::int64_t chunk,
                              std::uint16_t* v);
void winograd_transform_input(const WinogradTiling& tiling, const float* x, std::int64_t first, std::int64_t chunk,
                              float* v);

// For the tiles first + t, t < chunk, that exist: their output pixels of the NHWC output y from
// the products M[point][t][o] (`chunk` rows per point): A^T M A, plus bias[o] when bias is not null,
// plus what y holds when `accumulate`.
void winograd_transform_output(const WinogradTiling& tiling, const float* m, std::int64_t first, std::int64_t chunk,
                               const float* bias, bool accumulate, float* y);

}  // namespace websd::cpu
