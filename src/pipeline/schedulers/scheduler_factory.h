// Creates schedulers from a scheduler_config.json, a user-facing name, or both, as diffusers'
// `<Scheduler>.from_config(config)` would: the class is picked by the name if one is given, else by
// the config's "_class_name"; then every key the config sets that the class knows carries over, other
// keys are ignored and the class defaults fill the rest. A name also fixes the keys that define it:
//   pndm, ddim, ddpm, lcm, lms, heun, unipc, euler_a  the class alone
//   euler / euler_karras                              EulerDiscreteScheduler, use_karras_sigmas false / true
//   dpmpp_2m / dpmpp_2m_karras                        DPMSolverMultistepScheduler, dpmsolver++ order 2,
//                                                     use_karras_sigmas false / true
// With a name and no config, the class defaults alone apply (diffusers' `EulerDiscreteScheduler()`).
// Thread-safe (no shared mutable state).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/schedulers/scheduler.h"

namespace websd::schedulers {

// The names a user may pick, in a stable order.
const std::vector<std::string>& scheduler_names();
// The diffusers classes websd implements.
std::vector<std::string> scheduler_class_names();
// The class a name stands for; throws websd::Error listing the valid names if unknown.
std::string scheduler_class_for_name(const std::string& name);

// `config` is a scheduler_config.json's content (an object); `name` may be empty. `origin` (a path or
// description) prefixes error messages.
std::unique_ptr<Scheduler> create_scheduler(const nlohmann::json& config, const std::string& name,
                                            const std::string& origin);
// Reads `path` with json_read_file (Infinity and NaN allowed) and calls create_scheduler.
std::unique_ptr<Scheduler> create_scheduler_from_file(const std::string& path, const std::string& name = "");
// The class defaults for `name`.
std::unique_ptr<Scheduler> create_scheduler_by_name(const std::string& name);

}  // namespace websd::schedulers
