// The device name under which CPU tuning records are stored: the CPU model as /proc/cpuinfo
// names it ("Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz"), spaces collapsed; on systems
// without one, "cpu-<machine>" from uname ("cpu-aarch64"), else "cpu-unknown". Read once, then
// cached; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace websd::tuning {

std::string cpu_device_name();

// The model name in /proc/cpuinfo-formatted `cpuinfo` text, spaces collapsed; empty when absent.
std::string cpu_model_name_from_cpuinfo(std::string_view cpuinfo);

}  // namespace websd::tuning
