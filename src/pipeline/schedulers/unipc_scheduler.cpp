#include "pipeline/schedulers/unipc_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace websd::schedulers {
namespace {

// Solves the k x k system matrix * x = rhs (k <= 3) by Gaussian elimination with partial pivoting,
// as torch.linalg.solve (LU) does; the result is rounded to float32 like torch's.
std::vector<float> solve_small(std::vector<std::vector<double>> matrix, std::vector<double> rhs) {
  const std::size_t size = rhs.size();
  for (std::size_t col = 0; col < size; ++col) {
    std::size_t pivot = col;
    for (std::size_t row = col + 1; row < size; ++row) {
      if (std::fabs(matrix[row][col]) > std::fabs(matrix[pivot][col])) pivot = row;
    }
    std::swap(matrix[col], matrix[pivot]);
    std::swap(rhs[col], rhs[pivot]);
    for (std::size_t row = col + 1; row < size; ++row) {
      const double factor = matrix[row][col] / matrix[col][col];
      for (std::size_t k = col; k < size; ++k) matrix[row][k] -= factor * matrix[col][k];
      rhs[row] -= factor * rhs[col];
    }
  }
  std::vector<float> solution(size);
  std::vector<double> exact(size);
  for (std::size_t row = size; row-- > 0;) {
    double value = rhs[row];
    for (std::size_t k = row + 1; k < size; ++k) value -= matrix[row][k] * exact[k];
    exact[row] = value / matrix[row][row];
    solution[row] = static_cast<float>(exact[row]);
  }
  return solution;
}

// Rows ratios^0 .. ratios^(rows - 1), first `cols` columns (diffusers' R).
std::vector<std::vector<double>> power_rows(const std::vector<float>& ratios, std::size_t rows, std::size_t cols) {
  std::vector<std::vector<double>> matrix(rows, std::vector<double>(cols));
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t k = 0; k < cols; ++k) matrix[i][k] = std::pow(ratios[k], static_cast<float>(i));
  }
  return matrix;
}

}  // namespace

std::vector<ConfigKey> UniPcScheduler::config_keys() {
  return {{"num_train_timesteps", 1000},
          {"beta_start", 0.0001},
          {"beta_end", 0.02},
          {"beta_schedule", "linear"},
          {"trained_betas", nullptr},
          {"solver_order", 2},
          {"prediction_type", "epsilon"},
          {"thresholding", false},
          {"dynamic_thresholding_ratio", 0.995},
          {"sample_max_value", 1.0},
          {"predict_x0", true},
          {"solver_type", "bh2"},
          {"lower_order_final", true},
          {"disable_corrector", nlohmann::json::array()},
          {"solver_p", nullptr},
          {"use_karras_sigmas", false},
          {"use_exponential_sigmas", false},
          {"use_beta_sigmas", false},
          {"use_flow_sigmas", false},
          {"flow_shift", 1.0},
          {"timestep_spacing", "linspace"},
          {"steps_offset", 0},
          {"final_sigmas_type", "zero"},
          {"rescale_betas_zero_snr", false},
          {"use_dynamic_shifting", false},
          {"time_shift_type", "exponential"},
          {"sigma_min", nullptr},
          {"sigma_max", nullptr},
          {"shift_terminal", nullptr}};
}

