#!/usr/bin/env bash
# Time to first step with the prepared-weight cache (issue 22, point 1; README "Prepared-weight
# cache"): rounds of `websd bench --model M` with the cache cold (cleared first: every weight is
# prepared from the checkpoint and written), warm, and warm after the page cache is dropped (the
# first run after a reboot; needs root, skipped otherwise). Prints bench's lines for each: the
# "time to first step" line is opening the checkpoint, the text encoder's first call and the UNet's
# first call less one step, with each network's cache hit or miss.
#   bench/app/weight_cache.sh MODEL [ROUNDS] [bench options...]    e.g. SD15.safetensors 2 --width 512 --height 512
# The cache lives in a temporary XDG_CACHE_HOME (removed at the end), not the user's.
# WEBSD_BIN overrides build/src/app/websd.
set -euo pipefail
cd "$(dirname "$0")/../.."
websd=${WEBSD_BIN:-build/src/app/websd}
model=${1:?usage: weight_cache.sh MODEL [ROUNDS] [bench options...]}
rounds=${2:-2}
shift $(($# < 2 ? $# : 2))
XDG_CACHE_HOME=$(mktemp -d)
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT

bench() { "$websd" bench --model "$model" --runs 1 "$@" 2>&1 | grep -E "^(text|UNet|VAE|time to first step|peak)"; }

for ((round = 1; round <= rounds; round++)); do
  "$websd" cache clear >/dev/null
  echo "== round $round: cold cache"
  bench "$@"
  echo "== round $round: warm cache"
  bench "$@"
  if sync && echo 3 2>/dev/null >/proc/sys/vm/drop_caches; then
    echo "== round $round: warm cache, page cache dropped"
    bench "$@"
  fi
done
"$websd" cache list
