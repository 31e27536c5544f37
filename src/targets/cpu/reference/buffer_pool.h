#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include "targets/cpu/runtime/cpu_tensor.h"

namespace websd::cpu {

// Float buffers that an executor's intermediates have finished with, handed to later nodes that
// fit: the smallest free buffer holding at least the elements needed and at most twice as many (a
// tensor may sit in a longer buffer; kernels read numel() elements). Every run allocates the same
// sizes, so after the first run nodes write into memory that is already mapped instead of
// page-faulting fresh pages. Holds at most what one run had allocated at once. Not thread-safe:
// one executor run at a time uses a pool.
class BufferPool {
 public:
  // `exact`: the storage must hold exactly numel() values (tensors handed out of the executor).
  CpuTensor allocate(const TensorType& type, bool exact);
  // Takes the storage if nothing else (a view, the caller) still shares it; empties `tensor`.
  void release(CpuTensor& tensor);

 private:
  std::multimap<std::size_t, std::shared_ptr<std::vector<float>>> free_;
};

}  // namespace websd::cpu
