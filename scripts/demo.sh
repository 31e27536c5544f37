#!/usr/bin/env bash
# Installs dependencies, builds, and runs websd's main job on the built-in demo model.
# Set WEBSD_DEMO_OUT to choose where the demo writes (default: out/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
websd=build/src/app/websd
out=${WEBSD_DEMO_OUT:-out/demo}
mkdir -p "$out"

echo "websd demo: no model given, so using the built-in DEMO model (tiny, random weights)." >&2
"$websd" make-model --preset tiny --seed 0 --out "$out/model" --force
"$websd" import --model "$out/model"
"$websd" tokenize --tokenizer "$out/model" "a photo of an astronaut riding a horse on mars"
"$websd" scheduler --config "$out/model/scheduler/scheduler_config.json" --steps 20
"$websd" noise --seed 42 --shape 1,4,64,64 --out "$out/noise.safetensors"
echo "websd demo: done; outputs are in $out" >&2
