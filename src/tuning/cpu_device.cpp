#include "tuning/cpu_device.h"

#include <sys/utsname.h>

#include <fstream>
#include <sstream>

namespace websd::tuning {
namespace {

std::string collapse_spaces(std::string_view text) {
  std::string collapsed;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\t';
    if (space && (collapsed.empty() || collapsed.back() == ' ')) continue;
    collapsed += space ? ' ' : c;
  }
  while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
  return collapsed;
}

std::string read_device_name() {
  std::ifstream stream("/proc/cpuinfo");
  std::ostringstream text;
  text << stream.rdbuf();
  std::string name = cpu_model_name_from_cpuinfo(text.str());
  if (!name.empty()) return name;
  utsname system{};
  if (uname(&system) == 0 && system.machine[0] != '\0') return std::string("cpu-") + system.machine;
  return "cpu-unknown";
}

}  // namespace

std::string cpu_model_name_from_cpuinfo(std::string_view cpuinfo) {
  constexpr std::string_view kKey = "model name";
  std::size_t start = 0;
  while (start < cpuinfo.size()) {
    std::size_t end = cpuinfo.find('\n', start);
    if (end == std::string_view::npos) end = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(start, end - start);
    const std::size_t colon = line.find(':');
    if (line.substr(0, kKey.size()) == kKey && colon != std::string_view::npos) {
      return collapse_spaces(line.substr(colon + 1));
    }
    start = end + 1;
  }
  return {};
}

std::string cpu_device_name() {
  static const std::string name = read_device_name();
  return name;
}

}  // namespace websd::tuning
