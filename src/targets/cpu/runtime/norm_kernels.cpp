// Reductions and normalisations: mean, softmax, layer_norm, group_norm. Statistics accumulate in
// double so long rows (group norm over 64x64 pixels) keep float32 accuracy.
#include <cmath>

#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

// Softmax over row[0, width) in place.
void softmax_in_place(float* row, std::int64_t width) {
  const float sum = exp_shifted_sum(row, row, width, max_of(row, width));
  scale_in_place(row, width, 1.0f / sum);
}

// Normalises `count` values at x with mean/variance of those values; writes x_hat to y. The sums
// are vectorised (`omp simd` lets them be split into lanes): one chain of dependent double adds
// cost the UNet's layer norms 4 cycles a value.
void normalize_span(const float* x, float* y, std::int64_t count, double eps) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t i = 0; i < count; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(count);
  double squares = 0.0;
#pragma omp simd reduction(+ : squares)
  for (std::int64_t i = 0; i < count; ++i) {
    const double d = x[i] - mean;
    squares += d * d;
  }
  const auto inv_std = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(count) + eps));
  const auto mean_f = static_cast<float>(mean);
  for (std::int64_t i = 0; i < count; ++i) y[i] = (x[i] - mean_f) * inv_std;
}

void layer_norm_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const double eps = attrs.get_float("eps", "layer_norm");
  const std::int64_t width = in[0]->type.shape.back();
  const std::int64_t rows = in[0]->numel() / width;
  const float* gamma = in[1]->fdata();
  const float* beta = in[2]->fdata();
  parallel_for(rows, 16, [&](std::int64_t s, std::int64_t e) {
    for (std::int64_t row = s; row < e; ++row) {
      float* y = out.fdata() + row * width;
      normalize_span(in[0]->fdata() + row * width, y, width, eps);
      for (std::int64_t i = 0; i < width; ++i) y[i] = y[i] * gamma[i] + beta[i];
    }
  });
}

void group_norm_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const double eps = attrs.get_float("eps", "group_norm");
  const std::int64_t groups = attrs.get_int("groups", "group_norm");
  const Shape& shape = in[0]->type.shape;
  const std::int64_t channels = shape[1], pixels = shape[2] * shape[3];
  const std::int64_t per_group = channels / groups;
  const float* gamma = in[1]->fdata();
  const float* beta = in[2]->fdata();
  parallel_for(shape[0] * groups, 1, [&](std::int64_t s, std::int64_t e) {
    for (std::int64_t ng = s; ng < e; ++ng) {
      const std::int64_t offset = ng * per_group * pixels;
      float* y = out.fdata() + offset;
      normalize_span(in[0]->fdata() + offset, y, per_group * pixels, eps);
      for (std::int64_t c = 0; c < per_group; ++c) {
        const std::int64_t channel = (ng % groups) * per_group + c;
        float* plane = y + c * pixels;
        for (std::int64_t i = 0; i < pixels; ++i) plane[i] = plane[i] * gamma[channel] + beta[channel];
      }
    }
  });
}

// Generic mean over any axes: view the input as [outer..] x [reduced..] by index arithmetic.
void mean_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const Shape& shape = in[0]->type.shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (auto axis : attrs.get_ints("axes", "mean")) reduced[axis < 0 ? axis + rank : axis] = true;
  std::vector<double> sums(static_cast<std::size_t>(out.numel()), 0.0);
  std::int64_t reduced_count = 1;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) reduced_count *= shape[d];
  }
  const float* x = in[0]->fdata();
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t i = 0; i < in[0]->numel(); ++i) {
    std::int64_t out_offset = 0;
    for (std::int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) out_offset = out_offset * shape[d] + index[d];
    }
    sums[out_offset] += x[i];
    for (std::int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  float* y = out.fdata();
  for (std::size_t i = 0; i < sums.size(); ++i) y[i] = static_cast<float>(sums[i] / reduced_count);
}

void softmax_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const Shape& shape = in[0]->type.shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::int64_t axis = attrs.get_int("axis", -1, "softmax");
  if (axis < 0) axis += rank;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (std::int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  const std::int64_t width = shape[axis];
  parallel_for(outer * inner, 16, [&](std::int64_t s, std::int64_t e) {
    std::vector<float> row(width);
    for (std::int64_t r = s; r < e; ++r) {
      const std::int64_t base = (r / inner) * width * inner + r % inner;
      for (std::int64_t i = 0; i < width; ++i) row[i] = in[0]->fdata()[base + i * inner];
      softmax_in_place(row.data(), width);
      for (std::int64_t i = 0; i < width; ++i) out.fdata()[base + i * inner] = row[i];
    }
  });
}

}  // namespace

void add_norm_kernels(CpuKernelTable& table) {
  table.emplace_back("layer_norm", layer_norm_kernel);
  table.emplace_back("group_norm", group_norm_kernel);
  table.emplace_back("mean", mean_kernel);
  table.emplace_back("softmax", softmax_kernel);
}

}  // namespace websd::cpu