UniPcScheduler::UniPcScheduler(const nlohmann::json& config, const std::string& origin)
    : MultistepScheduler(SchedulerConfig(kClassName, config_keys(), config, origin), ZeroSnr::kRescaleAndClamp, true) {
  const auto& solver_type = config_.get("solver_type");
  if (solver_type == "midpoint" || solver_type == "heun" || solver_type == "logrho")
    config_.replace("solver_type", "bh2");
  bh1_ = config_.get_choice("solver_type", {"bh1", "bh2"}) == "bh1";
  predict_x0_ = config_.get_bool("predict_x0");
  karras_ = config_.get_bool("use_karras_sigmas");
  final_sigma_min_ = config_.get_choice("final_sigmas_type", {"zero", "sigma_min"}) == "sigma_min";
  sigma_min_ = read_karras_bound(config_, "sigma_min", karras_);
  sigma_max_ = read_karras_bound(config_, "sigma_max", karras_);
  const auto& disabled = config_.get("disable_corrector");
  if (!disabled.is_array()) config_.fail("disable_corrector", "expected a list of step indices");
  for (const auto& step : disabled) {
    // Python's `in` compares by value, so 2.0 disables step 2 like 2 does.
    const double index = step.is_number() ? step.get<double>() : 0.5;
    if (!(std::trunc(index) == index && std::fabs(index) <= 1e9)) {
      config_.fail("disable_corrector", "expected a list of step indices (whole numbers)");
    }
    disable_corrector_.push_back(static_cast<int>(index));
  }
  for (const char* key : {"use_exponential_sigmas", "use_beta_sigmas", "use_flow_sigmas"}) {
    config_.require_false(key, "only the training and Karras sigma schedules are implemented");
  }
  // diffusers' set_timesteps raises without the mu that only flow-matching pipelines pass.
  config_.require_false("use_dynamic_shifting", "dynamic shifting needs the mu of a flow-matching pipeline");
  config_.require_value("solver_p", nullptr, "an external predictor scheduler is not supported");
  config_.require_value("shift_terminal", nullptr, "terminal shifting belongs to flow-matching models");
  config_.check_unused_string("time_shift_type");
  config_.check_unused_number("flow_shift");
}

void UniPcScheduler::build_schedule(int count) {
  SigmaPlan plan;
  plan.last_timestep = num_train_timesteps();
  plan.karras = karras_;
  plan.sigma_min = sigma_min_;
  plan.sigma_max = sigma_max_;
  plan.final_sigma_min = final_sigma_min_;
  plan.final_is_last_karras_sigma = true;
  build_multistep_schedule(count, plan);
}

void UniPcScheduler::reset_history() {
  MultistepScheduler::reset_history();
  last_sample_ = HostTensor();
  this_order_ = 1;
}

UniPcScheduler::UpdateTerms UniPcScheduler::update_terms(float h, std::vector<float> ratios, int order) const {
  UpdateTerms terms;
  const float hh = predict_x0_ ? -h : h;
  terms.h_phi_1 = std::expm1(hh);
  terms.b_h = bh1_ ? hh : std::expm1(hh);
  float h_phi_k = terms.h_phi_1 / hh - 1.0f;
  long factorial = 1;
  for (int i = 1; i <= order; ++i) {
    terms.targets.push_back(h_phi_k * static_cast<float>(factorial) / terms.b_h);
    factorial *= i + 1;
    h_phi_k = h_phi_k / hh - static_cast<float>(1.0 / static_cast<double>(factorial));
  }
  ratios.push_back(1.0f);
  terms.ratios = std::move(ratios);
  return terms;
}

HostTensor UniPcScheduler::predictor(const HostTensor& sample, int index, int order) const {
  const VpCoefficients t = vp_at(index + 1);
  const VpCoefficients s0 = vp_at(index);
  const float h = t.lambda - s0.lambda;
  const HostTensor& m0 = output_back(0);
  std::vector<float> ratios;
  std::vector<HostTensor> differences;
  for (int i = 1; i < order; ++i) {
    const float ratio = (vp_at(index - i).lambda - s0.lambda) / h;
    ratios.push_back(ratio);
    differences.push_back(map_samples(output_back(i), m0, [ratio](float mi, float m) { return (mi - m) / ratio; }));
  }
  const UpdateTerms terms = update_terms(h, ratios, order);
  const float sample_scale = predict_x0_ ? t.sigma / s0.sigma : t.alpha / s0.alpha;
  const float output_scale = (predict_x0_ ? t.alpha : t.sigma) * terms.h_phi_1;
  HostTensor x = map_samples(sample, m0, [&](float xv, float m) { return sample_scale * xv - output_scale * m; });
  if (differences.empty()) return x;

  const std::size_t count = differences.size();
  const std::vector<float> rhos =
      order == 2 ? std::vector<float>{0.5f}
                 : solve_small(power_rows(terms.ratios, count, count),
                               std::vector<double>(terms.targets.begin(), terms.targets.begin() + count));
  HostTensor residual = map_samples(differences[0], [&](float d) { return rhos[0] * d; });
  for (std::size_t k = 1; k < count; ++k) {
    residual = map_samples(residual, differences[k], [&](float r, float d) { return r + rhos[k] * d; });
  }
  const float residual_scale = (predict_x0_ ? t.alpha : t.sigma) * terms.b_h;
  return map_samples(x, residual, [residual_scale](float xv, float r) { return xv - residual_scale * r; });
}

