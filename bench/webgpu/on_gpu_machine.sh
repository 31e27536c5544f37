#!/usr/bin/env bash
# The webgpu target on a GPU machine (issue 20's figures; scripts/gpu-check.sh runs it after the
# WGSL kernel suite): the tiny fixture's seeded euler_a txt2img through a webgpu artifact against
# diffusers' image, then full-size random SD 1.5 (make-model --preset sd15) built for webgpu at
# 512x512 (f16 storage) and timed by websd bench, both per kernel tier.
#   usage: bench/webgpu/on_gpu_machine.sh WEBSD FIXTURES WORKDIR [RUNS]
# WEBSD: a websd binary; FIXTURES: a folder holding tiny-sd15/ (../shared/fixtures); node, npm
# `webgpu` (WEBGPU_MODULE) and a Vulkan driver as ../shared/tools/webgpu-gpu-carry.sh sets them up;
# WEBSD_WEB_RUNTIME: the WebAssembly build's src/web_runtime (scripts/build-wasm.sh).
set -euo pipefail
websd=$1 fixtures=$2 work=$3 runs=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"

# Every kernel tier the artifact holds, each where the adapter offers it (a tier it lacks says so).
tiers=(f32 f16 subgroup-matrix)

echo "== fixture parity: seeded euler_a txt2img through a webgpu artifact, per tier"
"$websd" build --model "$fixtures/tiny-sd15/model" --target webgpu --out "$work/tiny-webgpu" --force >/dev/null
seeded=$fixtures/tiny-sd15/reference/seeded.json
field() { node -e "process.stdout.write(String(require('$seeded')['$1']))"; }
for tier in "${tiers[@]}"; do
  echo "-- tier $tier"
  "$websd" generate --artifact "$work/tiny-webgpu" --tier "$tier" --prompt "$(field prompt)" \
    --negative-prompt "$(field negative_prompt)" --steps "$(field steps)" --guidance "$(field guidance_scale)" \
    --seed "$(field seed)" --scheduler-config "$fixtures/tiny-sd15/reference/scheduler-euler_a.json" \
    --out "$work/tiny-$tier.png" --force || { echo "tier $tier: skipped (see the error above)"; continue; }
  node "$here/fixture_check.mjs" "$work/tiny-$tier.png" "$fixtures/tiny-sd15/reference/seeded.safetensors" \
    txt2img.euler_a.image || true
  [[ $tier == f32 ]] || node "$here/fixture_check.mjs" "$work/tiny-$tier.png" "$work/tiny-f32.png"
done

echo "== fixture networks against diffusers' float64 references (inputs: FIXTURES/networks, written by websd_webgpu_cli_tests)"
if [[ -d $fixtures/networks ]]; then
  runner=$work/tiny-webgpu/runtime/node/websd_node.mjs expected=$fixtures/tiny-sd15/reference/expected.safetensors
  node "$runner" network "$work/tiny-webgpu" text "$fixtures/networks/text-0.safetensors" 0 "$work/te.out.f32" \
    unet "$fixtures/networks/unet-981.safetensors" 981 "$work/unet.out.981.f32" \
    unet "$fixtures/networks/unet-500.safetensors" 500 "$work/unet.out.500.f32" \
    unet "$fixtures/networks/unet-1.safetensors" 1 "$work/unet.out.1.f32" \
    vae_decode "$fixtures/networks/vae_decode-0.safetensors" 0 "$work/vae.dec.out.f32"
  for key in te.out unet.out.981 unet.out.500 unet.out.1 vae.dec.out; do
    node "$here/fixture_check.mjs" "$work/$key.f32" "$expected" "$key" || true
  done
else
  echo "skipped: no $fixtures/networks (websd_webgpu_cli_tests writes them)"
fi

echo "== SD 1.5 (random weights) at 512x512"
TIMEFORMAT='%R s'
echo -n "make-model: " && { time "$websd" make-model --preset sd15 --out "$work/sd15" --force >/dev/null; } 2>&1
echo -n "build: " && { time "$websd" build --model "$work/sd15" --target webgpu --dtype f16 --out "$work/sd15-webgpu" \
  --force >"$work/build.log"; } 2>&1
tail -12 "$work/build.log"
echo "artifact: $(du -sh "$work/sd15-webgpu" | cut -f1), $(ls "$work/sd15-webgpu/kernels" | wc -l) WGSL modules"
"$websd" inspect "$work/sd15-webgpu" | grep -A3 '^tiers'  # kernel files and dispatches a step, per tier
for tier in "${tiers[@]}"; do
  echo "-- tier $tier"
  "$websd" bench --artifact "$work/sd15-webgpu" --tier "$tier" --runs "$runs" --profile ||
    { echo "tier $tier: skipped (see the error above)"; continue; }
  # A 20-step image from a cold process, and its difference from the f32 tier's.
  echo -n "20-step 512x512 image from process start: " && { time "$websd" generate --artifact "$work/sd15-webgpu" \
    --tier "$tier" --prompt "a lighthouse at dusk" --steps 20 --seed 7 --out "$work/sd15-$tier.png" --force \
    2>"$work/generate-$tier.log"; } 2>&1
  [[ $tier == f32 ]] || node "$here/fixture_check.mjs" "$work/sd15-$tier.png" "$work/sd15-f32.png"
done
