#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --wasm --webgpu
bash scripts/build.sh
bash scripts/test-wasm.sh
# A bounded run of the fuzz target that loads AND executes mutated launch lists on the CPU device
# under ASan/UBSan (fuzz/README.md): any crash or sanitizer report fails the suite.
WEBSD_FUZZ_SECONDS=${WEBSD_CI_FUZZ_SECONDS:-120} WEBSD_FUZZ_MERGE=0 bash scripts/fuzz.sh launch_list_exec_fuzz
ctest --test-dir build --output-on-failure -j "$(nproc)"
