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
  libxxhash-dev                               # prepared-weight cache: XXH3 checksums of cached weights
  libssl-dev                                  # artifact: SHA-256 of weight shards, AES-256-GCM weight encryption
  libyaml-cpp-dev                             # single-file checkpoints: the original LDM inference configs (--config)
  libcpp-httplib-dev                          # websd serve: the page and webgpu artifacts over HTTP
)
# With --wasm (scripts/test.sh): the WebAssembly build of the browser-side libraries and its tests.
# With --webgpu (scripts/test.sh): WebGPU under Node for the bridge and the webgpu target's tests:
# Dawn from npm (web/package.json), on SwiftShader's Vulkan driver from Debian's chromium when the
# machine has no GPU (web/node/node_gpu.mjs).
for option in "$@"; do
  case $option in
    --wasm)
      PACKAGES+=(
        emscripten                            # Debian's emscripten 3.1.6 (clang 14, libc++): wasm/CMakeLists.txt
        nodejs                                # runs the wasm parity tests (and emscripten's tools)
      ) ;;
    --webgpu)
      PACKAGES+=(
        nodejs                                # runs web/ (the bridge, the Node runner) and its tests
        chromium                              # SwiftShader's Vulkan driver: WebGPU without a GPU (and the page's tests)
        libvulkan1                            # the Vulkan loader Dawn opens
      )
      # npm comes with nodejs from other sources (NodeSource): Debian's package only where it is missing.
      command -v npm >/dev/null || PACKAGES+=(npm) ;;
    *) echo "install-deps.sh: unknown option '$option' (known: --wasm, --webgpu)" >&2; exit 2 ;;
  esac
done

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

# The npm packages web/ pins (package-lock.json), installed again only when the lock file changed.
web=$(cd "$(dirname "$0")/../web" && pwd)
for option in "$@"; do
  if [[ $option == --webgpu && ! $web/node_modules/.package-lock.json -nt $web/package-lock.json ]]; then
    echo "websd: installing the npm packages of web/ (npm ci)" >&2
    (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
