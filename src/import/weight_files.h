// Finds the safetensors files that hold one model component's weights inside a diffusers folder,
// following the names that diffusers and transformers write:
//   diffusion_pytorch_model.safetensors / model.safetensors             one file
//   <stem>.safetensors.index.json + the shards its weight_map names      sharded
//   <stem>.fp16.safetensors, <stem>.safetensors.index.fp16.json          a variant ("fp16", "bf16", ...)
// A folder that holds only PyTorch pickles (.bin/.ckpt/.pt) gets an error that says how to convert.
// Pure functions of the file system; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace websd {

struct WeightFiles {
  std::string index_path;                         // the sharded index; empty for a single file
  std::vector<std::string> shard_paths;           // every weights file, in the order the index names them
  std::string variant;                            // "" for the plain files, else e.g. "fp16"
  std::map<std::string, std::size_t> weight_map;  // sharded only: stored tensor name -> shard_paths index
};

// `variant` empty: the plain files, or the only variant present if there are no plain files.
// Throws websd::Error naming the folder, what was looked for and how to fix it.
WeightFiles find_weight_files(const std::string& component_dir, const std::string& variant);

}  // namespace websd
