// Reads every float tensor of a checkpoint component and counts non-finite values (NaN, +-Inf),
// the mark of a corrupt or badly converted checkpoint (e.g. an fp32 model cast to fp16 with
// overflow). Streams each tensor through a fixed-size buffer and releases the mapped pages behind
// it, so resident memory stays bounded by the buffer plus a few pages, whatever the model size.
// Thread-safety: reads only; safe to run on different components concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "import/checkpoint_component.h"

namespace websd {

struct NonFiniteTensor {
  std::string name;  // canonical
  std::string file;
  std::uint64_t count = 0;        // non-finite values
  std::uint64_t first_index = 0;  // flat index of the first one
};

struct ComponentVerifyReport {
  std::string component;
  std::size_t tensors_read = 0;
  std::uint64_t values_read = 0;
  std::vector<NonFiniteTensor> non_finite;  // in tensor name order

  bool ok() const { return non_finite.empty(); }
};

// Throws websd::Error only for unreadable data; non-finite values are reported, not thrown.
ComponentVerifyReport verify_component(const CheckpointComponent& component, std::size_t buffer_elements = 1 << 16);

}  // namespace websd
