#!/usr/bin/env bash
# Installs every system package websd needs to build and test, on Debian 12 as root.
# Idempotent: packages already present are not fetched again.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git        # toolchain (g++ 12, CMake 3.25)
  nlohmann-json3-dev                          # JSON: configs, safetensors headers, manifests
  libcli11-dev                                # command-line parsing for the websd CLI
  libutf8proc-dev                             # Unicode NFC + categories for the CLIP tokenizer
  libgtest-dev libgmock-dev                   # unit and parity tests
  libbenchmark-dev                            # bench/ programs
  libdnnl-dev                                 # CPU target: oneDNN GEMM and convolution (JIT for the machine's ISA)
  ocl-icd-opencl-dev                          # oneDNN's CMake package (dnnl-config.cmake) looks for OpenCL;
                                              # a Recommends of libdnnl-dev that --no-install-recommends skips
  libspng-dev                                 # PNG: generated images out, img2img init images in
  libssl-dev                                  # artifact: SHA-256 of weight shards, AES-256-GCM weight encryption
  libyaml-cpp-dev                             # single-file checkpoints: the original LDM inference configs (--config)
)
# With --wasm (scripts/test.sh): the WebAssembly build of the browser-side libraries and its tests.
if [[ ${1:-} == --wasm ]]; then
  PACKAGES+=(
    emscripten                                # Debian's emscripten 3.1.6 (clang 14, libc++): wasm/CMakeLists.txt
    nodejs                                    # runs the wasm parity tests (and emscripten's tools)
  )
fi

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "websd: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
