// Data movement: permute, slice, concat, nearest upsampling, row gathers, constant padding. (reshape
// is an alias the executor handles without a kernel.)
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/parallel.h"

namespace websd::cpu {
namespace {

std::vector<std::int64_t> contiguous_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

void permute_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const auto& perm = attrs.get_ints("perm", "permute");
  const auto in_strides = contiguous_strides(in[0]->type.shape);
  const Shape& shape = out.type.shape;
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> strides(rank);  // input stride of each output dimension
  for (std::size_t i = 0; i < rank; ++i) strides[i] = in_strides[perm[i]];
  const std::int64_t inner = rank ? shape[rank - 1] : 1;
  const std::int64_t inner_stride = rank ? strides[rank - 1] : 1;
  const std::int64_t rows = out.numel() / std::max<std::int64_t>(inner, 1);
  const float* x = in[0]->fdata();
  float* y = out.fdata();
  parallel_for(rows, 64, [&](std::int64_t s, std::int64_t e) {
    for (std::int64_t row = s; row < e; ++row) {
      std::int64_t offset = 0, rest = row;
      for (std::size_t d = rank - 1; d-- > 0;) {
        offset += (rest % shape[d]) * strides[d];
        rest /= shape[d];
      }
      float* dst = y + row * inner;
      if (inner_stride == 1) {  // rows stay rows (heads split or merged): a contiguous copy
        std::memcpy(dst, x + offset, static_cast<std::size_t>(inner) * sizeof(float));
        continue;
      }
      for (std::int64_t i = 0; i < inner; ++i) dst[i] = x[offset + i * inner_stride];
    }
  });
}

// Copies blocks: the tensor is viewed as [outer, axis, inner].
void slice_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const Shape& shape = in[0]->type.shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::int64_t axis = attrs.get_int("axis", "slice");
  if (axis < 0) axis += rank;
  const std::int64_t start = attrs.get_int("start", "slice");
  const std::int64_t length = out.type.shape[axis];
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (std::int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  // Many short blocks for a slice of the last axis (Q, K and V out of one projection's rows).
  parallel_for(outer, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, length * inner)),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t o = begin; o < end; ++o) {
                   std::memcpy(out.fdata() + o * length * inner, in[0]->fdata() + (o * shape[axis] + start) * inner,
                               length * inner * sizeof(float));
                 }
               });
}

void concat_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const Shape& shape = out.type.shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::int64_t axis = attrs.get_int("axis", "concat");
  if (axis < 0) axis += rank;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (std::int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  std::int64_t offset = 0;
  for (const CpuTensor* part : in) {
    const std::int64_t length = part->type.shape[axis];
    for (std::int64_t o = 0; o < outer; ++o) {
      std::memcpy(out.fdata() + (o * shape[axis] + offset) * inner, part->fdata() + o * length * inner,
                  length * inner * sizeof(float));
    }
    offset += length;
  }
}

void upsample_nearest_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const std::int64_t scale = attrs.get_int("scale", "upsample_nearest");
  const Shape& x = in[0]->type.shape;
  const std::int64_t planes = x[0] * x[1], height = x[2], width = x[3];
  parallel_for(planes, 1, [&](std::int64_t s, std::int64_t e) {
    for (std::int64_t p = s; p < e; ++p) {
      const float* src = in[0]->fdata() + p * height * width;
      float* dst = out.fdata() + p * height * width * scale * scale;
      for (std::int64_t oy = 0; oy < height * scale; ++oy) {
        const float* src_row = src + (oy / scale) * width;
        float* dst_row = dst + oy * width * scale;
        for (std::int64_t ox = 0; ox < width * scale; ++ox) dst_row[ox] = src_row[ox / scale];
      }
    }
  });
}

// Walks the output a row (last axis) at a time: rows outside the source are filled, rows inside
// copy the source row between the fill of the last axis' before/after padding.
void pad_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const auto& pads = attrs.get_ints("pads", "pad");
  const auto fill = static_cast<float>(attrs.get_float("value", 0.0, "pad"));
  const Shape& x = in[0]->type.shape;
  const Shape& y = out.type.shape;
  const std::size_t rank = y.size();
  if (rank == 0) {
    out.fdata()[0] = in[0]->fdata()[0];
    return;
  }
  const auto in_strides = contiguous_strides(x);
  const std::int64_t width = x[rank - 1], before = pads[2 * (rank - 1)], out_width = y[rank - 1];
  const std::int64_t rows = out.numel() / std::max<std::int64_t>(out_width, 1);
  parallel_for(rows, 64, [&](std::int64_t s, std::int64_t e) {
    for (std::int64_t row = s; row < e; ++row) {
      float* dst = out.fdata() + row * out_width;
      std::int64_t offset = 0, rest = row;
      bool inside = true;
      for (std::size_t d = rank - 1; d-- > 0;) {
        const std::int64_t source = rest % y[d] - pads[2 * d];
        rest /= y[d];
        inside = inside && source >= 0 && source < x[d];
        offset += source * in_strides[d];
      }
      if (!inside) {
        std::fill_n(dst, out_width, fill);
        continue;
      }
      std::fill_n(dst, before, fill);
      std::memcpy(dst + before, in[0]->fdata() + offset, width * sizeof(float));
      std::fill(dst + before + width, dst + out_width, fill);
    }
  });
}

void gather_rows_kernel(const std::vector<const CpuTensor*>& in, const Attrs&, CpuTensor& out) {
  const std::int64_t rows = in[0]->type.shape[0], width = in[0]->type.shape[1];
  const std::int64_t* indices = in[1]->idata();
  for (std::int64_t i = 0; i < in[1]->numel(); ++i) {
    const std::int64_t index = indices[i];
    if (index < 0 || index >= rows) {
      throw Error("cpu", "gather_rows: index " + std::to_string(index) + " outside table of " + std::to_string(rows) +
                             " rows (token id beyond the vocabulary?)");
    }
    std::memcpy(out.fdata() + i * width, in[0]->fdata() + index * width, width * sizeof(float));
  }
}

}  // namespace

void add_shape_kernels(CpuKernelTable& table) {
  table.emplace_back("permute", permute_kernel);
  table.emplace_back("slice", slice_kernel);
  table.emplace_back("concat", concat_kernel);
  table.emplace_back("upsample_nearest", upsample_nearest_kernel);
  table.emplace_back("gather_rows", gather_rows_kernel);
  table.emplace_back("pad", pad_kernel);
}

}  // namespace websd::cpu
