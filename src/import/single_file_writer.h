// Writes a checkpoint (a diffusers folder or a single file, opened) as one single-file .safetensors
// in the original LDM layout (ldm_names.h) that the A1111 webui, ComfyUI and stable-diffusion.cpp
// load. The text encoder layout follows the family: a quick_gelu CLIP is SD 1.x's
// (cond_stage_model.transformer.*), a gelu one SD 2.x's OpenCLIP (cond_stage_model.model.*, q/k/v
// fused into in_proj, plus one identity block after the last used one: SD 2.x reads the penultimate
// layer of its 24, so its files hold one block more than diffusers' 23). Tensors keep their dtypes
// (fused parts of different dtypes are widened to F32). The exact configs, scheduler config and
// tokenizer files go into the header's metadata (`websd.*`, other tools ignore them), so websd reads
// the file back into exactly the same model. Tensors are streamed one at a time; written atomically.
// Thread-compatible.
#pragma once

#include <functional>
#include <string>

#include "import/diffusers_checkpoint.h"

namespace websd {

struct SingleFileWriteOptions {
  // Record configs and tokenizer in the metadata; without them websd reads the file as any other
  // tool's (shapes, --config and the family's defaults).
  bool embed_configs = true;
};

struct SingleFileWriteReport {
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;  // file size
  std::string layout;       // "SD 1.x (CLIP)" or "SD 2.x (OpenCLIP)"
};

// Throws websd::Error for configs websd cannot lay out, an I/O failure (the destination is then
// left as it was), or an output path that is one of the source's files.
SingleFileWriteReport single_file_write(const DiffusersCheckpoint& source, const std::string& path,
                                        const SingleFileWriteOptions& options = {});

}  // namespace websd
