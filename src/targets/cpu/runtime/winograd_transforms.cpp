#include "targets/cpu/runtime/winograd_transforms.h"

#include <algorithm>
#include <array>

#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

// Channels per step of the input and output transforms: their 16 rows stay in registers and L1.
constexpr std::int64_t kBlock = 64;

// A block of input outside the image (the padding), or of bias where there is none.
constexpr std::array<float, kBlock> kZeros{};

struct TilePosition {
  std::int64_t n, y, x;  // image, and the tile's top-left output pixel
};

TilePosition position_of(const WinogradTiling& tiling, std::int64_t tile) {
  const std::int64_t per_image = tiling.tiles_y() * tiling.tiles_x();
  const std::int64_t in_image = tile % per_image;
  return {tile / per_image, 2 * (in_image / tiling.tiles_x()), 2 * (in_image % tiling.tiles_x())};
}

// One transformed row into V: as it is (f32), or narrowed to bf16 bits.
void store_row(const float* row, std::int64_t width, float* v) { std::copy_n(row, width, v); }
void store_row(const float* row, std::int64_t width, std::uint16_t* v) { narrow_to_bf16(row, v, width); }

template <typename Value>
void transform_tile_input(const WinogradTiling& tiling, const float* x, const TilePosition& at, std::int64_t t,
                          std::int64_t chunk, Value* v) {
  const std::int64_t channels = tiling.channels;
  // The 4x4 window starts one pixel above and left of the tile (the padding).
  std::array<const float*, 16> pixel{};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const std::int64_t iy = at.y - 1 + i, ix = at.x - 1 + j;
      const bool inside = iy >= 0 && iy < tiling.height && ix >= 0 && ix < tiling.width;
      pixel[i * 4 + j] = inside ? x + ((at.n * tiling.height + iy) * tiling.width + ix) * channels : nullptr;
    }
  }
  float out[16][kBlock];
  for (std::int64_t c0 = 0; c0 < channels; c0 += kBlock) {
    const std::int64_t width = std::min(kBlock, channels - c0);
    std::array<const float*, 16> d;
    for (int p = 0; p < 16; ++p) d[p] = pixel[p] != nullptr ? pixel[p] + c0 : kZeros.data();
#pragma omp simd
    for (std::int64_t c = 0; c < width; ++c) {
      // B^T d: rows combine as (d0 - d2, d1 + d2, d2 - d1, d1 - d3), per column.
      float r[4][4];
      for (int j = 0; j < 4; ++j) {
        const float d0 = d[j][c], d1 = d[4 + j][c], d2 = d[8 + j][c], d3 = d[12 + j][c];
        r[0][j] = d0 - d2;
        r[1][j] = d1 + d2;
        r[2][j] = d2 - d1;
        r[3][j] = d1 - d3;
      }
      // (B^T d) B: the same combination of columns, per row.
      for (int i = 0; i < 4; ++i) {
        out[i * 4 + 0][c] = r[i][0] - r[i][2];
        out[i * 4 + 1][c] = r[i][1] + r[i][2];
        out[i * 4 + 2][c] = r[i][2] - r[i][1];
        out[i * 4 + 3][c] = r[i][1] - r[i][3];
      }
    }
    for (int p = 0; p < 16; ++p) store_row(out[p], width, v + (p * chunk + t) * channels + c0);
  }
}

