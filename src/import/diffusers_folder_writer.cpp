#include "import/diffusers_folder_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "import/checkpoint_tokenizer.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/safetensors_writer.h"
#include "io/staged_folder.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  atomic_write_file(path.string(), [&](std::ostream& out) { out << text; });
}

// The file names diffusers' and transformers' save_pretrained use.
std::string weights_file_name(const CheckpointComponent& component) {
  return component.library() == "transformers" ? "model.safetensors" : "diffusion_pytorch_model.safetensors";
}

void refuse_output_in_source(const DiffusersCheckpoint& source, const std::string& out) {
  std::error_code error;
  const fs::path target = fs::weakly_canonical(out, error);
  const fs::path root = fs::weakly_canonical(source.dir(), error);
  const auto [mismatch, unused] = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
  if (mismatch == root.end() || target == root) {
    throw Error("convert",
                out + ": lies inside the checkpoint being converted, " + source.dir() + " (choose another --out)");
  }
  (void)unused;
}

}  // namespace

DiffusersFolderWriteReport diffusers_folder_write(const DiffusersCheckpoint& source, const std::string& out,
                                                  bool replace) {
  refuse_output_in_source(source, out);
  StagedFolder folder(out, replace, "convert");
  const fs::path& root = folder.path();
  DiffusersFolderWriteReport report;
  // Processors (feature_extractor) are not carried over: the index says they are absent.
  nlohmann::json index = source.model_index();
  for (const CheckpointComponent& component : source.components()) {
    if (component.kind() == ComponentKind::kProcessor) index[component.name()] = {nullptr, nullptr};
  }
  write_text(root / "model_index.json", json_dump(index, 2) + "\n");
  folder.create(root / "tokenizer");
  for (const auto& [name, content] : checkpoint_tokenizer_files(source)) write_text(root / "tokenizer" / name, content);
  if (!source.scheduler_config().is_null()) {
    folder.create(root / "scheduler");
    write_text(root / "scheduler" / "scheduler_config.json", json_dump(source.scheduler_config(), 2) + "\n");
  }
  for (const CheckpointComponent& component : source.components()) {
    if (!component.has_weights()) continue;
    const fs::path dir = root / component.name();
    folder.create(dir);
    write_text(dir / "config.json", json_dump(component.config(), 2) + "\n");
    std::vector<SafetensorsTensorSpec> specs;
    std::vector<const TensorLocation*> locations;
    for (const auto& [name, location] : component.tensors()) {
      specs.push_back({name, location.entry->dtype, location.entry->shape});
      locations.push_back(&location);
      report.bytes += location.entry->byte_size();
    }
    safetensors_write_streamed((dir / weights_file_name(component)).string(), specs,
                               [&](std::size_t index, std::span<std::byte> bytes) {
                                 const TensorLocation& location = *locations[index];
                                 const std::span<const std::byte> data = location.file->bytes(*location.entry);
                                 std::memcpy(bytes.data(), data.data(), data.size());
                                 location.file->release_pages(*location.entry);
                               },
                               {{"format", "pt"}});
    report.tensors += specs.size();
  }
  folder.commit();
  return report;
}

}  // namespace websd
