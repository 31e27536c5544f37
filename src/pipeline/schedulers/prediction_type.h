// What the denoising model predicts: the noise ("epsilon"), the clean sample ("sample"), or the
// velocity v = alpha * noise - sigma * x0 ("v_prediction", SD 2.x 768 models). Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "pipeline/schedulers/scheduler_config.h"

namespace websd::schedulers {

enum class PredictionType { kEpsilon, kSample, kVPrediction };

// Reads `prediction_type`; `sample_supported` is false for the classes whose diffusers code rejects it.
inline PredictionType read_prediction_type(const SchedulerConfig& config, bool sample_supported) {
  std::vector<std::string> supported = {"epsilon", "v_prediction"};
  if (sample_supported) supported.push_back("sample");
  const std::string type = config.get_choice("prediction_type", supported);
  if (type == "epsilon") return PredictionType::kEpsilon;
  return type == "sample" ? PredictionType::kSample : PredictionType::kVPrediction;
}

}  // namespace websd::schedulers
