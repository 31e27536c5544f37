#!/usr/bin/env bash
# Builds the WebAssembly subset (wasm/CMakeLists.txt) with Debian's emscripten into build-wasm/ and
# runs its parity tests under node. scripts/test.sh runs it after the native suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# emscripten's JS tools need acorn, which Debian installs under /usr/share/nodejs: on the search path
# of Debian's node, not of another node (e.g. NodeSource's) that may be first on PATH.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-wasm -j "$(nproc)"
ctest --test-dir build-wasm --output-on-failure
