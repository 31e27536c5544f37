#include "pipeline/device_tensor.h"

#include <utility>

#include "core/error.h"

namespace websd {

DeviceTensor::DeviceTensor(const void* maker, Shape shape, std::shared_ptr<const void> storage)
    : maker_(maker), shape_(std::move(shape)), storage_(std::move(storage)) {}

const std::shared_ptr<const void>& DeviceTensor::storage_for(const void* maker) const {
  if (storage_ == nullptr) throw Error("pipeline", "an empty device tensor was passed to a backend");
  if (maker != maker_) {
    throw Error("pipeline",
                "a device tensor " + shape_to_string(shape_) + " was passed to a backend that did not make it");
  }
  return storage_;
}

TensorDownload::TensorDownload(std::function<HostTensor()> finish, std::function<bool()> ready)
    : finish_(std::move(finish)), ready_(std::move(ready)) {}

bool TensorDownload::ready() const { return !finish_ || !ready_ || ready_(); }

HostTensor TensorDownload::wait() {
  if (!finish_) throw Error("pipeline", "a download was waited for twice");
  const auto finish = std::exchange(finish_, {});
  ready_ = {};
  return finish();
}

}  // namespace websd
