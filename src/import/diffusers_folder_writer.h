// Writes a checkpoint (a single file or a diffusers folder, opened) as a diffusers folder:
// model_index.json, text_encoder/ unet/ vae/ (config.json + one safetensors file each, the tensors'
// dtypes and bytes unchanged, canonical names: the text encoder's with "text_model."), tokenizer/
// (the checkpoint's tokenizer files) and scheduler/scheduler_config.json. The folder appears only
// when complete (StagedFolder); tensors are streamed one at a time. Thread-compatible.
#pragma once

#include <string>

#include "import/diffusers_checkpoint.h"

namespace websd {

struct DiffusersFolderWriteReport {
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;  // weights written
};

// Throws websd::Error for a destination that is a file or a non-empty folder (unless `replace`), an
// output inside the source, or an I/O failure (nothing is left behind then).
DiffusersFolderWriteReport diffusers_folder_write(const DiffusersCheckpoint& source, const std::string& out,
                                                  bool replace = false);

}  // namespace websd
