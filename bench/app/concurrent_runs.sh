#!/usr/bin/env bash
# How websd runs share a machine (issue 19, point 9): starts 1, 2 and 4 `websd bench` processes at
# once and reports each one's UNet step (the median of its timed runs) and the ratio of their
# throughput together to one run's alone, under websd's OpenMP policy (threads sleep when out of
# work; src/app/openmp_policy.h) and under libgomp's default (GOMP_SPINCOUNT=300000: spin first).
#   bench/app/concurrent_runs.sh                                # the demo model, 128x128
#   bench/app/concurrent_runs.sh --model SD15 --width 512 --height 512 --runs 2
# Extra arguments go to `websd bench`. WEBSD_BIN overrides build/src/app/websd; PROCESSES="1 2 4".
set -euo pipefail
cd "$(dirname "$0")/../.."
websd=${WEBSD_BIN:-build/src/app/websd}
processes=${PROCESSES:-1 2 4}
args=("$@")
((${#args[@]})) || args=(--runs 30)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The UNet step of `websd bench`'s text output, in seconds.
unet_seconds() { awk '/^UNet step, CFG/ { print $(NF - 5) }' "$1"; }

# Runs $2 processes at once with the environment in $1; prints the mean of their UNet steps.
mean_step_together() {
  local env_setting=$1 count=$2 pids=() i
  for ((i = 0; i < count; i++)); do
    env $env_setting "$websd" bench "${args[@]}" >"$work/out.$i" 2>/dev/null &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  for ((i = 0; i < count; i++)); do unet_seconds "$work/out.$i"; done | awk '{ s += $1 } END { printf "%.6f", s / NR }'
}

printf '%-34s %9s %16s %22s\n' "policy" "processes" "UNet step (s)" "together / alone"
for policy in "websd's (passive)" "libgomp's default (spin)"; do
  env_setting="WEBSD_BENCH_POLICY=websd"
  [[ $policy == libgomp* ]] && env_setting="GOMP_SPINCOUNT=300000"
  alone=""
  for count in $processes; do
    step=$(mean_step_together "$env_setting" "$count")
    [[ -z $alone ]] && alone=$step
    # Throughput together (count / step) over one run's alone (1 / alone).
    ratio=$(awk -v n="$count" -v s="$step" -v a="$alone" 'BEGIN { printf "%.2f", n * a / s }')
    printf '%-34s %9d %16.4f %22s\n' "$policy" "$count" "$step" "$ratio"
  done
done
