#include "import/diffusers_checkpoint.h"

#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "core/error.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "io/safetensors_reader.h"

namespace websd {
namespace {

bool is_string_or_null(const nlohmann::json& value) { return value.is_string() || value.is_null(); }

// StableDiffusionPipeline's optional components: users often delete their folders, and diffusers
// then loads the pipeline without them, so a missing folder leaves them out instead of failing.
bool is_optional_component(std::string_view name) {
  return name == "safety_checker" || name == "feature_extractor" || name == "image_encoder";
}

// model_index.json's classes: websd runs SD 1.x/2.x text-to-image and image-to-image pipelines; a
// checkpoint of another pipeline (SDXL, video, upscaling) or with another network class is refused
// here, by name, rather than by a confusing config or weight error later.
void check_classes(const DiffusersCheckpoint& checkpoint, const std::string& index_path) {
  static const std::set<std::string> pipelines = {"",
                                                  "StableDiffusionPipeline",
                                                  "StableDiffusionImg2ImgPipeline",
                                                  "StableDiffusionInpaintPipeline",
                                                  "StableDiffusionPipelineSafe",
                                                  "OnnxStableDiffusionPipeline"};
  if (pipelines.count(checkpoint.pipeline_class()) == 0) {
    throw Error("import", index_path + ": _class_name " + safetensors_quote_name(checkpoint.pipeline_class()) +
                              " is not a Stable Diffusion 1.x/2.x pipeline (websd runs StableDiffusionPipeline "
                              "checkpoints)");
  }
  static const std::map<std::string, std::set<std::string>> classes = {
      {"unet", {"UNet2DConditionModel"}},
      {"vae", {"AutoencoderKL"}},
      {"text_encoder", {"CLIPTextModel", "CLIPTextModelWithProjection"}},
      {"tokenizer", {"CLIPTokenizer", "CLIPTokenizerFast"}}};
  for (const auto& component : checkpoint.components()) {
    const auto expected = classes.find(component.name());
    if (expected == classes.end() || expected->second.count(component.class_name()) != 0) continue;
    std::string supported;
    for (const auto& name : expected->second) supported += (supported.empty() ? "" : ", ") + name;
    throw Error("import", index_path + ": component " + safetensors_quote_name(component.name()) + " is a " +
                              safetensors_quote_name(component.class_name()) + "; websd supports " + supported);
  }
}

// PyTorch's formats: a zip archive (torch.save since 1.6) or a bare pickle stream (protocol 2+), or
// their usual extensions; a file that starts like safetensors (8-byte length, then '{') is not one.
void refuse_pickle(const std::string& path) {
  const std::string start = InputFile("import", path, input_kinds::kSafetensors).read_prefix(9);
  const auto* head = reinterpret_cast<const unsigned char*>(start.data());
  const std::size_t got = start.size();
  if (got == 9 && head[8] == '{') return;
  const bool zip = got >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4;
  const bool pickle = got >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
  const std::string extension = std::filesystem::path(path).extension().string();
  const bool named = extension == ".ckpt" || extension == ".pt" || extension == ".pth" || extension == ".bin";
  if (!zip && !pickle && !named) return;
  throw Error("import", path +
                            ": a PyTorch pickle checkpoint, which websd does not read: loading a pickle can run any "
                            "code it contains. Convert it to safetensors with Python first, e.g. "
                            "`python -c \"import torch, safetensors.torch as s; d = torch.load('model.ckpt', "
                            "weights_only=True, map_location='cpu'); d = d.get('state_dict', d); s.save_file({k: "
                            "v.contiguous() for k, v in d.items() if isinstance(v, torch.Tensor)}, "
                            "'model.safetensors')\"` (weights_only=True refuses code), then pass the .safetensors");
}

}  // namespace

DiffusersCheckpoint DiffusersCheckpoint::open(const std::string& path, const ImportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    for (const auto& [option, given] :
         {std::pair{"--prediction-type", !options.prediction_type.empty()},
          std::pair{"--config", !options.ldm_config.empty()}, std::pair{"--use-ema", options.use_ema}}) {
      if (given) {
        throw Error("import", path + ": " + option +
                                  " applies to single-file checkpoints; a diffusers folder's configs say it "
                                  "(edit them, or pass --scheduler-config)");
      }
    }
    return open_folder(path, options);
  }
  if (!fs::exists(path, error)) {
    throw Error("import", path +
                              ": no such file or folder (pass a diffusers model folder or a single-file "
                              ".safetensors checkpoint)");
  }
  if (!fs::is_regular_file(path, error)) {
    throw Error("import", path +
                              ": neither a folder nor a regular file (pass a diffusers model folder or a "
                              "single-file .safetensors checkpoint)");
  }
  refuse_pickle(path);
  return open_single_file(path, options);
}

