#include "app/model_options.h"

#include <iostream>

#include "backends/demo_model.h"

namespace websd::app {

void add_model_options(CLI::App& command, ModelOptions& options, const std::string& model_help,
                       bool with_scheduler_config) {
  command.add_option("--model", options.model, model_help);
  command.add_option("--tokenizer", options.import.tokenizer_dir,
                     "Hugging Face tokenizer folder to use instead of the model's (single files: instead of the "
                     "one websd embedded, or websd's bundled CLIP vocabulary)");
  command
      .add_option("--prediction-type", options.import.prediction_type,
                  "Single files: what the UNet predicts (default: from the file or --config; SD 1.x epsilon, SD "
                  "2.x v_prediction)")
      ->check(CLI::IsMember({"epsilon", "v_prediction"}));
  command.add_option("--config", options.import.ldm_config,
                     "Single files: the original LDM inference YAML (v1-inference.yaml, v2-inference.yaml, "
                     "v2-inference-v.yaml) for heads, prediction type, noise schedule and size");
  command.add_flag("--use-ema", options.import.use_ema, "Single files: run the UNet's EMA weights (model_ema.*)");
  if (with_scheduler_config) {
    command.add_option("--scheduler-config", options.import.scheduler_config,
                       "A scheduler_config.json to use as the model's");
  }
}

std::vector<InputPath> model_inputs(const ModelOptions& options) {
  return {{"--model", options.model},
          {"--tokenizer", options.import.tokenizer_dir},
          {"--config", options.import.ldm_config},
          {"--scheduler-config", options.import.scheduler_config}};
}

std::shared_ptr<const DiffusersCheckpoint> open_model(const ModelOptions& options, const std::string& command) {
  std::string path = options.model;
  if (path.empty()) {
    path = backends::ensure_demo_model([&command](const std::string& line) {
      std::cerr << "websd " << command << ": writing demo model: " << line << "\n";
    });
  }
  auto checkpoint = std::make_shared<const DiffusersCheckpoint>(DiffusersCheckpoint::open(path, options.import));
  for (const std::string& note : checkpoint->notes()) std::cerr << "websd: note: " << note << "\n";
  return checkpoint;
}

}  // namespace websd::app
