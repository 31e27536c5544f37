// Matrix multiplication, linear layers and convolution on the CPU through oneDNN's GEMM.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/gemm.h"
#include "targets/cpu/runtime/onednn_conv.h"
#include "targets/cpu/runtime/onednn_linear.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

// Row-major C[M,N] = A[M,K] * op(B) (+ C when accumulate). op(B) is B[K,N] or B[N,K]^T.
void gemm_dense(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k,
                bool transpose_b, bool accumulate = false) {
  gemm(transpose_b, m, n, k, 1.0f, a, k, b, transpose_b ? k : n, accumulate ? 1.0f : 0.0f, c, n);
}

// Offset (in matrices) of batch index `batch` of an operand whose batch shape broadcasts to `out_batch`.
std::int64_t batch_offset(std::int64_t batch, const Shape& out_batch, const Shape& operand_batch) {
  std::int64_t offset = 0, stride = 1;
  for (std::size_t i = 0; i < out_batch.size(); ++i) {
    const std::size_t d = out_batch.size() - 1 - i;
    const std::int64_t index = batch % out_batch[d];
    batch /= out_batch[d];
    if (i < operand_batch.size()) {
      const std::int64_t extent = operand_batch[operand_batch.size() - 1 - i];
      if (extent != 1) offset += index * stride;
      stride *= extent;
    }
  }
  return offset;
}

void matmul_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const bool transpose_b = attrs.get_int("transpose_b", 0, "matmul") != 0;
  const Shape& a = in[0]->type.shape;
  const Shape& b = in[1]->type.shape;
  const Shape& c = out.type.shape;
  const std::int64_t m = a[a.size() - 2], k = a.back(), n = c.back();
  const Shape out_batch(c.begin(), c.end() - 2), a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const std::int64_t batches = shape_numel(out_batch);
  // A single shared B: fold the batch into M for one large GEMM.
  if (shape_numel(b_batch) == 1 && shape_numel(a_batch) == batches) {
    gemm_dense(in[0]->fdata(), in[1]->fdata(), out.fdata(), batches * m, n, k, transpose_b);
    return;
  }
  for (std::int64_t batch = 0; batch < batches; ++batch) {
    const float* pa = in[0]->fdata() + batch_offset(batch, out_batch, a_batch) * m * k;
    const float* pb = in[1]->fdata() + batch_offset(batch, out_batch, b_batch) * k * n;
    gemm_dense(pa, pb, out.fdata() + batch * m * n, m, n, k, transpose_b);
  }
}

void linear_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const std::int64_t n = in[1]->type.shape[0], k = in[1]->type.shape[1];
  const std::int64_t m = in[0]->numel() / k;
  float* y = out.fdata();
  const bool weight_bf16 = in[1]->layout == kLinearBf16Layout;
  const bool weight_f16 = in[1]->layout == kLinearF16Layout;
  if (!weight_bf16 && !weight_f16 && !in[1]->layout.empty()) {
    throw Error("cpu", "linear: weight held in layout '" + in[1]->layout +
                           "', which no linear layer reads (a websd bug, please report it)");
  }
  if (computes_in_bf16(attrs, "linear")) {
    onednn_linear_bf16(m, n, k, in[0]->fdata(), in[1]->fdata(), weight_bf16, in.size() == 3 ? in[2]->fdata() : nullptr,
                       y);
    return;
  }
  if (weight_bf16)
    throw Error("cpu", "linear: a bf16 weight read by an f32 linear layer (a websd bug, please report it)");
  const float* w = in[1]->fdata();
  if (weight_f16) {
    // Widened into the thread's buffer, which later calls reuse (the largest SD 1.5 weight: 52 MB).
    thread_local std::vector<float> widened;
    widened.resize(std::max(widened.size(), static_cast<std::size_t>(n * k)));
    // Every thread widens a part into the calling thread's buffer (each thread has its own).
    widen_f16_on_threads(reinterpret_cast<const std::uint16_t*>(in[1]->fdata()), widened.data(), n * k);
    w = widened.data();
  }
  if (in.size() == 3) {
    const float* bias = in[2]->fdata();
    for (std::int64_t row = 0; row < m; ++row) std::memcpy(y + row * n, bias, n * sizeof(float));
  }
  gemm_dense(in[0]->fdata(), w, y, m, n, k, true, in.size() == 3);
}

