// Elementwise kernels: unary maps, broadcasting binary arithmetic, constants.
#include <cmath>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

constexpr std::int64_t kMinChunk = 16384;

template <typename Fn>
CpuKernel unary(Fn fn) {
  return [fn](const std::vector<const CpuTensor*>& in, const Attrs&, CpuTensor& out) {
    const float* x = in[0]->fdata();
    float* y = out.fdata();
    parallel_for(out.numel(), kMinChunk, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) y[i] = fn(x[i]);
    });
  };
}

// A unary kernel from a vectorised span function (see vector_math.h), split over the threads.
CpuKernel mapped(void (*span_fn)(const float*, float*, std::int64_t)) {
  return [span_fn](const std::vector<const CpuTensor*>& in, const Attrs&, CpuTensor& out) {
    const float* x = in[0]->fdata();
    float* y = out.fdata();
    parallel_for(out.numel(), kMinChunk,
                 [&](std::int64_t begin, std::int64_t end) { span_fn(x + begin, y + begin, end - begin); });
  };
}

// GEGLU over the last axis: hidden half times gelu(gate half), row by row.
void geglu_kernel(const std::vector<const CpuTensor*>& in, const Attrs&, CpuTensor& out) {
  const std::int64_t width = out.type.shape.back();
  const std::int64_t rows = out.numel() / width;
  const float* x = in[0]->fdata();
  float* y = out.fdata();
  parallel_for(rows, std::max<std::int64_t>(1, kMinChunk / width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      gelu_gate_map(x + row * 2 * width, x + row * 2 * width + width, y + row * width, width);
    }
  });
}

// Strides of `shape` right-aligned against an output of rank `rank`, 0 where broadcast.
std::vector<std::int64_t> broadcast_strides(const Shape& shape, std::size_t rank, const Shape& out_shape) {
  std::vector<std::int64_t> strides(rank, 0);
  std::int64_t stride = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::size_t dim = shape.size() - 1 - i;
    const std::size_t out_dim = rank - 1 - i;
    strides[out_dim] = shape[dim] == 1 && out_shape[out_dim] != 1 ? 0 : stride;
    stride *= shape[dim];
  }
  return strides;
}

template <typename Fn>
CpuKernel binary(Fn fn) {
  return [fn](const std::vector<const CpuTensor*>& in, const Attrs&, CpuTensor& out) {
    const float* a = in[0]->fdata();
    const float* b = in[1]->fdata();
    float* y = out.fdata();
    const std::int64_t count = out.numel();
    const std::int64_t count_a = in[0]->numel(), count_b = in[1]->numel();
    if (count_a == count && count_b == count) {
      parallel_for(count, kMinChunk, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = s; i < e; ++i) y[i] = fn(a[i], b[i]);
      });
      return;
    }
    if (count_b == 1 && count_a == count) {
      const float scalar = b[0];
      parallel_for(count, kMinChunk, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = s; i < e; ++i) y[i] = fn(a[i], scalar);
      });
      return;
    }
    // General broadcast: walk the output with an odometer over its last dimension.
    const Shape& shape = out.type.shape;
    const std::size_t rank = shape.size();
    const auto stride_a = broadcast_strides(in[0]->type.shape, rank, shape);
    const auto stride_b = broadcast_strides(in[1]->type.shape, rank, shape);
    const std::int64_t inner = rank ? shape[rank - 1] : 1;
    const std::int64_t rows = count / std::max<std::int64_t>(inner, 1);
    const std::int64_t inner_a = rank ? stride_a[rank - 1] : 0, inner_b = rank ? stride_b[rank - 1] : 0;
    parallel_for(rows, std::max<std::int64_t>(1, kMinChunk / std::max<std::int64_t>(inner, 1)),
                 [&](std::int64_t s, std::int64_t e) {
                   for (std::int64_t row = s; row < e; ++row) {
                     std::int64_t offset_a = 0, offset_b = 0, rest = row;
                     for (std::size_t d = rank - 1; d-- > 0;) {
                       const std::int64_t index = rest % shape[d];
                       rest /= shape[d];
                       offset_a += index * stride_a[d];
                       offset_b += index * stride_b[d];
                     }
                     float* y_row = y + row * inner;
                     for (std::int64_t i = 0; i < inner; ++i)
                       y_row[i] = fn(a[offset_a + i * inner_a], b[offset_b + i * inner_b]);
                   }
                 });
  };
}

}  // namespace

void add_elementwise_kernels(CpuKernelTable& table) {
  table.emplace_back("neg", unary([](float x) { return -x; }));
  table.emplace_back("exp", mapped(exp_map));
  table.emplace_back("sqrt", unary([](float x) { return std::sqrt(x); }));
  table.emplace_back("rsqrt", unary([](float x) { return 1.0f / std::sqrt(x); }));
  table.emplace_back("sin", unary([](float x) { return std::sin(x); }));
  table.emplace_back("cos", unary([](float x) { return std::cos(x); }));
  table.emplace_back("tanh", unary([](float x) { return std::tanh(x); }));
  table.emplace_back("sigmoid", unary([](float x) { return 1.0f / (1.0f + std::exp(-x)); }));
  table.emplace_back("silu", mapped(silu_map));
  table.emplace_back("gelu", mapped(gelu_map));
  table.emplace_back("quick_gelu", mapped(quick_gelu_map));
  table.emplace_back("geglu", geglu_kernel);
  table.emplace_back("add", binary([](float a, float b) { return a + b; }));
  table.emplace_back("sub", binary([](float a, float b) { return a - b; }));
  table.emplace_back("mul", binary([](float a, float b) { return a * b; }));
  table.emplace_back("div", binary([](float a, float b) { return a / b; }));
  table.emplace_back("clamp", [](const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
    const auto low = static_cast<float>(attrs.get_float("min", "clamp"));
    const auto high = static_cast<float>(attrs.get_float("max", "clamp"));
    const float* x = in[0]->fdata();
    float* y = out.fdata();
    for (std::int64_t i = 0; i < out.numel(); ++i) y[i] = std::min(std::max(x[i], low), high);
  });
  table.emplace_back("constant", [](const std::vector<const CpuTensor*>&, const Attrs& attrs, CpuTensor& out) {
    const auto& values = attrs.get_floats("values", "constant");
    float* y = out.fdata();
    for (std::size_t i = 0; i < values.size(); ++i) y[i] = static_cast<float>(values[i]);
  });
}

}  // namespace websd::cpu
