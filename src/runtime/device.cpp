#include "runtime/device.h"

#include "runtime/op_profile.h"

namespace websd::runtime {

namespace {

// What a profile calls a kernel: its entry, or for a kernel named "<family>_<16 hex digits>:<entry>"
// (a specialized WGSL module, named by its text's digest; generated ones all enter at "main") the
// family, with the entry when it differs ("group_norm_nhwc.gn_reduce").
std::string kernel_profile_name(const Kernel& kernel) {
  const std::size_t colon = kernel.name.find(':');
  const std::size_t underscore = kernel.name.rfind('_', colon);
  if (colon == std::string::npos || underscore == std::string::npos || colon - underscore != 17) return kernel.entry;
  std::string family = kernel.name.substr(0, underscore);
  if (kernel.entry != "main" && kernel.entry != family) family.append(".").append(kernel.entry);
  return family;
}

}  // namespace

std::string launch_profile_key(const LaunchList& list, const Launch& launch) {
  // Appended piece by piece: `"literal" + std::string&&` trips GCC 12's false -Wrestrict (PR 105329).
  std::string text = kernel_profile_name(list.kernel_of(launch));
  for (const auto id : launch.reads()) {
    text += ' ';
    text += shape_to_string(list.values[id].type.shape);
  }
  text += " ->";
  for (const auto id : launch.writes()) {
    text += ' ';
    text += shape_to_string(list.values[id].type.shape);
  }
  return text;
}

double launch_flops(const LaunchList& list, const Launch& launch) {
  const std::vector<std::int32_t> writes = launch.writes();
  if (writes.empty()) return 0;
  std::vector<const Shape*> shapes;
  for (const auto id : launch.reads()) shapes.push_back(&list.values[id].type.shape);
  return kernel_flops(list.kernel_of(launch).entry, shapes, list.values[writes[0]].type.numel());
}

}  // namespace websd::runtime
