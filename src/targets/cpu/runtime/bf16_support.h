// Whether this CPU runs oneDNN's bf16 convolutions and matmuls natively (AVX512-BF16 or AMX): oneDNN
// makes bf16 primitives only there (its reference kernels refuse bf16 elsewhere too). What
// `--dtype bf16` needs; a CPU without it computes in f32.
#pragma once

namespace websd::cpu {

bool onednn_bf16_available();

}  // namespace websd::cpu
