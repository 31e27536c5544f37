// The image sizes one artifact holds (`websd build --size WxH`, repeated): every function whose
// shapes depend on the image size is built once per size, the others (the text encoders) once,
// all reading one copy of the weights. The first size is the artifact's default and keeps the
// plain symbols (unet_cfg, vae_decode, ...); another size's functions carry it as a suffix
// (unet_cfg_768x512), so an artifact of one size reads as before. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace websd::artifact {

struct ImageSize {
  std::int64_t width = 0;
  std::int64_t height = 0;
  bool operator==(const ImageSize&) const = default;
};

// "768x512".
std::string image_size_text(const ImageSize& size);
// "768x512, 512x768".
std::string image_sizes_text(const std::vector<ImageSize>& sizes);
// "WxH" with positive decimal integers (an optional 'X' for 'x'); anything else: nullopt.
std::optional<ImageSize> parse_image_size(std::string_view text);

// The symbol of `role` built for `size` in an artifact whose default (first) size is `default_size`.
std::string sized_symbol(std::string_view role, const ImageSize& size, const ImageSize& default_size);
// The role of a symbol: its name without a size suffix ("unet_cfg_768x512" -> "unet_cfg").
std::string_view symbol_role(std::string_view symbol);

}  // namespace websd::artifact
