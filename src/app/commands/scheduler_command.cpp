// `websd scheduler`: prints a scheduler's resolved config, timesteps and sigmas as JSON, the way the
// pipeline would build them, so a user can see what a scheduler_config.json (or a name) amounts to.
// Non-finite config values print as Python's json does (-Infinity), which websd's reader accepts.
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "app/command_registry.h"
#include "app/number_ranges.h"
#include "core/error.h"
#include "pipeline/schedulers/scheduler_factory.h"

namespace websd::app {
namespace {

struct SchedulerOptions {
  std::string name;
  std::string config_path;
  int steps = 0;
  double strength = 1.0;
  bool img2img = false;  // --strength given
};

// nlohmann::json writes non-finite numbers as null; swap them for markers, then for the literals.
std::string dump_with_nonfinite(nlohmann::json value) {
  constexpr const char* kPositive = "@websd-literal:Infinity";
  constexpr const char* kNegative = "@websd-literal:-Infinity";
  constexpr const char* kNan = "@websd-literal:NaN";
  const auto mark = [&](auto& self, nlohmann::json& node) -> void {
    if (node.is_number_float() && !std::isfinite(node.get<double>())) {
      const double number = node.get<double>();
      node = std::isnan(number) ? kNan : (number > 0 ? kPositive : kNegative);
    } else if (node.is_structured()) {
      for (auto& child : node) self(self, child);
    }
  };
  mark(mark, value);
  std::string text = value.dump(2);
  for (const auto& [marker, literal] :
       {std::pair{kPositive, "Infinity"}, std::pair{kNegative, "-Infinity"}, std::pair{kNan, "NaN"}}) {
    const std::string quoted = std::string("\"") + marker + "\"";
    for (auto at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at)) {
      text.replace(at, quoted.size(), literal);
    }
  }
  return text;
}

void run_scheduler(const SchedulerOptions& options) {
  if (options.name.empty() && options.config_path.empty()) {
    throw Error("scheduler", "give --name NAME or --config scheduler_config.json (names: " +
                                 schedulers::join_names(schedulers::scheduler_names()) + ")");
  }
  auto scheduler = options.config_path.empty()
                       ? schedulers::create_scheduler_by_name(options.name)
                       : schedulers::create_scheduler_from_file(options.config_path, options.name);
  scheduler->set_timesteps(options.steps);

  nlohmann::json report;
  if (!options.name.empty()) report["name"] = options.name;
  report["class_name"] = scheduler->class_name();
  report["config"] = scheduler->config();
  report["num_inference_steps"] = scheduler->num_inference_steps();
  report["order"] = scheduler->order();
  report["init_noise_sigma"] = scheduler->init_noise_sigma();
  report["needs_generator"] = scheduler->needs_generator();
  report["timesteps"] = scheduler->timesteps();
  report["sigmas"] = scheduler->sigmas().empty() ? nlohmann::json(nullptr) : nlohmann::json(scheduler->sigmas());
  if (options.img2img) {
    const auto kept = scheduler->start_at_strength(options.strength);
    report["img2img"] = {{"strength", options.strength},
                         {"begin_index", scheduler->timesteps().size() - kept.size()},
                         {"sets_begin_index", scheduler->has_begin_index()},
                         {"timesteps", kept}};
  }
  std::cout << dump_with_nonfinite(std::move(report)) << "\n";
}

const bool registered = register_command(
    {"scheduler", "Print a scheduler's resolved config, timesteps and sigmas as JSON", [](CLI::App& command) {
       auto options = std::make_shared<SchedulerOptions>();
       command.add_option("--name", options->name,
                          "Scheduler name: " + schedulers::join_names(schedulers::scheduler_names()) +
                              " (with --config: overrides its _class_name)");
       command.add_option("--config", options->config_path, "A diffusers scheduler_config.json")
           ->check(CLI::ExistingFile);
       command.add_option("--steps", options->steps, "Number of inference steps")
           ->required()
           ->check(integer_range(1, std::numeric_limits<int>::max()));
       CLI::Option* strength =
           command.add_option("--strength", options->strength, "img2img strength in [0, 1]: also print the kept steps")
               ->check(number_range(0, 1));
       command.callback([options, strength] {
         options->img2img = strength->count() > 0;
         run_scheduler(*options);
       });
     }});

}  // namespace
}  // namespace websd::app
