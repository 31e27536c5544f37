#include "runtime/device.h"

#include "runtime/op_profile.h"

namespace websd::runtime {

std::string launch_profile_key(const LaunchList& list, const Launch& launch) {
  // Appended piece by piece: `"literal" + std::string&&` trips GCC 12's false -Wrestrict (PR 105329).
  std::string text = list.kernel_of(launch).entry;
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
