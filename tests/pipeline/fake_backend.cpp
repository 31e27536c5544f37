#include "fake_backend.h"

namespace websd::test {

FakeBackend::FakeBackend() {
  info_.name = "fake";
  info_.sample_height = 4;  // default 32x32 images: fast tests
  info_.sample_width = 4;
}

HostTensor FakeBackend::encode_text(const std::vector<std::int64_t>& ids, std::int64_t batch) {
  text_calls.push_back(ids);
  const std::int64_t tokens = static_cast<std::int64_t>(ids.size()) / batch;
  HostTensor context({batch, tokens, hidden});
  for (std::int64_t row = 0; row < batch; ++row) {
    std::int64_t sum = 0;
    for (std::int64_t t = 0; t < tokens; ++t) sum += ids[static_cast<std::size_t>(row * tokens + t)];
    std::fill_n(context.data.begin() + row * tokens * hidden, tokens * hidden,
                static_cast<float>(sum) / static_cast<float>(tokens) / 100000.0f);
  }
  return context;
}

HostTensor FakeBackend::unet_on_host(const HostTensor& sample, double timestep, const HostTensor& context) {
  unet_calls.push_back({sample, timestep, context});
  HostTensor prediction(sample.shape);
  const std::int64_t row_size = sample.numel() / sample.shape[0];
  const std::int64_t context_row = context.numel() / context.shape[0];
  for (std::int64_t i = 0; i < sample.numel(); ++i) {
    const std::int64_t row = i / row_size;
    prediction.data[static_cast<std::size_t>(i)] =
        0.1f * sample.data[static_cast<std::size_t>(i)] + context.data[static_cast<std::size_t>(row * context_row)];
  }
  return prediction;
}

HostTensor FakeBackend::vae_decode_on_host(const HostTensor& latents) {
  decode_calls.push_back(latents);
  const std::int64_t h = latents.shape[2], w = latents.shape[3], f = info_.vae_scale_factor;
  HostTensor image({1, 3, h * f, w * f});
  for (std::int64_t c = 0; c < 3; ++c) {
    for (std::int64_t y = 0; y < h * f; ++y) {
      for (std::int64_t x = 0; x < w * f; ++x) {
        image.data[static_cast<std::size_t>((c * h * f + y) * w * f + x)] =
            latents.data[static_cast<std::size_t>((c * h + y / f) * w + x / f)];
      }
    }
  }
  return image;
}

std::pair<HostTensor, HostTensor> FakeBackend::vae_encode(const HostTensor& image) {
  encode_calls.push_back(image);
  const std::int64_t f = info_.vae_scale_factor, h = image.shape[2] / f, w = image.shape[3] / f;
  const std::int64_t channels = info_.latent_channels;
  HostTensor mean({1, channels, h, w});
  for (std::int64_t c = 0; c < channels; ++c) {
    for (std::int64_t y = 0; y < h * f; ++y) {
      for (std::int64_t x = 0; x < w * f; ++x) {
        mean.data[static_cast<std::size_t>((c * h + y / f) * w + x / f)] +=
            image.data[static_cast<std::size_t>(((c % 3) * h * f + y) * w * f + x)] / static_cast<float>(f * f);
      }
    }
  }
  HostTensor logvar(mean.shape, std::vector<float>(mean.data.size(), -2.0f));
  return {mean, logvar};
}

}  // namespace websd::test
