// The run-side registry (targets/device_registry.h): the cpu target's device by name, and an
// unknown target refused with the targets this build runs.
#include "targets/device_registry.h"

#include <gtest/gtest.h>

#include "support/error_text.h"

namespace websd::targets {
namespace {

TEST(DeviceRegistry, OpensTheDeviceOfEachRegisteredTarget) {
  EXPECT_EQ(device_target_names(), (std::vector<std::string>{"cpu"}));
  for (const DeviceTarget& target : device_targets()) {
    const std::unique_ptr<runtime::Device> device = open_device(target.name);
    ASSERT_NE(device, nullptr);
    EXPECT_EQ(device->name(), target.name);
    EXPECT_FALSE(device->limits().value_dtypes.empty());
    device->trim();  // nothing held yet: a no-op, but allowed
  }
}

TEST(DeviceRegistry, AnUnknownTargetNamesTheKnownOnes) {
  const std::string message = test::error_of([] { open_device("webgpu\x1b[2J"); });
  EXPECT_NE(message.find("no device for target 'webgpu"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_NE(message.find("it runs cpu ("), std::string::npos) << message;
}

}  // namespace
}  // namespace websd::targets
