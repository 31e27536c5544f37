// Kernels of the channels-last (NHWC) image ops: convolution with an optional fused residual,
// group norm with an optional fused SiLU, nearest upsampling.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_conv.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

void conv2d_nhwc_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  std::vector<const TensorType*> types;
  for (const CpuTensor* tensor : in) types.push_back(&tensor->type);
  const ConvGeometry run = conv2d_nhwc_geometry(types, attrs, out.type);
  const bool packed = !in[1]->layout.empty();
  if (packed && in[1]->layout != conv_weight_layout(run)) {
    throw Error("cpu", "conv2d_nhwc: weight packed as " + in[1]->layout + " but this convolution wants " +
                           conv_weight_layout(run) + " (a websd bug, please report it)");
  }
  if (run.accumulate) std::memcpy(out.fdata(), in[3]->fdata(), static_cast<std::size_t>(out.numel()) * sizeof(float));
  onednn_conv2d(run, in[0]->fdata(), in[1]->fdata(), packed, in[2]->fdata(), out.fdata());
}

// Per-channel sums and sums of squares of x [pixels, C] in double, split over the threads.
void channel_moments(const float* x, std::int64_t pixels, std::int64_t channels, std::vector<double>& sum,
                     std::vector<double>& squares) {
  const std::int64_t chunks = std::min<std::int64_t>(2 * omp_get_max_threads(), std::max<std::int64_t>(1, pixels / 64));
  std::vector<double> partial(static_cast<std::size_t>(2 * chunks * channels), 0.0);
  parallel_for(chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t chunk = begin; chunk < end; ++chunk) {
      double* s = partial.data() + 2 * chunk * channels;
      double* q = s + channels;
      for (std::int64_t p = pixels * chunk / chunks; p < pixels * (chunk + 1) / chunks; ++p) {
        const float* row = x + p * channels;
        for (std::int64_t c = 0; c < channels; ++c) {
          const double v = row[c];
          s[c] += v;
          q[c] += v * v;
        }
      }
    }
  });
  sum.assign(static_cast<std::size_t>(channels), 0.0);
  squares.assign(static_cast<std::size_t>(channels), 0.0);
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    for (std::int64_t c = 0; c < channels; ++c) {
      sum[c] += partial[2 * chunk * channels + c];
      squares[c] += partial[(2 * chunk + 1) * channels + c];
    }
  }
}

void group_norm_nhwc_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const double eps = attrs.get_float("eps", "group_norm_nhwc");
  const std::int64_t groups = attrs.get_int("groups", "group_norm_nhwc");
  const bool silu = attrs.has("activation");  // inference allows only "silu"
  const Shape& shape = in[0]->type.shape;
  const std::int64_t pixels = shape[1] * shape[2], channels = shape[3], per_group = channels / groups;
  const float* gamma = in[1]->fdata();
  const float* beta = in[2]->fdata();
  std::vector<double> sum, squares;
  std::vector<float> scale(static_cast<std::size_t>(channels)), shift(static_cast<std::size_t>(channels));
  for (std::int64_t n = 0; n < shape[0]; ++n) {
    const float* x = in[0]->fdata() + n * pixels * channels;
    float* y = out.fdata() + n * pixels * channels;
    channel_moments(x, pixels, channels, sum, squares);
    const double count = static_cast<double>(pixels * per_group);
    for (std::int64_t g = 0; g < groups; ++g) {
      double s = 0, q = 0;
      for (std::int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        s += sum[c];
        q += squares[c];
      }
      const double mean = s / count;
      const double inv_std = 1.0 / std::sqrt(std::max(q / count - mean * mean, 0.0) + eps);
      for (std::int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        scale[c] = static_cast<float>(inv_std * gamma[c]);
        shift[c] = static_cast<float>(beta[c] - mean * inv_std * gamma[c]);
      }
    }
    parallel_for(pixels, std::max<std::int64_t>(1, 16384 / channels), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t p = begin; p < end; ++p) {
        const float* row = x + p * channels;
        float* dst = y + p * channels;
        for (std::int64_t c = 0; c < channels; ++c) dst[c] = row[c] * scale[c] + shift[c];
        if (silu) silu_map(dst, dst, channels);
      }
    });
  }
}

void upsample_nearest_nhwc_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const std::int64_t scale = attrs.get_int("scale", "upsample_nearest_nhwc");
  const Shape& x = in[0]->type.shape;
  const std::int64_t channels = x[3], out_h = x[1] * scale, out_w = x[2] * scale;
  const std::size_t pixel_bytes = static_cast<std::size_t>(channels) * sizeof(float);
  // One output row per source row, built once, then copied to the other scale - 1 rows.
  parallel_for(x[0] * x[1], 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      const std::int64_t n = row / x[1], iy = row % x[1];
      const float* source = in[0]->fdata() + row * x[2] * channels;
      float* first = out.fdata() + ((n * out_h + iy * scale) * out_w) * channels;
      for (std::int64_t ox = 0; ox < out_w; ++ox)
        std::memcpy(first + ox * channels, source + (ox / scale) * channels, pixel_bytes);
      for (std::int64_t k = 1; k < scale; ++k) std::memcpy(first + k * out_w * channels, first, out_w * pixel_bytes);
    }
  });
}

}  // namespace

ConvGeometry conv2d_nhwc_geometry(const std::vector<const TensorType*>& inputs, const Attrs& attrs,
                                  const TensorType& output) {
  return ConvGeometry{inputs[0]->shape,
                      inputs[1]->shape,
                      output.shape,
                      attrs.get_int("stride", 1, "conv2d_nhwc"),
                      attrs.get_int("padding", 0, "conv2d_nhwc"),
                      true,
                      inputs.size() == 4,  // the residual is accumulated into
                      ConvLayout::kNhwc,
                      computes_in_bf16(attrs, "conv2d_nhwc"),
                      true,
                      holds_weights_in_f16(attrs, "conv2d_nhwc")};
}

void add_channels_last_kernels(CpuKernelTable& table) {
  table.emplace_back("conv2d_nhwc", conv2d_nhwc_kernel);
  table.emplace_back("group_norm_nhwc", group_norm_nhwc_kernel);
  table.emplace_back("upsample_nearest_nhwc", upsample_nearest_nhwc_kernel);
}

}  // namespace websd::cpu
