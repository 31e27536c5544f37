#!/usr/bin/env bash
# Builds the libFuzzer targets with clang into build-fuzz/ and runs each for a bounded time.
# Exits non-zero if any target crashed, leaked, hung or ran out of memory, printing the reproducer.
#   scripts/fuzz.sh [target...]        (default: every target)
#   WEBSD_FUZZ_SECONDS=600 scripts/fuzz.sh tokenizer_fuzz
#   WEBSD_FUZZ_JOBS=2 runs two targets at a time.
#   WEBSD_FUZZ_MERGE=0 leaves fuzz/learned/ as it is (CI's bounded run, scripts/test.sh).
# New corpus entries go to build-fuzz/corpus/<target>/ and, minimized, to
# fuzz/learned/<target>.tar.xz (kept in the repository, packed by scripts/fuzz-learned.sh: later
# runs start from it, CI replays it); fuzz/corpus/ holds only the seeds. A reproducer lands in
# build-fuzz/crashes/<target>/. See fuzz/README.md for turning one into a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET=${WEBSD_FUZZ_SECONDS:-60}
# Wall-clock seconds one input may take before it counts as a hang.
TIMEOUT=${WEBSD_FUZZ_TIMEOUT:-10}
ALL_TARGETS=(safetensors_fuzz tokenizer_fuzz artifact_manifest_fuzz artifact_open_fuzz launch_list_fuzz launch_list_exec_fuzz)
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=("${ALL_TARGETS[@]}")
BUILD=build-fuzz

# True when clang++ can link a libFuzzer program with OpenMP (clang alone lacks both runtimes on
# Debian; the CPU kernels the executing launch-list target runs use OpenMP).
can_build_fuzzers() {
  command -v clang++ >/dev/null || return 1
  local probe
  probe=$(mktemp -d)
  printf '#include <omp.h>\nextern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return omp_get_max_threads() > 0 ? 0 : 1; }\n' >"$probe/probe.cpp"
  clang++ -fsanitize=fuzzer,address,undefined -fopenmp "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null
  local status=$?
  rm -rf "$probe"
  return $status
}

if ! can_build_fuzzers; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "websd: installing clang and its libFuzzer/sanitizer runtime" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends clang >/dev/null
    clang_major=$(clang++ -dumpversion | cut -d. -f1)
    apt-get install -y -qq --no-install-recommends "libclang-rt-${clang_major}-dev" "libomp-${clang_major}-dev" >/dev/null
  fi
  if ! can_build_fuzzers; then
    echo "websd: clang++ with libFuzzer and OpenMP is needed: install clang, libclang-rt-<version>-dev and" \
      "libomp-<version>-dev (Debian 12: apt-get install clang libclang-rt-14-dev libomp-14-dev), then run this again" >&2
    exit 1
  fi
fi

# Every file, the libraries under test included, gets coverage instrumentation and sanitizers;
# asserts stay on (nlohmann::json checks misuse with them); UB is fatal rather than a warning.
FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DWEBSD_BUILD_FUZZERS=ON -DWEBSD_BUILD_TESTS=OFF \
  -DWEBSD_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$FLAGS" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target "${TARGETS[@]}"

# One target: fuzz from the seeds and the learned corpus (unpacked into build-fuzz/learned/), then
# (-merge) keep in fuzz/learned/<target>.tar.xz the smallest set of inputs that covers what every
# input seen covered, so the next run (and CI's replay in tests/fuzz_regressions) starts from it. Prints the result; returns non-zero on a finding.
fuzz_one() {
  local target=$1
  local corpus="$BUILD/corpus/$target" crashes="$BUILD/crashes/$target" log="$BUILD/logs/$target.log"
  local learned="$BUILD/learned/$target"
  scripts/fuzz-learned.sh unpack "$target" "$BUILD/learned"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  local status=0
  "$BUILD/fuzz/$target" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout="$TIMEOUT" \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "$learned" "fuzz/corpus/$target" >"$log" 2>&1 || status=$?
  local reproducer
  reproducer=$(ls -t "$crashes" 2>/dev/null | head -n 1)
  # A timeout on a starved machine (nice, other jobs) is rechecked once before it counts.
  if ((status != 0)) && [[ $reproducer == timeout-* ]] &&
    "$BUILD/fuzz/$target" -timeout="$TIMEOUT" -rss_limit_mb=2048 "$crashes/$reproducer" >>"$log" 2>&1; then
    echo "websd: $target: the timeout did not reproduce on a rerun (busy machine?); not counted" >&2
    rm -f "$crashes/$reproducer"
    status=0
  fi
  if [[ ${WEBSD_FUZZ_MERGE:-1} != 0 ]]; then
    local merged="$BUILD/merged/$target"
    rm -rf "$merged" && mkdir -p "$merged"
    "$BUILD/fuzz/$target" -merge=1 -rss_limit_mb=2048 -timeout="$TIMEOUT" "$merged" "$learned" "$corpus" \
      >>"$log.merge" 2>&1 && rm -rf "$learned" && mv "$merged" "$learned" &&
      scripts/fuzz-learned.sh pack "$target" "$BUILD/learned"
  fi
  {
    echo "== $target: ${SECONDS_PER_TARGET}s (log: $log)"
    # The last status line carries coverage (cov: edges, ft: features) and corpus size.
    grep -E '^#[0-9]+' "$log" | tail -n 1 || true
    grep -E 'stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" || true
    echo "learned corpus: $(ls "$learned" | wc -l) inputs, $(du -sh "$learned" | cut -f1) in $learned" \
      "(packed: fuzz/learned/$target.tar.xz)"
    if ((status != 0)); then
      grep -E 'ERROR: |SUMMARY: |^==[0-9]+==|runtime error|uncaught|fuzz invariant' "$log" | head -n 5 || true
      echo "FAILED $target (exit $status): reproducer ${reproducer:+$crashes/$reproducer}"
    fi
  } >"$BUILD/logs/$target.summary"
  return $status
}

# WEBSD_FUZZ_JOBS targets at a time (default 1; 2 on a 2-core machine keeps both cores busy).
JOBS=${WEBSD_FUZZ_JOBS:-1}
failed=()
declare -A pids=()
for target in "${TARGETS[@]}"; do
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
  fuzz_one "$target" &
  pids[$target]=$!
done
for target in "${TARGETS[@]}"; do
  wait "${pids[$target]}" || failed+=("$target")
  cat "$BUILD/logs/$target.summary"
done

if ((${#failed[@]})); then
  echo "websd: fuzzing found problems in: ${failed[*]} (see fuzz/README.md to add a regression test)" >&2
  exit 1
fi
echo "websd: no crashes in ${TARGETS[*]}"
