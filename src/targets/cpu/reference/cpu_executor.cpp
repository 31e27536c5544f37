#include "targets/cpu/reference/cpu_executor.h"

#include <chrono>
#include <map>
#include <optional>

#include "core/error.h"
#include "graph/op_registry.h"
#include "passes/channels_last.h"
#include "passes/fuse_conv_residual.h"
#include "passes/fuse_norm_activation.h"
#include "passes/launch_lowering.h"
#include "passes/lower_composites.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/onednn_conv.h"
#include "targets/cpu/runtime/onednn_linear.h"
#include "tuning/apply_tuning.h"
#include "tuning/cpu_device.h"

namespace websd::cpu {

graph::Function compile_for_cpu(const graph::Function& function, bool optimize) {
  graph::Function lowered = passes::lower_composites(function, [](const std::string& op) { return cpu_supports(op); });
  if (!optimize) return lowered;
  return passes::fuse_norm_activation(passes::fuse_conv_residual(passes::to_channels_last(lowered)));
}

std::optional<WeightPacking> cpu_weight_packing(const graph::Function& function, graph::ValueId id) {
  std::optional<WeightPacking> packing;
  for (const auto& node : function.nodes()) {
    for (std::size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] != id) continue;
      if (node.op->name == "linear" && slot == 1 && computes_in_bf16(node.attrs, "linear")) {
        // Held as bf16 in torch's order: the values stay as they are and are narrowed at import.
        if (packing && packing->layout != kLinearBf16Layout) return std::nullopt;
        packing = WeightPacking{std::string(kLinearBf16Layout),
                                [](const std::vector<float>& row_major) { return row_major; }};
        continue;
      }
      if (node.op->name == "linear" && slot == 1 && holds_weights_in_f16(node.attrs, "linear")) {
        // Held as f16 in torch's order: the values stay as they are and are narrowed at import.
        if (packing && packing->layout != kLinearF16Layout) return std::nullopt;
        packing =
            WeightPacking{std::string(kLinearF16Layout), [](const std::vector<float>& row_major) { return row_major; }};
        continue;
      }
      if (node.op->name != "conv2d_nhwc" || slot != 1) return std::nullopt;
      std::vector<const TensorType*> types;
      for (const auto input : node.inputs) types.push_back(&function.value(input).type);
      const ConvGeometry geometry = conv2d_nhwc_geometry(types, node.attrs, function.value(node.outputs[0]).type);
      const std::string layout = conv_weight_layout(geometry);
      if (layout.empty() || (packing && packing->layout != layout)) return std::nullopt;
      packing = WeightPacking{layout, [geometry](const std::vector<float>& row_major) {
                                return conv_pack_weight(geometry, row_major.data());
                              }};
    }
  }
  return packing;
}

CpuExecutor::CpuExecutor(const graph::Function& function, bool optimize, const tuning::TuningDb* tuning_db)
    : function_(compile_for_cpu(function, optimize)) {
  tuning::TunedFunction tuned = tuning::apply_tuning(function_, tuning_db, "cpu", tuning::cpu_device_name());
  function_ = std::move(tuned.function);
  tunable_count_ = tuned.tunable_count;
  tuned_count_ = tuned.tuned_count;
  for (const auto& node : function_.nodes()) {
    if (!passes::lowers_to_view(node.op->name) && !cpu_supports(node.op->name)) {
      throw Error("cpu", function_.symbol() + ": the CPU target has no kernel for op '" + node.op->name + "'");
    }
  }
  last_use_.assign(function_.values().size(), -1);
  for (std::size_t n = 0; n < function_.nodes().size(); ++n) {
    for (const auto id : function_.nodes()[n].inputs) last_use_[id] = static_cast<std::int32_t>(n);
  }
  for (const auto id : function_.outputs()) last_use_[id] = static_cast<std::int32_t>(function_.nodes().size());
}

void CpuExecutor::bind_weights(const WeightSource& source) {
  weights_.clear();
  for (const auto id : function_.weights()) {
    const auto& value = function_.value(id);
    const std::optional<WeightPacking> packing = cpu_weight_packing(function_, id);
    auto storage = source(value.name, value.type, packing ? &*packing : nullptr);
    if (!storage || (!packing && static_cast<std::int64_t>(storage->size()) != value.type.numel())) {
      throw Error("cpu", function_.symbol() + ": weight '" + value.name + "' must hold " +
                             std::to_string(value.type.numel()) + " values " + value.type.to_string());
    }
    weights_.push_back({value.type, std::move(storage), nullptr, packing ? packing->layout : std::string()});
  }
}

std::vector<CpuTensor> CpuExecutor::run(const std::vector<CpuTensor>& inputs) const {
  if (weights_.size() != function_.weights().size()) throw Error("cpu", function_.symbol() + ": weights not bound");
  if (inputs.size() != function_.inputs().size()) {
    throw Error("cpu", function_.symbol() + ": expects " + std::to_string(function_.inputs().size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  }
  std::vector<CpuTensor> values(function_.values().size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& expected = function_.value(function_.inputs()[i]);
    if (inputs[i].type != expected.type) {
      throw Error("cpu", function_.symbol() + ": input '" + expected.name + "' must be " + expected.type.to_string() +
                             ", got " + inputs[i].type.to_string());
    }
    values[function_.inputs()[i]] = inputs[i];
  }
  for (std::size_t i = 0; i < weights_.size(); ++i) values[function_.weights()[i]] = weights_[i];

  const auto& nodes = function_.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const auto& node = nodes[n];
    const auto start = std::chrono::steady_clock::now();
    const auto& output_type = function_.value(node.outputs[0]).type;
    CpuTensor& output = values[node.outputs[0]];
    if (node.op->name == "reshape") {
      output = values[node.inputs[0]];  // a view: same storage, new shape
      output.type = output_type;
    } else {
      std::vector<const CpuTensor*> operands;
      for (const auto id : node.inputs) operands.push_back(&values[id]);
      output = pool_->allocate(output_type, last_use_[node.outputs[0]] == static_cast<std::int32_t>(nodes.size()));
      (*cpu_kernel_lookup(node.op->name))(operands, node.attrs, output);
    }
    if (profile_ != nullptr) {
      std::vector<const Shape*> shapes;
      for (const auto input : node.inputs) shapes.push_back(&function_.value(input).type.shape);
      profile_->add(node.op->name, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                    runtime::kernel_flops(node.op->name, shapes, function_.value(node.outputs[0]).type.numel()));
    }
    for (const auto id : node.inputs) {
      if (last_use_[id] == static_cast<std::int32_t>(n) && function_.value(id).kind == graph::ValueKind::kNode) {
        pool_->release(values[id]);  // kept for reuse unless a view still shares the storage
      }
    }
  }
  std::vector<CpuTensor> outputs;
  for (const auto id : function_.outputs()) outputs.push_back(values[id]);
  return outputs;
}

}  // namespace websd::cpu