DiffusersCheckpoint DiffusersCheckpoint::open_folder(const std::string& dir, const ImportOptions& options) {
  namespace fs = std::filesystem;
  DiffusersCheckpoint checkpoint;
  checkpoint.dir_ = dir;
  const std::string index_path = dir + "/model_index.json";
  if (!fs::exists(index_path)) {  // a FIFO or a folder is named as such by json_read_file
    throw Error("import", index_path +
                              ": missing; websd reads diffusers folders (as save_pretrained writes them), "
                              "which name their components in model_index.json");
  }
  checkpoint.model_index_ = json_read_file(index_path);
  const auto& index = checkpoint.model_index_;
  if (!index.is_object()) throw Error("import", index_path + ": is not a JSON object");
  if (const auto it = index.find("_class_name"); it != index.end() && it->is_string()) {
    checkpoint.pipeline_class_ = it->get<std::string>();
  }
  for (const auto& [name, value] : index.items()) {
    // "_class_name", "_diffusers_version", ... describe the pipeline; plain values are options
    // such as "requires_safety_checker". Components are [library, class] pairs.
    if (name.empty() || name[0] == '_' || !value.is_array()) continue;
    const auto where = index_path + ": component " + safetensors_quote_name(name);
    if (value.size() != 2 || !is_string_or_null(value[0]) || !is_string_or_null(value[1])) {
      throw Error("import", where + " is not a [library, class] pair");
    }
    if (value[1].is_null()) continue;  // an optional component left out ([null, null])
    if (name.find('/') != std::string::npos || name == "..") throw Error("import", where + " is not a folder name");
    ComponentInfo info{name, value[0].is_string() ? value[0].get<std::string>() : "", value[1].get<std::string>(),
                       dir + "/" + name};
    if (!fs::is_directory(info.dir)) {
      if (is_optional_component(name)) continue;
      throw Error("import",
                  where + " (" + info.class_name + ") has no folder " + info.dir + " (copy the whole model folder)");
    }
    checkpoint.components_.push_back(CheckpointComponent::open(std::move(info), options.variant));
  }
  if (checkpoint.components_.empty()) throw Error("import", index_path + ": lists no components");
  check_classes(checkpoint, index_path);
  checkpoint.tokenizer_.folder = options.tokenizer_dir.empty() ? dir : options.tokenizer_dir;
  checkpoint.tokenizer_.origin = checkpoint.tokenizer_.folder;
  const std::string scheduler =
      options.scheduler_config.empty() ? dir + "/scheduler/scheduler_config.json" : options.scheduler_config;
  if (!options.scheduler_config.empty() || fs::exists(scheduler)) {
    checkpoint.scheduler_config_ = json_read_file(scheduler);
    checkpoint.scheduler_origin_ = scheduler;
  }
  return checkpoint;
}

const CheckpointComponent* DiffusersCheckpoint::find(std::string_view name) const {
  for (const auto& component : components_) {
    if (component.name() == name) return &component;
  }
  return nullptr;
}

const CheckpointComponent& DiffusersCheckpoint::component(std::string_view name) const {
  if (const auto* found = find(name)) return *found;
  std::string listed;
  for (const auto& component : components_) listed += (listed.empty() ? "" : ", ") + component.name();
  throw Error("import", dir_ + "/model_index.json: has no component " + safetensors_quote_name(name) + " (it lists " +
                            listed + ")");
}

}  // namespace websd
