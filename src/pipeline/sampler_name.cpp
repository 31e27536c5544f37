#include "pipeline/sampler_name.h"

#include <map>

namespace websd {
namespace {

bool config_is(const nlohmann::json& config, const char* key, const nlohmann::json& value) {
  const auto found = config.find(key);
  return found != config.end() && *found == value;
}

}  // namespace

std::string sampler_display_name(const schedulers::Scheduler& scheduler) {
  static const std::map<std::string, std::string> kNames = {
      {"PNDMScheduler", "PLMS"},           {"DDIMScheduler", "DDIM"},
      {"DDPMScheduler", "DDPM"},           {"LCMScheduler", "LCM"},
      {"LMSDiscreteScheduler", "LMS"},     {"HeunDiscreteScheduler", "Heun"},
      {"EulerDiscreteScheduler", "Euler"}, {"EulerAncestralDiscreteScheduler", "Euler a"},
      {"UniPCMultistepScheduler", "UniPC"}};
  const nlohmann::json& config = scheduler.config();
  std::string name = scheduler.class_name();
  if (const auto found = kNames.find(name); found != kNames.end()) {
    name = found->second;
  } else if (name == "DPMSolverMultistepScheduler" && config_is(config, "algorithm_type", "dpmsolver++") &&
             config_is(config, "solver_order", 2)) {
    name = "DPM++ 2M";
  }
  if (config_is(config, "use_karras_sigmas", true)) name += " Karras";
  return name;
}

}  // namespace websd
