#!/usr/bin/env bash
# Installs dependencies, builds, and runs websd's main job: generating an image. Without a model
# (WEBSD_MODEL unset) websd uses its built-in demo model, a tiny random-weight SD 1.5-architecture
# checkpoint, and says so; its image is a noise pattern. Point WEBSD_MODEL at a diffusers folder or a
# single-file .safetensors checkpoint for a real picture. The image is written to ${WEBSD_DEMO_OUT:-out}/demo.png,
# replacing the previous run's (--force).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
out=${WEBSD_DEMO_OUT:-out}
mkdir -p "$out"
model_args=()
if [[ -n "${WEBSD_MODEL:-}" ]]; then model_args=(--model "$WEBSD_MODEL"); fi
build/src/app/websd generate "${model_args[@]}" --prompt "a photo of an astronaut riding a horse on mars" \
  --negative-prompt "blurry, low quality" --steps 20 --seed 42 --out "$out/demo.png" --force
