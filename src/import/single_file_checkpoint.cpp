// DiffusersCheckpoint::open_single_file: a single-file LDM checkpoint as diffusers components whose
// tensors are views into the one mapped file (no copy: a fused OpenCLIP in_proj is cut into q/k/v by
// offsets, a 1x1 conv weight is read as Linear by shape), checked tensor by tensor against the layout
// its configs imply before anything runs.
#include <algorithm>
#include <set>

#include "core/error.h"
#include "import/diffusers_checkpoint.h"
#include "import/ldm_layout.h"
#include "import/single_file_architecture.h"
#include "models/clip_config.h"
#include "models/unet_config.h"
#include "models/vae_config.h"

namespace websd {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// LDM's DDPM keeps its noise schedule as buffers beside the networks; diffusers' scheduler computes it.
const std::set<std::string, std::less<>>& ddpm_buffers() {
  static const std::set<std::string, std::less<>> names = {"betas",
                                                           "alphas_cumprod",
                                                           "alphas_cumprod_prev",
                                                           "sqrt_alphas_cumprod",
                                                           "sqrt_one_minus_alphas_cumprod",
                                                           "log_one_minus_alphas_cumprod",
                                                           "sqrt_recip_alphas_cumprod",
                                                           "sqrt_recipm1_alphas_cumprod",
                                                           "posterior_variance",
                                                           "posterior_log_variance_clipped",
                                                           "posterior_mean_coef1",
                                                           "posterior_mean_coef2",
                                                           "lvlb_weights",
                                                           "logvar",
                                                           "model_ema.decay",
                                                           "model_ema.num_updates"};
  return names;
}

// Tensors a single file may hold that no network here uses: the schedule buffers, the EMA copy (or,
// with --use-ema, the plain UNet), CLIP's position_ids, OpenCLIP's projection/scale/mask and the text
// tower's layers after the one SD reads.
bool is_ignorable(std::string_view name, const ImportOptions& options, const SingleFileArchitecture& arch) {
  if (ddpm_buffers().count(name) != 0) return true;
  if (starts_with(name, kLdmEmaPrefix)) return !options.use_ema;
  if (options.use_ema && starts_with(name, kLdmUNetPrefix)) return true;
  if (starts_with(name, kLdmHfClipPrefix)) {
    return name.size() >= 13 && name.substr(name.size() - 13) == ".position_ids";
  }
  if (starts_with(name, kLdmOpenClipPrefix)) {
    const std::string_view rest = name.substr(std::string_view(kLdmOpenClipPrefix).size());
    if (rest == "text_projection" || rest == "logit_scale" || rest == "attn_mask") return true;
    constexpr std::string_view kBlocks = "transformer.resblocks.";
    if (starts_with(rest, kBlocks) && arch.unused_text_layers > 0) {
      const std::string_view index = rest.substr(kBlocks.size(), rest.find('.', kBlocks.size()) - kBlocks.size());
      std::int64_t layer = 0;
      for (const char c : index) layer = c >= '0' && c <= '9' ? layer * 10 + (c - '0') : -1 << 30;
      return layer >= arch.text_encoder.value("num_hidden_layers", std::int64_t{0});
    }
  }
  return false;
}

// Where an LDM tensor is stored: its name, LitEma's name for the UNet with --use-ema, or an old
// transformers layout of SD 1.x's CLIP without the "text_model." level.
const SafetensorsEntry* stored_entry(const SafetensorsFile& file, const LdmTensor& tensor, const ImportOptions& options,
                                     std::string& stored_name) {
  stored_name = tensor.component == "unet" && options.use_ema ? ldm_ema_name(tensor.name) : tensor.name;
  if (const SafetensorsEntry* entry = file.find(stored_name)) return entry;
  const std::string with = std::string(kLdmHfClipPrefix) + "text_model.";
  if (starts_with(tensor.name, with)) {
    const std::string without = kLdmHfClipPrefix + tensor.name.substr(with.size());
    if (const SafetensorsEntry* entry = file.find(without)) {
      stored_name = without;
      return entry;
    }
  }
  return nullptr;
}

struct Views {
  std::map<std::string, std::vector<SafetensorsEntry>> by_component;
  std::set<std::string, std::less<>> used;  // stored names
  ParamCheck check;
};

// Each LDM tensor checked (present, shape, float) and cut into its diffusers tensors.
Views cut_views(const SafetensorsFile& file, const std::vector<LdmTensor>& layout, const ImportOptions& options) {
  Views views;
  views.check.component = "single file";
  views.check.origin = file.path();
  for (const LdmTensor& tensor : layout) {
    std::string stored;
    const SafetensorsEntry* entry = stored_entry(file, tensor, options, stored);
    if (entry == nullptr) {
      views.check.problems.push_back({ParamProblem::Kind::kMissing, stored, file.path(), tensor.shape, {}, ""});
      continue;
    }
    views.used.insert(stored);
    if (entry->shape != tensor.shape) {
      views.check.problems.push_back(
          {ParamProblem::Kind::kWrongShape, stored, file.path(), tensor.shape, entry->shape, ""});
      continue;
    }
    if (!dtype_is_float(entry->dtype)) {
      views.check.problems.push_back({ParamProblem::Kind::kNotFloat, stored, file.path(), tensor.shape, entry->shape,
                                      std::string(dtype_name(entry->dtype))});
      continue;
    }
    std::uint64_t begin = entry->begin;
    for (const ParamSpec& part : tensor.parts) {
      SafetensorsEntry view{part.name, entry->dtype, part.shape, begin, 0};
      view.end = begin + view.numel() * dtype_size(entry->dtype);
      begin = view.end;
      views.by_component[tensor.component].push_back(std::move(view));
    }
  }
  return views;
}

std::map<std::string, std::string> embedded_tokenizer(const SafetensorsFile& file) {
  std::map<std::string, std::string> files;
  const std::string prefix = websd_tokenizer_metadata_key("");
  for (const auto& [key, value] : file.metadata()) {
    if (starts_with(key, prefix)) files[key.substr(prefix.size())] = value;
  }
  return files;
}

}  // namespace

