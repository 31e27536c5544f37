// Accumulates ModelParam entries layer by layer, so the per-network lists read like the PyTorch modules
// they mirror (`linear("to_q", dim, dim, false)`). Internal to websd_models. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/model_params.h"

namespace websd {

class ParamListBuilder {
 public:
  // nn.Linear(in, out): "<name>.weight" [out,in] and optionally "<name>.bias" [out].
  void linear(const std::string& name, std::int64_t in, std::int64_t out, bool bias = true);
  // nn.Conv2d(in, out, kernel): "<name>.weight" [out,in,k,k] and "<name>.bias" [out].
  void conv(const std::string& name, std::int64_t in, std::int64_t out, std::int64_t kernel);
  // LayerNorm / GroupNorm over `channels`: "<name>.weight" and "<name>.bias" [channels].
  void norm(const std::string& name, std::int64_t channels);
  // nn.Embedding(count, dim): "<name>.weight" [count,dim].
  void embedding(const std::string& name, std::int64_t count, std::int64_t dim);

  std::vector<ModelParam> take() { return std::move(params_); }

 private:
  std::vector<ModelParam> params_;
};

}  // namespace websd
