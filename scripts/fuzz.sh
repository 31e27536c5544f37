#!/usr/bin/env bash
# Builds the libFuzzer targets with clang into build-fuzz/ and runs each for a bounded time.
# Exits non-zero if any target crashed, leaked, hung or ran out of memory, printing the reproducer.
#   scripts/fuzz.sh [target...]        (default: every target)
#   WEBSD_FUZZ_SECONDS=600 scripts/fuzz.sh tokenizer_fuzz
# New corpus entries go to build-fuzz/corpus/<target>/ (fuzz/corpus/ holds only the seeds); a
# reproducer lands in build-fuzz/crashes/<target>/. See fuzz/README.md for turning one into a
# regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET=${WEBSD_FUZZ_SECONDS:-60}
# Wall-clock seconds one input may take before it counts as a hang.
TIMEOUT=${WEBSD_FUZZ_TIMEOUT:-10}
ALL_TARGETS=(safetensors_fuzz tokenizer_fuzz artifact_manifest_fuzz launch_list_fuzz)
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=("${ALL_TARGETS[@]}")
BUILD=build-fuzz

# True when clang++ can link a libFuzzer program (clang alone lacks the runtime on Debian).
can_build_fuzzers() {
  command -v clang++ >/dev/null || return 1
  local probe
  probe=$(mktemp -d)
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe/probe.cpp"
  clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null
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
    apt-get install -y -qq --no-install-recommends "libclang-rt-${clang_major}-dev" >/dev/null
  fi
  if ! can_build_fuzzers; then
    echo "websd: clang++ with libFuzzer is needed: install clang and libclang-rt-<version>-dev" \
      "(Debian 12: apt-get install clang libclang-rt-14-dev), then run this again" >&2
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

failed=()
for target in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$target"
  crashes="$BUILD/crashes/$target"
  log="$BUILD/logs/$target.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  echo "== $target: ${SECONDS_PER_TARGET}s (log: $log)"
  status=0
  "$BUILD/fuzz/$target" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout="$TIMEOUT" \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "fuzz/corpus/$target" >"$log" 2>&1 || status=$?
  # The last status line carries coverage (cov: edges, ft: features) and corpus size.
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  grep -E 'stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" || true
  reproducer=$(ls -t "$crashes" 2>/dev/null | head -n 1)
  # A timeout on a starved machine (nice, other jobs) is rechecked once before it counts.
  if ((status != 0)) && [[ $reproducer == timeout-* ]] &&
    "$BUILD/fuzz/$target" -timeout="$TIMEOUT" -rss_limit_mb=2048 "$crashes/$reproducer" >>"$log" 2>&1; then
    echo "websd: $target: the timeout did not reproduce on a rerun (busy machine?); not counted" >&2
    rm -f "$crashes/$reproducer"
    status=0
  fi
  if ((status != 0)); then
    grep -E 'ERROR: |SUMMARY: |^==[0-9]+==|runtime error|uncaught|fuzz invariant' "$log" | head -n 5 || true
    echo "FAILED $target (exit $status): reproducer ${reproducer:+$crashes/$reproducer}" >&2
    failed+=("$target")
  fi
done

if ((${#failed[@]})); then
  echo "websd: fuzzing found problems in: ${failed[*]} (see fuzz/README.md to add a regression test)" >&2
  exit 1
fi
echo "websd: no crashes in ${TARGETS[*]}"