HostTensor UniPcScheduler::corrector(const HostTensor& converted, const HostTensor& last_sample, int index,
                                     int order) const {
  const VpCoefficients t = vp_at(index);
  const VpCoefficients s0 = vp_at(index - 1);
  const float h = t.lambda - s0.lambda;
  const HostTensor& m0 = output_back(0);
  std::vector<float> ratios;
  std::vector<HostTensor> differences;
  for (int i = 1; i < order; ++i) {
    const float ratio = (vp_at(index - (i + 1)).lambda - s0.lambda) / h;
    ratios.push_back(ratio);
    differences.push_back(map_samples(output_back(i), m0, [ratio](float mi, float m) { return (mi - m) / ratio; }));
  }
  const UpdateTerms terms = update_terms(h, ratios, order);
  const auto size = static_cast<std::size_t>(order);
  const std::vector<float> rhos = order == 1
                                      ? std::vector<float>{0.5f}
                                      : solve_small(power_rows(terms.ratios, size, size),
                                                    std::vector<double>(terms.targets.begin(), terms.targets.end()));
  const float sample_scale = predict_x0_ ? t.sigma / s0.sigma : t.alpha / s0.alpha;
  const float output_scale = (predict_x0_ ? t.alpha : t.sigma) * terms.h_phi_1;
  const float correction_scale = (predict_x0_ ? t.alpha : t.sigma) * terms.b_h;
  HostTensor correction =
      map_samples(converted, m0, [&](float model_t, float m) { return rhos.back() * (model_t - m); });
  for (std::size_t k = 0; k < differences.size(); ++k) {
    correction = map_samples(correction, differences[k], [&](float c, float d) { return rhos[k] * d + c; });
  }
  return map_samples(last_sample, m0, correction, [&](float x, float m, float c) {
    return sample_scale * x - output_scale * m - correction_scale * c;
  });
}

HostTensor UniPcScheduler::step_sample(const HostTensor& model_output, double timestep, const HostTensor& sample,
                                       TorchGenerator* /*generator*/) {
  const int index = step_index_for(timestep);
  const bool use_corrector =
      index > 0 && !last_sample_.data.empty() &&
      std::find(disable_corrector_.begin(), disable_corrector_.end(), index - 1) == disable_corrector_.end();
  HostTensor converted =
      predict_x0_ ? to_data_prediction(model_output, sample, index) : to_noise_prediction(model_output, sample, index);
  const HostTensor corrected = use_corrector ? corrector(converted, last_sample_, index, this_order_) : sample;
  remember_output(std::move(converted));

  const int steps = static_cast<int>(timesteps_.size());
  const int order = lower_order_final_ ? std::min(solver_order_, steps - index) : solver_order_;
  this_order_ = std::min(order, lower_order_nums_ + 1);
  last_sample_ = corrected;
  HostTensor prev = predictor(corrected, index, this_order_);
  if (lower_order_nums_ < solver_order_) ++lower_order_nums_;
  advance_step_index();
  return prev;
}

}  // namespace websd::schedulers
