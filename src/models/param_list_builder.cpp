#include "models/param_list_builder.h"

#include "core/host_tensor.h"

namespace websd {

void ParamListBuilder::linear(const std::string& name, std::int64_t in, std::int64_t out, bool bias) {
  params_.push_back({{name + ".weight", {out, in}}, ParamRole::kWeight, in});
  if (bias) params_.push_back({{name + ".bias", {out}}, ParamRole::kBias, in});
}

void ParamListBuilder::conv(const std::string& name, std::int64_t in, std::int64_t out, std::int64_t kernel) {
  const std::int64_t fan_in = in * kernel * kernel;
  params_.push_back({{name + ".weight", {out, in, kernel, kernel}}, ParamRole::kWeight, fan_in});
  params_.push_back({{name + ".bias", {out}}, ParamRole::kBias, fan_in});
}

void ParamListBuilder::norm(const std::string& name, std::int64_t channels) {
  params_.push_back({{name + ".weight", {channels}}, ParamRole::kNormWeight, 0});
  params_.push_back({{name + ".bias", {channels}}, ParamRole::kNormBias, 0});
}

void ParamListBuilder::embedding(const std::string& name, std::int64_t count, std::int64_t dim) {
  params_.push_back({{name + ".weight", {count, dim}}, ParamRole::kEmbedding, 0});
}

std::vector<ParamSpec> param_specs(const std::vector<ModelParam>& params) {
  std::vector<ParamSpec> out;
  out.reserve(params.size());
  for (const auto& param : params) out.push_back(param.spec);
  return out;
}

std::int64_t param_count(const std::vector<ModelParam>& params) {
  std::int64_t total = 0;
  for (const auto& param : params) total += shape_numel(param.spec.shape);
  return total;
}

}  // namespace websd
