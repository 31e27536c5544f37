// `websd build --target NAME`: compiles a diffusers checkpoint into an artifact for one target
// (target.h, target_registry.h; the format is src/artifact/FORMAT.md). The networks are built for
// each image size asked for (artifact/image_sizes.h: the first keeps the plain symbols), in the
// batch sizes the pipeline calls them with (text encoder and UNet for batch 2 with classifier-free
// guidance and 1 without, VAE decoder and encoder for batch 1), merged into one module under unique
// symbols (clip, clip_b1, unet, unet_b1, unet_cfg, vae_decode, vae_encode, ...), and each
// function runs the target's pass list with optional IR dumps; then every op left must be one the
// target supports. Then:
//   - weights are transformed once: Q/K/V projections merged, weights the target stores in its own
//     layout packed, everything cast to the storage dtype; shared tensors (the UNet's batch
//     and image sizes) are written once;
//   - the target generates its kernels (for the CPU: C++ compiled into kernels/cpu_kernels.so);
//   - each function's launch list, memory plan and signature go into the manifest, with the model's
//     tokenizer and scheduler config as files.
// The artifact appears only when everything succeeded (ArtifactWriter). Single-threaded driver.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "artifact/image_sizes.h"
#include "compiler/target.h"
#include "core/dtype.h"
#include "import/diffusers_checkpoint.h"
#include "tuning/tuning_db.h"

namespace websd::compiler {

struct BuildOptions {
  std::shared_ptr<const DiffusersCheckpoint> checkpoint;  // a diffusers folder or a single file, opened
  std::string out;
  DType storage = DType::kF32;  // f32, f16 or bf16 weight storage
  DType compute = DType::kF32;  // convolutions, linear layers and attention, where the target offers a choice
  // The image sizes to build for, the first the artifact's default; none: the model's (UNet sample
  // size x VAE scale), as is a width or height of 0. Repeats are dropped.
  std::vector<artifact::ImageSize> sizes;
  // The target's kernel tiers to write (Target::tiers names); empty: all. The base tier is always written.
  std::vector<std::string> tiers;
  // The instruction set the CPU target's kernel library is built for (cpu::kCpuArchs); empty: x86-64.
  std::string cpu_arch;
  const tuning::TuningDb* tuning_db = nullptr;
  std::optional<std::string> key_file;               // AES-256 key: encrypt the weight shards
  std::optional<std::string> sign_key_file;          // Ed25519 private key (PEM): sign the manifest
  std::string dump_ir_dir;                           // empty: no IR dumps
  std::function<void(const std::string&)> progress;  // one line per step; may be empty
};

struct BuiltFunction {
  std::string symbol;
  std::size_t launches = 0;
  std::size_t generated_kernels = 0;
  std::int64_t unplanned_bytes = 0;
  std::int64_t arena_bytes = 0;
  std::int64_t peak_bytes = 0;
};

struct BuildReport {
  std::vector<BuiltFunction> functions;
  std::size_t weight_count = 0;
  std::uint64_t weight_bytes = 0;  // as stored
  std::size_t tuned = 0;           // tunable kernels that had a tuning record
  std::size_t tunable = 0;
  double kernel_compile_seconds = 0;
  std::vector<std::string> notes;  // from the passes
};

// Throws websd::Error for a bad checkpoint, size, dtype, key file, signing key, output path, an op the target
// does not support (naming it and the function), or a failed pass or kernel compilation; the output
// is then left as it was.
BuildReport build_artifact(const BuildOptions& options, const Target& target);

}  // namespace websd::compiler
