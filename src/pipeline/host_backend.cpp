#include "pipeline/host_backend.h"

#include <memory>
#include <utility>

#include "core/error.h"
#include "pipeline/guidance.h"
#include "pipeline/image_tensor.h"

namespace websd {

const HostTensor& HostBackend::held(const DeviceTensor& tensor) const {
  return *std::static_pointer_cast<const HostTensor>(tensor.storage_for(this));
}

DeviceTensor HostBackend::hold(HostTensor tensor) const {
  Shape shape = tensor.shape;
  return DeviceTensor(this, std::move(shape), std::make_shared<const HostTensor>(std::move(tensor)));
}

DeviceTensor HostBackend::upload(const HostTensor& tensor) {
  if (tensor.numel() != shape_numel(tensor.shape)) {
    throw Error("pipeline", "cannot upload a tensor of " + std::to_string(tensor.numel()) + " values as " +
                                shape_to_string(tensor.shape));
  }
  return hold(tensor);
}

TensorDownload HostBackend::download(const DeviceTensor& tensor) {
  return TensorDownload([copy = held(tensor)] { return copy; });
}

DeviceTensor HostBackend::unet(const DeviceTensor& sample, double timestep, const DeviceTensor& context) {
  return hold(unet_on_host(held(sample), timestep, held(context)));
}

DeviceTensor HostBackend::unet_guided(const DeviceTensor& sample, double timestep, const DeviceTensor& context,
                                      double guidance_scale) {
  const HostTensor& single = held(sample);
  const HostTensor prediction = unet_on_host(stack_pair(single, single), timestep, held(context));
  Shape expected = single.shape;
  expected.at(0) = 2;
  if (prediction.shape != expected || prediction.numel() != shape_numel(expected)) {
    throw Error("pipeline",
                "UNet returned shape " + shape_to_string(prediction.shape) + ", expected " + shape_to_string(expected));
  }
  return hold(combine_guided(prediction, guidance_scale));
}

DeviceTensor HostBackend::vae_decode(const DeviceTensor& latents) { return hold(vae_decode_on_host(held(latents))); }

DeviceTensor HostBackend::image_to_rgba(const DeviceTensor& image) { return hold(decoded_to_rgba(held(image))); }

}  // namespace websd
