// Runs a graph function on the CPU: composites without a CPU kernel are lowered at construction,
// every remaining op must have a kernel (else a websd::Error naming the op), and run() executes the
// nodes in order, freeing each intermediate after its last use. One executor may run() many times;
// run() is not reentrant (kernels use the machine's threads themselves).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cpu/cpu_tensor.h"
#include "graph/function.h"

namespace websd::cpu {

// Supplies the float32 storage of a weight by checkpoint name and expected type; throws if absent.
using WeightSource = std::function<std::shared_ptr<std::vector<float>>(const std::string& name,
                                                                       const graph::TensorType& type)>;

class CpuExecutor {
 public:
  explicit CpuExecutor(const graph::Function& function);

  const graph::Function& function() const { return function_; }
  // Resolves every weight once; call before run().
  void bind_weights(const WeightSource& source);
  // Inputs in the function's input order; types must match exactly.
  std::vector<CpuTensor> run(const std::vector<CpuTensor>& inputs) const;

 private:
  graph::Function function_;
  std::vector<CpuTensor> weights_;                 // parallel to function_.weights()
  std::vector<std::int32_t> last_use_;             // per value: index of the last node reading it
};

}  // namespace websd::cpu
