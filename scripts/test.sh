#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --wasm
bash scripts/build.sh
bash scripts/test-wasm.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
