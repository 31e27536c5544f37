// How checkpoint tensor names map to the one canonical form that the rest of websd uses.
//
// CLIP text encoders are stored two ways: real SD checkpoints (and transformers before v5) name
// their tensors "text_model.encoder.layers.0...", transformers 5 saves them without the
// "text_model." prefix. websd's canonical form CARRIES the prefix: names under the CLIP text
// transformer's submodules (embeddings., encoder., final_layer_norm.) get "text_model." prepended;
// names that already have it, and names outside it (text_projection.weight), stay as they are.
// AutoencoderKL checkpoints saved before diffusers 0.14 name the mid-block attention's projections
// query/key/value/proj_attn; the canonical names are today's to_q/to_k/to_v/to_out.0.
// Every other component's names are canonical as stored.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace websd {

enum class TensorNaming {
  kAsStored,        // diffusers models (UNet, VAE, ...)
  kClipTextPrefix,  // CLIPTextModel / CLIPTextModelWithProjection: canonical names carry "text_model."
  kAutoencoderKl,   // AutoencoderKL: the mid blocks' attention as diffusers < 0.14 saved it (query, key,
                    // value, proj_attn) is renamed to_q, to_k, to_v, to_out.0, as diffusers does at load
};

// The naming rule that applies to a component of this class ("CLIPTextModel" -> kClipTextPrefix).
TensorNaming tensor_naming_for_class(std::string_view class_name);
// The canonical form of a stored (or already canonical) name.
std::string canonical_tensor_name(TensorNaming naming, std::string_view name);
// True for non-learned buffers that some writers save beside the parameters
// ("text_model.embeddings.position_ids"): a checkpoint may have them or not.
bool is_buffer_tensor_name(std::string_view name);
// Buffers, and tensors of a larger model that the network does not use (a CLIPModel's vision tower
// and projections beside its text transformer): present or not, never an error.
bool is_unused_tensor_name(TensorNaming naming, std::string_view name);

}  // namespace websd
