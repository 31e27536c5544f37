// A runtime::Device that hands every call to another device it owns (by default the registry's
// device for the cpu target), for tests that watch or change one part of a device's behaviour
// (counting trims, deferring work) while the inner device does the rest. Not thread-safe, as
// Device.
#pragma once

#include <memory>
#include <utility>

#include "runtime/device.h"
#include "targets/device_registry.h"

namespace websd::test {

class ForwardingDevice : public runtime::Device {
 public:
  explicit ForwardingDevice(std::unique_ptr<runtime::Device> inner = targets::open_device("cpu"))
      : inner_(std::move(inner)) {}

  std::string name() const override { return inner_->name(); }
  const runtime::DeviceLimits& limits() const override { return inner_->limits(); }
  runtime::BufferPtr allocate(std::uint64_t bytes) override { return inner_->allocate(bytes); }
  runtime::BufferPtr import_weight(const runtime::LaunchWeight& weight, const runtime::WeightBytes& data) override {
    return inner_->import_weight(weight, data);
  }
  void upload(const runtime::BufferRange& to, std::span<const std::byte> from) override { inner_->upload(to, from); }
  void download(const runtime::BufferRange& from, std::span<std::byte> to) override { inner_->download(from, to); }
  void copy(const runtime::BufferRange& from, const runtime::BufferRange& to) override { inner_->copy(from, to); }
  std::unique_ptr<runtime::DeviceProgram> prepare(const runtime::LaunchList& list,
                                                  const runtime::KernelFileResolver& files) override {
    return inner_->prepare(list, files);
  }
  void bind(runtime::DeviceProgram& program, const std::vector<runtime::BufferRange>& values) override {
    inner_->bind(program, values);
  }
  void submit(runtime::DeviceProgram& program, runtime::LaunchTimes* times,
              const runtime::LaunchProgress* progress) override {
    inner_->submit(program, times, progress);
  }
  void wait() override { inner_->wait(); }
  bool poll() override { return inner_->poll(); }
  void trim() override { inner_->trim(); }

 protected:
  runtime::Device& inner() { return *inner_; }

 private:
  std::unique_ptr<runtime::Device> inner_;
};

}  // namespace websd::test
