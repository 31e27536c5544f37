#!/usr/bin/env bash
# The GPU check (issue 35; the CUDA target joins it later), in two halves, because the GPU machine
# is another distribution with no package registry and takes 64 MiB with each call:
#
#   bash scripts/gpu-check.sh prepare [DIFFUSERS_SRC.tar.xz]   # here, after scripts/build.sh and
#                                                              # scripts/build-wasm.sh: fills build-gpu/
#   bash scripts/gpu-check.sh run [RUNS] [PARTS]               # there, with build-gpu carried: the checks
#                                                              # (PARTS: kernels,websd,torch by default;
#                                                              # a device call is 10 minutes at most)
#
# `prepare` packs into build-gpu/ (ignored by git) what the GPU machine lacks: the websd binary and
# the shared libraries it links (not the C library: the machine's own is used), the WebAssembly
# runtime, Dawn for Node with node itself and the Vulkan loader (../shared/tools/webgpu-gpu-carry.sh),
# the fixture model and its references, and PyTorch's baseline script with diffusers' source (an
# archive of diffusers' src/diffusers: the GPU machine has PyTorch and transformers, not diffusers;
# without it the PyTorch rows are skipped, saying so). It prints the size that will travel.
#
# `run` unpacks them and runs, printing each part's output and then one summary table:
#   1. the WGSL kernel suite and the bridge tests on the GPU (node --test web/tests): every family
#      of every tier the adapter offers (one it lacks is skipped, saying so);
#   2. the fixture's parity through a webgpu artifact per kernel tier (bench/webgpu/on_gpu_machine.sh:
#      seeded euler_a txt2img against diffusers' image, each network against float64 references);
#   3. full-size random SD 1.5 at 512x512 built for webgpu and timed by websd bench per tier (RUNS runs);
#   4. PyTorch + diffusers on the same GPU in the same call (f32, f16 eager, f16 torch.compile).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-gpu

prepare() {
  local diffusers=${1:-}
  local websd=build/src/app/websd runtime=build-wasm/src/web_runtime shared=../shared
  [[ -x $websd ]] || { echo "gpu-check: no $websd: run scripts/build.sh first" >&2; exit 2; }
  [[ -f $runtime/websd_web.wasm ]] || { echo "gpu-check: no $runtime: run scripts/build-wasm.sh first" >&2; exit 2; }
  [[ -d $shared/tools && -d $shared/fixtures/tiny-sd15 ]] ||
    { echo "gpu-check: needs ../shared (tools and fixtures) beside the checkout" >&2; exit 2; }
  rm -rf "$out" && mkdir -p "$out/lib" "$out/web_runtime" "$out/fixtures"
  xz -T2 -6 -c "$websd" >"$out/websd.xz"
  # Every library websd links but the C library and its loader, which must be the machine's own.
  ldd "$websd" | awk '$3 ~ /^\// {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$out/lib/"; done
  tar -cf - -C "$out" lib | xz -T2 -6 >"$out/lib.tar.xz" && rm -rf "$out/lib"
  cp "$runtime/websd_web.js" "$runtime/websd_web.wasm" "$out/web_runtime/"
  tar -cf - -C "$shared/fixtures" tiny-sd15 | xz -T2 -6 >"$out/fixtures/tiny-sd15.tar.xz"
  bash "$shared/tools/webgpu-gpu-carry.sh" "$out/webgpu" web/node_modules >/dev/null
  cp "$shared/tools/torch_sd15.py" "$out/"
  if [[ -n $diffusers ]]; then cp "$diffusers" "$out/diffusers.tar.xz"; fi
  echo "gpu-check: $out/ holds $(du -sh "$out" | cut -f1); with the tracked tree" \
    "$(git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {printf "%.1f MiB", s / 1048576}'), under 64 MiB in all:" \
    "run 'bash scripts/gpu-check.sh run' there carrying $out"
}

run() {
  local runs=${1:-5} parts=${2:-kernels,websd,torch} work=/tmp/websd-gpu-check
  mkdir -p "$work" /tmp/websd-gpu-lib
  # shellcheck disable=SC1091
  source "$out/webgpu/env.sh" >/dev/null 2>&1
  tar -xJf "$out/lib.tar.xz" -C /tmp/websd-gpu-lib
  export LD_LIBRARY_PATH=/tmp/websd-gpu-lib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export WEBSD_WEB_RUNTIME=$PWD/$out/web_runtime
  local websd=$work/websd
  xz -dc "$out/websd.xz" >"$websd" && chmod +x "$websd"
  tar -xJf "$out/fixtures/tiny-sd15.tar.xz" -C "$work"
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
  echo "== gpu-check on $gpu, websd $(git rev-parse --short HEAD 2>/dev/null || echo '(no git)')"
  "$websd" --version

  local kernels=skipped
  if [[ $parts == *kernels* ]]; then
    echo "== 1. kernels and bridge on the GPU, every tier the adapter offers"
    kernels=$(cd web && node --test tests/ 2>&1 | tee "$work/kernels.log" | grep -E '^# (tests|pass|fail|skipped)' | tr '\n' ' ')
    grep -E 'rel L2|^not ok|# SKIP' "$work/kernels.log" | grep -E '_sgmat|not ok|SKIP' | head -n 30 || true
    echo "kernels: $kernels"
  fi

  : >"$work/websd.log"
  if [[ $parts == *websd* ]]; then
    echo "== 2 and 3. fixture parity and SD 1.5, per tier (bench/webgpu/on_gpu_machine.sh)"
    bash bench/webgpu/on_gpu_machine.sh "$websd" "$work" "$work/run" "$runs" 2>&1 | grep -v '^Warning' | tee "$work/websd.log"
  fi

  local torch=/opt/torch/.venv/bin/python3
  [[ -x $torch ]] || torch=python3
  if [[ $parts != *torch* ]]; then
    :
  elif [[ -f $out/diffusers.tar.xz ]]; then
    echo "== 4. PyTorch + diffusers on the same GPU"
    mkdir -p "$work/py" && tar -xJf "$out/diffusers.tar.xz" -C "$work/py" --strip-components=1  # src/diffusers -> diffusers
    PYTHONPATH=$work/py "$torch" "$out/torch_sd15.py" --compile 2>&1 | grep '^{' | tail -n 1 | tee "$work/torch.json"
  else
    echo "PyTorch rows skipped: no diffusers source was prepared (bash scripts/gpu-check.sh prepare DIFFUSERS_SRC.tar.xz)"
  fi

  echo "== summary ($gpu)"
  printf '%-34s %s\n' "kernels (every tier offered)" "$kernels"
  grep -E '^-- tier|kernel tier|unet_step_cfg|vae_decode|text_encoder|UNet|VAE|text|peak' "$work/websd.log" |
    grep -iE 'tier| s |ms|GiB' | head -n 60 | sed 's/^/websd  /' || true
  [[ -s $work/torch.json ]] && node -e "const r = JSON.parse(require('fs').readFileSync('$work/torch.json', 'utf8'));
    for (const [k, v] of Object.entries(r)) console.log('torch  ' + k.padEnd(28) + ' ' + (typeof v === 'number' ? v.toFixed(2) : v));"
  return 0
}

case ${1:-} in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  *) echo "usage: gpu-check.sh prepare [DIFFUSERS_SRC.tar.xz] | run [RUNS] [kernels,websd,torch]" >&2; exit 2 ;;
esac
