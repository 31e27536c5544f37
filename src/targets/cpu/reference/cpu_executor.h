// Runs a graph function on the CPU. Construction compiles it for this target: composites without a
// CPU kernel are lowered, image activations move to channels-last and convolution residuals and
// norm activations are fused (see src/passes); every remaining op must have a kernel (else a
// websd::Error naming the op). Binding packs convolution weights once into the kernels' layout.
// run() executes the nodes in order, reusing each intermediate's buffer after its last use, in
// that run and later ones (BufferPool). One executor may run() many
// times; run() is not reentrant (kernels use the machine's threads themselves).
// A tuning database given at construction annotates each tunable kernel (attention's block_rows)
// whose workload has a record for this CPU; kernels without one use their defaults.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/function.h"
#include "runtime/op_profile.h"
#include "targets/cpu/reference/buffer_pool.h"
#include "targets/cpu/runtime/cpu_tensor.h"
#include "tuning/tuning_db.h"

namespace websd::cpu {

// How a kernel wants a weight stored ahead of time: `layout` names the packing (see
// CpuTensor::layout) and `pack` turns the row-major float32 values into it.
struct WeightPacking {
  std::string layout;
  std::function<std::vector<float>(const std::vector<float>& row_major)> pack;
};

// The packing the CPU kernels want for weight `id` of a function compiled for the CPU: conv2d_nhwc
// weights in oneDNN's layout when every reader is such a convolution agreeing on it, the weights of
// bf16 linear layers held as bf16 (kLinearBf16Layout) and of linear layers holding f16 weights as f16
// (kLinearF16Layout) when every reader is one; none otherwise.
std::optional<WeightPacking> cpu_weight_packing(const graph::Function& function, graph::ValueId id);

// The CPU target's pass list (composites lowered; with `optimize`, channels-last layout and the
// convolution-residual and norm-activation fusions) as CpuExecutor applies it.
graph::Function compile_for_cpu(const graph::Function& function, bool optimize = true);

// Supplies the float32 storage of a weight by checkpoint name and expected type, packed when
// `packing` is given (the source may cache it under name and layout); throws if absent.
using WeightSource = std::function<std::shared_ptr<std::vector<float>>(const std::string& name, const TensorType& type,
                                                                       const WeightPacking* packing)>;

class CpuExecutor {
 public:
  // `optimize` = false skips the layout and fusion passes (only composites are lowered): the
  // reference the optimised form is tested against.
  // `tuning_db` (may be nullptr; only read during construction) supplies kernel parameters.
  explicit CpuExecutor(const graph::Function& function, bool optimize = true,
                       const tuning::TuningDb* tuning_db = nullptr);

  const graph::Function& function() const { return function_; }
  // Resolves every weight once; call before run().
  void bind_weights(const WeightSource& source);
  // Inputs in the function's input order; types must match exactly.
  std::vector<CpuTensor> run(const std::vector<CpuTensor>& inputs) const;
  // When set, run() times every node into `profile` (which must outlive the executor's runs).
  void set_profile(runtime::OpProfile* profile) { profile_ = profile; }
  // Tunable kernels in the compiled function, and how many of them got a tuning record.
  std::size_t tunable_count() const { return tunable_count_; }
  std::size_t tuned_count() const { return tuned_count_; }

 private:
  graph::Function function_;
  std::vector<CpuTensor> weights_;      // parallel to function_.weights()
  std::vector<std::int32_t> last_use_;  // per value: index of the last node reading it
  runtime::OpProfile* profile_ = nullptr;
  std::size_t tunable_count_ = 0;
  std::size_t tuned_count_ = 0;
  std::unique_ptr<BufferPool> pool_ = std::make_unique<BufferPool>();  // kept between runs
};

}  // namespace websd::cpu