// Unfolds one image [C,H,W] into columns [C*kh*kw, OH*OW] for a convolution as a GEMM.
void im2col(const float* image, std::int64_t channels, std::int64_t height, std::int64_t width, std::int64_t kernel_h,
            std::int64_t kernel_w, std::int64_t stride, std::int64_t pad, std::int64_t out_h, std::int64_t out_w,
            float* columns) {
  parallel_for(channels, 1, [&](std::int64_t c_begin, std::int64_t c_end) {
    for (std::int64_t c = c_begin; c < c_end; ++c) {
      for (std::int64_t ky = 0; ky < kernel_h; ++ky) {
        for (std::int64_t kx = 0; kx < kernel_w; ++kx) {
          float* row = columns + ((c * kernel_h + ky) * kernel_w + kx) * out_h * out_w;
          for (std::int64_t oy = 0; oy < out_h; ++oy) {
            const std::int64_t iy = oy * stride - pad + ky;
            float* dst = row + oy * out_w;
            if (iy < 0 || iy >= height) {
              std::memset(dst, 0, out_w * sizeof(float));
              continue;
            }
            const float* src = image + (c * height + iy) * width;
            for (std::int64_t ox = 0; ox < out_w; ++ox) {
              const std::int64_t ix = ox * stride - pad + kx;
              dst[ox] = ix >= 0 && ix < width ? src[ix] : 0.0f;
            }
          }
        }
      }
    }
  });
}

void conv2d_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const std::int64_t stride = attrs.get_int("stride", 1, "conv2d");
  const std::int64_t pad = attrs.get_int("padding", 0, "conv2d");
  const std::int64_t groups = attrs.get_int("groups", 1, "conv2d");
  const Shape& x = in[0]->type.shape;
  const Shape& w = in[1]->type.shape;
  const Shape& y = out.type.shape;
  if (groups == 1) {
    const ConvGeometry geometry{x, w, y, stride, pad, in.size() == 3, false, ConvLayout::kNchw};
    onednn_conv2d(geometry, in[0]->fdata(), in[1]->fdata(), false, in.size() == 3 ? in[2]->fdata() : nullptr,
                  out.fdata());
    return;
  }
  // Grouped convolutions (none in SD) take the portable im2col + GEMM path.
  const std::int64_t out_pixels = y[2] * y[3];
  const std::int64_t out_per_group = w[0] / groups, in_per_group = x[1] / groups;
  const std::int64_t patch = in_per_group * w[2] * w[3];
  const bool pointwise = w[2] == 1 && w[3] == 1 && stride == 1 && pad == 0;
  std::vector<float> columns(pointwise ? 0 : static_cast<std::size_t>(patch * out_pixels));
  for (std::int64_t n = 0; n < x[0]; ++n) {
    for (std::int64_t g = 0; g < groups; ++g) {
      const float* image = in[0]->fdata() + (n * x[1] + g * in_per_group) * x[2] * x[3];
      float* result = out.fdata() + (n * y[1] + g * out_per_group) * out_pixels;
      const float* filters = in[1]->fdata() + g * out_per_group * patch;
      if (in.size() == 3) {
        const float* bias = in[2]->fdata() + g * out_per_group;
        for (std::int64_t o = 0; o < out_per_group; ++o) std::fill_n(result + o * out_pixels, out_pixels, bias[o]);
      }
      const float* source = image;
      if (!pointwise) {
        im2col(image, in_per_group, x[2], x[3], w[2], w[3], stride, pad, y[2], y[3], columns.data());
        source = columns.data();
      }
      gemm_dense(filters, source, result, out_per_group, out_pixels, patch, false, in.size() == 3);
    }
  }
}

}  // namespace

bool computes_in_bf16(const Attrs& attrs, const char* op) {
  return attrs.has("compute") && attrs.get_string("compute", op) == "bf16";
}

bool holds_weights_in_f16(const Attrs& attrs, const char* op) {
  return attrs.has("weights") && attrs.get_string("weights", op) == "f16" && !computes_in_bf16(attrs, op);
}

bool weight_layout_holds_bf16(const std::string& layout) {
  return conv_layout_reads_bf16(layout) || layout == kLinearBf16Layout;
}

bool weight_layout_holds_f16(const std::string& layout) {
  return conv_layout_holds_f16(layout) || layout == kLinearF16Layout;
}

void add_linalg_kernels(CpuKernelTable& table) {
  table.emplace_back("matmul", matmul_kernel);
  table.emplace_back("linear", linear_kernel);
  table.emplace_back("conv2d", conv2d_kernel);
}

}  // namespace websd::cpu
