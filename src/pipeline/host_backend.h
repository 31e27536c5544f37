// A DiffusionBackend whose device is the host's memory: the CPU graph executor and the tests'
// fakes compute on host tensors, so their handles hold host tensors and their downloads are
// complete at once. Subclasses implement the networks on host tensors; guidance is combined and
// the image converted to RGBA on the host, in the float32 order the compiled functions follow.
#pragma once

#include "pipeline/diffusion_backend.h"

namespace websd {

class HostBackend : public DiffusionBackend {
 public:
  DeviceTensor upload(const HostTensor& tensor) final;
  TensorDownload download(const DeviceTensor& tensor) final;
  DeviceTensor unet(const DeviceTensor& sample, double timestep, const DeviceTensor& context) final;
  // unet_on_host on the batch (sample, sample), then combine_guided (guidance.h).
  DeviceTensor unet_guided(const DeviceTensor& sample, double timestep, const DeviceTensor& context,
                           double guidance_scale) final;
  DeviceTensor vae_decode(const DeviceTensor& latents) final;
  DeviceTensor image_to_rgba(const DeviceTensor& image) final;

 protected:
  // The networks on host tensors, with DiffusionBackend's shapes.
  virtual HostTensor unet_on_host(const HostTensor& sample, double timestep, const HostTensor& context) = 0;
  virtual HostTensor vae_decode_on_host(const HostTensor& latents) = 0;

 private:
  const HostTensor& held(const DeviceTensor& tensor) const;
  DeviceTensor hold(HostTensor tensor) const;
};

}  // namespace websd
