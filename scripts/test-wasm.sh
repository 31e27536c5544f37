#!/usr/bin/env bash
# Builds the WebAssembly subset (scripts/build-wasm.sh) and runs its parity tests under node. Needs
# the native build (build/, scripts/build.sh) for the tokenizer's generated Unicode tables and for
# the websd binary that builds the fixture's cpu artifact the wasm artifact reader is tested on.
# scripts/test.sh runs it before the native suite (whose webgpu tests use the runtime built here).
set -euo pipefail
cd "$(dirname "$0")/.."
# The fixture's cpu artifact, built by the native websd when missing or older than that binary
# (--force: it replaces the previous one).
websd=build/src/app/websd
artifact=build-wasm/fixture-artifact
[[ -x $websd ]] || cmake --build build --target websd
if [[ ! -f $artifact/manifest.json || $websd -nt $artifact/manifest.json ]]; then
  mkdir -p build-wasm
  "$websd" build --model "${WEBSD_FIXTURES:-../shared/fixtures}/tiny-sd15/model" --target cpu --out "$artifact" --force >/dev/null
fi
bash scripts/build-wasm.sh
ctest --test-dir build-wasm --output-on-failure
# ctest counts each module as one test: show googletest's own count of the cases that ran under
# node, and node's test runner's for WebGpuDevice on the bridge (webgpu_device_wasm; it needs npm
# `webgpu` in web/node_modules and SwiftShader: scripts/install-deps.sh --webgpu).
grep -E '^\[==========\] [0-9]+ tests? from .* ran|^\[  PASSED  \]' build-wasm/Testing/Temporary/LastTest.log | sed 's/^/wasm (node): /'
grep -E '^# (tests|pass|fail) [0-9]+$' build-wasm/Testing/Temporary/LastTest.log | sed 's/^# /webgpu device (node): /'
