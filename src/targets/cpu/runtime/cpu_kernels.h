// The CPU target's kernels, one per supported op, looked up by op name. A kernel reads its inputs
// and writes the preallocated output; it may use several threads internally. Kernels are stateless
// and thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "targets/cpu/runtime/cpu_tensor.h"

namespace websd::cpu {

using CpuKernel =
    std::function<void(const std::vector<const CpuTensor*>& inputs, const Attrs& attrs, CpuTensor& output)>;

// nullptr when the CPU target has no kernel for the op (composites are then lowered first).
const CpuKernel* cpu_kernel_lookup(const std::string& op_name);
bool cpu_supports(const std::string& op_name);

// Registration of kernel groups, one file each.
using CpuKernelTable = std::vector<std::pair<std::string, CpuKernel>>;
void add_elementwise_kernels(CpuKernelTable& table);
void add_linalg_kernels(CpuKernelTable& table);
void add_shape_kernels(CpuKernelTable& table);
void add_norm_kernels(CpuKernelTable& table);
void add_attention_kernels(CpuKernelTable& table);
void add_channels_last_kernels(CpuKernelTable& table);
void add_fused_elementwise_kernels(CpuKernelTable& table);

// The convolution a conv2d_nhwc node performs, from its operand types and attributes; the executor
// uses it to pack the node's weight ahead of time.
struct ConvGeometry;
ConvGeometry conv2d_nhwc_geometry(const std::vector<const TensorType*>& inputs, const Attrs& attrs,
                                  const TensorType& output);

// Whether a node of `op` (linear, conv2d_nhwc, attention) has its products take bf16 operands
// (attribute compute = "bf16"); a linear layer's weight is then held in onednn_linear.h's
// kLinearBf16Layout, a convolution's in its bf16 packing.
bool computes_in_bf16(const Attrs& attrs, const char* op);
// Whether a node of `op` (linear, conv2d_nhwc) holds its weight in f16 (attribute weights = "f16"),
// widened to f32 for each call: a linear layer's in onednn_linear.h's kLinearF16Layout, a
// convolution's in its packing marked f16 (conv_layout_holds_f16). Not where it computes in bf16.
bool holds_weights_in_f16(const Attrs& attrs, const char* op);
// Query rows per block of the attention kernels unless the node's `block_rows` attribute (set from
// the tuning database, see src/tuning) says otherwise.
inline constexpr std::int64_t kDefaultAttentionBlockRows = 128;
// Keys that query row `row` of an attention sees: all kv_len, or with a causal mask those up to it
// (queries aligned with the end of the keys).
inline std::int64_t attention_visible_keys(bool causal, std::int64_t row, std::int64_t q_len, std::int64_t kv_len) {
  return causal ? row + kv_len - q_len + 1 : kv_len;
}
// Whether a weight stored in `layout` is held as bf16 (a bf16 convolution's packing or a bf16
// linear layer's): narrowed once at import unless stored as bf16 already.
bool weight_layout_holds_bf16(const std::string& layout);
// Whether a weight stored in `layout` is held as f16 (see holds_weights_in_f16): narrowed once at
// import unless stored as f16 already.
bool weight_layout_holds_f16(const std::string& layout);

}  // namespace websd::cpu
