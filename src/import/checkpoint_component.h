// One component of a diffusers checkpoint folder (text_encoder, unet, vae, tokenizer, scheduler).
// Model components carry their config.json and their weights, memory-mapped through
// SafetensorsFile (one file or the shards of a sharded checkpoint) and never copied: opening reads
// only headers, and tensor data pages are touched only when a tensor is read.
// Tensor names are canonical (see tensor_names.h): a CLIP text encoder's names always carry the
// "text_model." prefix, whether the file stores it or not; lookups accept either form.
// Tokenizer, scheduler and processor components expose only their folder: other modules read them.
// Ownership: owns its mapped files; TensorLocation pointers stay valid while the component lives
// (also across moves). Thread-safety: immutable after open; concurrent reads are safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_tensor.h"
#include "core/param_spec.h"
#include "import/param_check.h"
#include "import/tensor_names.h"
#include "io/safetensors_reader.h"

namespace websd {

enum class ComponentKind { kModel, kTokenizer, kScheduler, kProcessor };

// What model_index.json says about a component: {"unet": ["diffusers", "UNet2DConditionModel"]}.
struct ComponentInfo {
  std::string name;
  std::string library;
  std::string class_name;
  std::string dir;
};

// Where one tensor lives: its shard and its entry in that shard's header.
struct TensorLocation {
  const SafetensorsFile* file = nullptr;
  const SafetensorsEntry* entry = nullptr;
};

// A parameter of a network matched to the tensor that holds it (see CheckpointComponent::bind).
struct BoundParam {
  ParamSpec spec;
  TensorLocation location;
};

// Sizes that `websd import` reports; computed from headers only.
struct ComponentStats {
  std::size_t tensors = 0;
  std::size_t buffers = 0;                    // of which non-learned buffers (position_ids)
  std::uint64_t parameters = 0;               // elements of the non-buffer tensors
  std::map<std::string, std::size_t> dtypes;  // "F16" -> tensor count
  std::uint64_t bytes_on_disk = 0;            // weights files (not the index)
};

class CheckpointComponent {
 public:
  // `variant`: see find_weight_files. Throws websd::Error naming the file for a missing config,
  // missing/unreadable weights, a broken shard index or duplicate canonical names.
  static CheckpointComponent open(ComponentInfo info, const std::string& variant = "");
  // A model component whose tensors are views into `file` (a single-file checkpoint): each entry of
  // `views` names a canonical tensor and spans bytes of `file`'s data section (a whole stored tensor,
  // rows of one, or one under another shape). `origin` names the weights in messages ("x.safetensors
  // (unet)"), `config_origin` where the config came from.
  static CheckpointComponent from_views(ComponentInfo info, nlohmann::json config, std::string config_origin,
                                        std::shared_ptr<const SafetensorsFile> file,
                                        std::vector<SafetensorsEntry> views, std::string origin);

  const std::string& name() const { return info_.name; }
  const std::string& library() const { return info_.library; }
  const std::string& class_name() const { return info_.class_name; }
  const std::string& dir() const { return info_.dir; }
  ComponentKind kind() const { return kind_; }
  bool has_weights() const { return kind_ == ComponentKind::kModel; }

  // config.json; throws websd::Error for a component that has none (tokenizer, scheduler).
  const nlohmann::json& config() const;
  // Where config() came from, for messages: "<dir>/config.json", or how a single file's was read.
  const std::string& config_origin() const { return config_origin_; }
  TensorNaming naming() const { return naming_; }
  // True when the file stored some names without the canonical prefix (transformers 5 CLIP).
  bool names_were_normalised() const { return names_were_normalised_; }
  const std::string& variant() const { return variant_; }
  // The sharded-checkpoint index, or "" for a single weights file.
  const std::string& index_path() const { return index_path_; }
  const std::vector<std::shared_ptr<const SafetensorsFile>>& weight_files() const { return files_; }

  // Canonical names, sorted.
  std::vector<std::string> tensor_names() const;
  const std::map<std::string, TensorLocation, std::less<>>& tensors() const { return tensors_; }
  // Accepts canonical or stored names; nullptr if absent.
  const TensorLocation* find(std::string_view name) const;
  // Throws websd::Error naming the component's weights and the tensor if absent.
  const TensorLocation& at(std::string_view name) const;
  // F32, F16, BF16 (and F64) tensors, upcast to float32.
  HostTensor read_f32(std::string_view name) const;
  void read_f32_into(std::string_view name, std::span<float> out) const;
  ComponentStats stats() const;

  // Compares the checkpoint with the parameters a network expects (names in either form):
  // collects every missing, unexpected (buffers excepted), wrong-shape and non-float tensor.
  ParamCheck check(const std::vector<ParamSpec>& expected) const;
  // check(), then throws websd::Error with its summary unless it passed; returns the matches in
  // the order of `expected`.
  std::vector<BoundParam> bind(const std::vector<ParamSpec>& expected) const;

 private:
  CheckpointComponent() = default;
  void open_weights(const std::string& variant);
  void add_tensor(const SafetensorsFile& file, const SafetensorsEntry& entry);
  // What to call the weights in messages: the single file or the index.
  std::string weights_origin() const;

  ComponentInfo info_;
  ComponentKind kind_ = ComponentKind::kModel;
  nlohmann::json config_;
  std::string config_origin_;
  TensorNaming naming_ = TensorNaming::kAsStored;
  bool names_were_normalised_ = false;
  std::string variant_;
  std::string index_path_;
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  // Entries made for views (single files); shared so TensorLocation pointers survive copies and moves.
  std::shared_ptr<const std::vector<SafetensorsEntry>> views_;
  std::string origin_;  // views: what to call the weights in messages
  std::map<std::string, TensorLocation, std::less<>> tensors_;
};

// Tokenizer, scheduler and image-processor classes have no weights; everything else is a model.
ComponentKind component_kind_for_class(std::string_view class_name);

}  // namespace websd
