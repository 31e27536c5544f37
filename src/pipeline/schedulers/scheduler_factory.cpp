#include "pipeline/schedulers/scheduler_factory.h"

#include <functional>

#include "core/error.h"
#include "core/message_text.h"
#include "io/json_file.h"
#include "pipeline/schedulers/ddim_scheduler.h"
#include "pipeline/schedulers/ddpm_scheduler.h"
#include "pipeline/schedulers/dpm_solver_scheduler.h"
#include "pipeline/schedulers/euler_ancestral_scheduler.h"
#include "pipeline/schedulers/euler_discrete_scheduler.h"
#include "pipeline/schedulers/heun_discrete_scheduler.h"
#include "pipeline/schedulers/lcm_scheduler.h"
#include "pipeline/schedulers/lms_discrete_scheduler.h"
#include "pipeline/schedulers/pndm_scheduler.h"
#include "pipeline/schedulers/unipc_scheduler.h"

namespace websd::schedulers {
namespace {

using Maker = std::function<std::unique_ptr<Scheduler>(const nlohmann::json&, const std::string&)>;

struct ClassEntry {
  std::string class_name;
  Maker make;
};

template <typename T>
ClassEntry entry() {
  return {T::kClassName,
          [](const nlohmann::json& config, const std::string& origin) { return std::make_unique<T>(config, origin); }};
}

const std::vector<ClassEntry>& classes() {
  static const std::vector<ClassEntry> table = {
      entry<PndmScheduler>(),          entry<DdimScheduler>(),           entry<DpmSolverScheduler>(),
      entry<EulerDiscreteScheduler>(), entry<EulerAncestralScheduler>(), entry<LmsDiscreteScheduler>(),
      entry<HeunDiscreteScheduler>(),  entry<UniPcScheduler>(),          entry<LcmScheduler>(),
      entry<DdpmScheduler>()};
  return table;
}

struct NameEntry {
  std::string name;
  std::string class_name;
  nlohmann::json fixed_keys;  // the keys that define the name, over whatever the config says
};

const std::vector<NameEntry>& names() {
  static const std::vector<NameEntry> table = {
      {"pndm", PndmScheduler::kClassName, nlohmann::json::object()},
      {"ddim", DdimScheduler::kClassName, nlohmann::json::object()},
      {"dpmpp_2m",
       DpmSolverScheduler::kClassName,
       {{"algorithm_type", "dpmsolver++"}, {"solver_order", 2}, {"use_karras_sigmas", false}}},
      {"dpmpp_2m_karras",
       DpmSolverScheduler::kClassName,
       {{"algorithm_type", "dpmsolver++"}, {"solver_order", 2}, {"use_karras_sigmas", true}}},
      {"euler", EulerDiscreteScheduler::kClassName, {{"use_karras_sigmas", false}}},
      {"euler_karras", EulerDiscreteScheduler::kClassName, {{"use_karras_sigmas", true}}},
      {"euler_a", EulerAncestralScheduler::kClassName, nlohmann::json::object()},
      {"lms", LmsDiscreteScheduler::kClassName, nlohmann::json::object()},
      {"heun", HeunDiscreteScheduler::kClassName, nlohmann::json::object()},
      {"unipc", UniPcScheduler::kClassName, nlohmann::json::object()},
      {"lcm", LcmScheduler::kClassName, nlohmann::json::object()},
      {"ddpm", DdpmScheduler::kClassName, nlohmann::json::object()}};
  return table;
}

const NameEntry& find_name(const std::string& name) {
  for (const auto& entry : names()) {
    if (entry.name == name) return entry;
  }
  throw Error("scheduler",
              "unknown scheduler name \"" + name + "\" (valid names: " + join_names(scheduler_names()) + ")");
}

}  // namespace

const std::vector<std::string>& scheduler_names() {
  static const std::vector<std::string> list = [] {
    std::vector<std::string> result;
    for (const auto& entry : names()) result.push_back(entry.name);
    return result;
  }();
  return list;
}

std::vector<std::string> scheduler_class_names() {
  std::vector<std::string> result;
  for (const auto& entry : classes()) result.push_back(entry.class_name);
  return result;
}

std::string scheduler_class_for_name(const std::string& name) { return find_name(name).class_name; }

std::unique_ptr<Scheduler> create_scheduler(const nlohmann::json& config, const std::string& name,
                                            const std::string& origin) {
  if (!config.is_object()) {
    throw Error("scheduler", origin + ": a scheduler config must be a JSON object (pass a scheduler_config.json)");
  }
  nlohmann::json resolved = config;
  std::string class_name;
  if (!name.empty()) {
    const NameEntry& entry = find_name(name);
    class_name = entry.class_name;
    for (const auto& [key, value] : entry.fixed_keys.items()) resolved[key] = value;
    // The name's keys act as from_config's keyword arguments, which "_use_default_values" does not reset.
    if (auto defaulted = resolved.find("_use_default_values"); defaulted != resolved.end() && defaulted->is_array()) {
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& key : *defaulted) {
        if (!key.is_string() || !entry.fixed_keys.contains(key.get<std::string>())) kept.push_back(key);
      }
      *defaulted = std::move(kept);
    }
  } else {
    const auto found = config.find("_class_name");
    if (found == config.end() || !found->is_string()) {
      throw Error("scheduler", origin + ": no \"_class_name\" says which scheduler this is (pass a scheduler name: " +
                                   join_names(scheduler_names()) + ")");
    }
    class_name = found->get<std::string>();
  }
  for (const auto& entry : classes()) {
    if (entry.class_name == class_name) return entry.make(resolved, origin);
  }
  throw Error("scheduler", origin + ": scheduler class " + message_quote(class_name, 120) +
                               " is not implemented (implemented: " + join_names(scheduler_class_names()) +
                               "; or pass a scheduler name: " + join_names(scheduler_names()) + ")");
}

std::unique_ptr<Scheduler> create_scheduler_from_file(const std::string& path, const std::string& name) {
  return create_scheduler(json_read_file(path), name, path);
}

std::unique_ptr<Scheduler> create_scheduler_by_name(const std::string& name) {
  find_name(name);  // an unknown name is reported as such, not as a config problem
  return create_scheduler(nlohmann::json::object(), name, "scheduler \"" + name + "\"");
}

}  // namespace websd::schedulers