void transform_tile_output(const WinogradTiling& tiling, const float* m, const TilePosition& at, std::int64_t t,
                           std::int64_t chunk, const float* bias, bool accumulate, float* y) {
  const std::int64_t out_channels = tiling.out_channels;
  std::array<float*, 4> pixel{};  // null where the tile leaves the image
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) {
      const std::int64_t oy = at.y + a, ox = at.x + b;
      const bool inside = oy < tiling.height && ox < tiling.width;
      pixel[a * 2 + b] = inside ? y + ((at.n * tiling.height + oy) * tiling.width + ox) * out_channels : nullptr;
    }
  }
  float discard[kBlock] = {};  // takes (and with `accumulate` feeds) the pixels outside the image
  for (std::int64_t o0 = 0; o0 < out_channels; o0 += kBlock) {
    const std::int64_t width = std::min(kBlock, out_channels - o0);
    std::array<const float*, 16> row;
    for (int p = 0; p < 16; ++p) row[p] = m + (p * chunk + t) * out_channels + o0;
    std::array<float*, 4> dst;
    for (int q = 0; q < 4; ++q) dst[q] = pixel[q] != nullptr ? pixel[q] + o0 : discard;
    const float* b = bias != nullptr ? bias + o0 : kZeros.data();
#pragma omp simd
    for (std::int64_t o = 0; o < width; ++o) {
      // A^T M: rows combine as (m0 + m1 + m2, m1 - m2 - m3), per column.
      float s[2][4];
      for (int j = 0; j < 4; ++j) {
        const float m0 = row[j][o], m1 = row[4 + j][o], m2 = row[8 + j][o], m3 = row[12 + j][o];
        s[0][j] = m0 + m1 + m2;
        s[1][j] = m1 - m2 - m3;
      }
      for (int a = 0; a < 2; ++a) {
        const float left = s[a][0] + s[a][1] + s[a][2] + b[o];
        const float right = s[a][1] - s[a][2] - s[a][3] + b[o];
        dst[a * 2][o] = accumulate ? dst[a * 2][o] + left : left;
        dst[a * 2 + 1][o] = accumulate ? dst[a * 2 + 1][o] + right : right;
      }
    }
  }
}

template <typename Value>
void transform_input(const WinogradTiling& tiling, const float* x, std::int64_t first, std::int64_t chunk, Value* v) {
  const std::int64_t channels = tiling.channels;
  parallel_for(chunk, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      if (first + t < tiling.tiles()) {
        transform_tile_input(tiling, x, position_of(tiling, first + t), t, chunk, v);
      } else {
        for (int p = 0; p < 16; ++p) std::fill_n(v + (p * chunk + t) * channels, channels, Value{0});
      }
    }
  });
}

}  // namespace

void winograd_transform_weight(std::int64_t out_channels, std::int64_t channels, const float* oihw, float* u) {
  const std::int64_t pairs = out_channels * channels;
  parallel_for(out_channels, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t o = begin; o < end; ++o) {
      for (std::int64_t c = 0; c < channels; ++c) {
        const float* g = oihw + (o * channels + c) * 9;
        // G g: rows (g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2), per column.
        float gg[4][3];
        for (int k = 0; k < 3; ++k) {
          gg[0][k] = g[k];
          gg[1][k] = 0.5f * (g[k] + g[3 + k] + g[6 + k]);
          gg[2][k] = 0.5f * (g[k] - g[3 + k] + g[6 + k]);
          gg[3][k] = g[6 + k];
        }
        // (G g) G^T: the same combination of columns, per row.
        for (int i = 0; i < 4; ++i) {
          const float values[4] = {gg[i][0], 0.5f * (gg[i][0] + gg[i][1] + gg[i][2]),
                                   0.5f * (gg[i][0] - gg[i][1] + gg[i][2]), gg[i][2]};
          for (int j = 0; j < 4; ++j) u[(i * 4 + j) * pairs + c * out_channels + o] = values[j];
        }
      }
    }
  });
}

void winograd_transform_input(const WinogradTiling& tiling, const float* x, std::int64_t first, std::int64_t chunk,
                              std::uint16_t* v) {
  transform_input(tiling, x, first, chunk, v);
}

void winograd_transform_input(const WinogradTiling& tiling, const float* x, std::int64_t first, std::int64_t chunk,
                              float* v) {
  transform_input(tiling, x, first, chunk, v);
}

void winograd_transform_output(const WinogradTiling& tiling, const float* m, std::int64_t first, std::int64_t chunk,
                               const float* bias, bool accumulate, float* y) {
  const std::int64_t count = std::min(chunk, tiling.tiles() - first);
  parallel_for(count, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      transform_tile_output(tiling, m, position_of(tiling, first + t), t, chunk, bias, accumulate, y);
    }
  });
}

}  // namespace websd::cpu