DiffusersCheckpoint DiffusersCheckpoint::open_single_file(const std::string& path, const ImportOptions& options) {
  auto file = std::make_shared<const SafetensorsFile>(path);
  const SingleFileArchitecture arch = single_file_architecture(*file, options);
  const std::string origin = arch.config_source;
  const ClipTextConfig clip = clip_config_from_json(arch.text_encoder, origin + ": text_encoder");
  const UNetConfig unet = unet_config_from_json(arch.unet, origin + ": unet");
  const VaeConfig vae = vae_config_from_json(arch.vae, origin + ": vae");
  const std::vector<LdmTensor> layout = ldm_layout(clip, arch.text_layout, unet, vae);

  Views views = cut_views(*file, layout, options);
  std::size_t ema_tensors = 0;
  for (const SafetensorsEntry& entry : file->entries()) {
    if (!options.use_ema && starts_with(entry.name, kLdmEmaPrefix) && ddpm_buffers().count(entry.name) == 0) {
      ++ema_tensors;
    }
    if (views.used.count(entry.name) != 0 || is_ignorable(entry.name, options, arch)) continue;
    views.check.problems.push_back({ParamProblem::Kind::kUnexpected, entry.name, file->path(), {}, entry.shape, ""});
  }
  if (!views.check.ok()) {
    throw Error("import", views.check.summary() + " (an " + arch.family + " checkpoint as read from " + origin + ")");
  }

  DiffusersCheckpoint checkpoint;
  checkpoint.dir_ = path;
  checkpoint.single_file_ = true;
  checkpoint.family_ = arch.family;
  checkpoint.config_source_ = arch.config_source;
  checkpoint.notes_ = arch.notes;
  if (ema_tensors > 0) {
    checkpoint.notes_.push_back("ignored the " + std::to_string(ema_tensors) +
                                " EMA tensors (model_ema.*): pass --use-ema to run the UNet's EMA weights");
  }
  const std::string scheduler_class = arch.scheduler.value("_class_name", std::string("PNDMScheduler"));
  checkpoint.model_index_ = {{"_class_name", "StableDiffusionPipeline"},
                             {"feature_extractor", {nullptr, nullptr}},
                             {"requires_safety_checker", false},
                             {"safety_checker", {nullptr, nullptr}},
                             {"scheduler", {"diffusers", scheduler_class}},
                             {"text_encoder", {"transformers", "CLIPTextModel"}},
                             {"tokenizer", {"transformers", "CLIPTokenizer"}},
                             {"unet", {"diffusers", "UNet2DConditionModel"}},
                             {"vae", {"diffusers", "AutoencoderKL"}}};
  checkpoint.pipeline_class_ = "StableDiffusionPipeline";
  const std::vector<std::tuple<std::string, std::string, std::string, nlohmann::json>> networks = {
      {"text_encoder", "transformers", "CLIPTextModel", arch.text_encoder},
      {"unet", "diffusers", "UNet2DConditionModel", arch.unet},
      {"vae", "diffusers", "AutoencoderKL", arch.vae}};
  for (const auto& [name, library, class_name, config] : networks) {
    checkpoint.components_.push_back(
        CheckpointComponent::from_views({name, library, class_name, path}, config, origin + ": " + name, file,
                                        std::move(views.by_component[name]), path + " (" + name + ")"));
  }
  if (!options.tokenizer_dir.empty()) {
    checkpoint.tokenizer_.folder = options.tokenizer_dir;
    checkpoint.tokenizer_.origin = options.tokenizer_dir;
  } else if (auto files = embedded_tokenizer(*file); !files.empty()) {
    checkpoint.tokenizer_.files = std::move(files);
    checkpoint.tokenizer_.origin = path + " (metadata " + websd_tokenizer_metadata_key("*") + ")";
  } else {
    checkpoint.tokenizer_.bundled_pad = arch.tokenizer_pad;
    checkpoint.tokenizer_.origin = "websd's bundled CLIP vocabulary";
  }
  checkpoint.scheduler_config_ = arch.scheduler;
  checkpoint.scheduler_origin_ = arch.scheduler_origin;
  return checkpoint;
}

}  // namespace websd
