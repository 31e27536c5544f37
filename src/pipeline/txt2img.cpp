#include "pipeline/txt2img.h"

#include <algorithm>

#include "core/error.h"

namespace websd {

HostTensor latent_row(const HostTensor& latents, std::int64_t index) {
  if (latents.shape.empty() || index < 0 || index >= latents.shape[0]) {
    throw Error("pipeline",
                "row " + std::to_string(index) + " of latents " + shape_to_string(latents.shape) + " does not exist");
  }
  Shape row_shape = latents.shape;
  row_shape[0] = 1;
  const auto row_size = static_cast<std::ptrdiff_t>(shape_numel(row_shape));
  const auto begin = latents.data.begin() + index * row_size;
  return HostTensor(row_shape, std::vector<float>(begin, begin + row_size));
}

HostTensor txt2img_start_latents(const HostTensor& noise, const schedulers::Scheduler& scheduler) {
  // torch multiplies a float32 tensor by the sigma rounded to float32.
  const auto sigma = static_cast<float>(scheduler.init_noise_sigma());
  HostTensor latents = noise;
  std::transform(latents.data.begin(), latents.data.end(), latents.data.begin(),
                 [sigma](float value) { return value * sigma; });
  return latents;
}

}  // namespace websd
