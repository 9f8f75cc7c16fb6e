#!/bin/bash
# The long fuzz run of docs/FUZZING.md: every harness of tests/fuzz, ASan + UBSan (clang),
# until RUNS executions each (default 10^7), JOBS harnesses at a time (default: all cores).
# Usage: scripts/fuzz.sh [RUNS] [JOBS]. Logs, crashes and the grown corpus go to fuzz-out/.
#
# A campaign may be cut into sessions (a machine lent for minutes at a time): NW_FUZZ_SECONDS
# stops each harness after that many seconds; NW_FUZZ_OUT names the output folder, whose
# corpus/ the next session starts from; NW_FUZZ_BIN runs harnesses built elsewhere (a folder
# with the fuzz_* binaries and the seed corpus/ of make_seeds) instead of building here.
# NW_FUZZ_HARNESSES (names, space-separated) runs only those; NW_FUZZ_BUILD_ONLY=1 only builds
# the harnesses into build-fuzz. The executions of a campaign
# are the sum of its sessions' "stat::number_of_executed_units".
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000000}
jobs=${2:-$(nproc)}
# The harnesses and their seed corpus, built here (also what scripts/gpu-host/pack-fuzz.sh
# packs: NW_FUZZ_BUILD_ONLY=1 stops after it).
build_harnesses() {
  CC=clang bash scripts/build.sh build-fuzz -DNW_FUZZ=ON -DNW_SANITIZE=ON -DNW_CUDA=OFF \
    -DNW_GUI=OFF -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
  ctest --test-dir build-fuzz -R fuzz_seeds >/dev/null
}
bin=${NW_FUZZ_BIN:-}
if [ "${NW_FUZZ_BUILD_ONLY:-0}" = 1 ]; then
  build_harnesses
  exit 0
fi
if [ -z "$bin" ]; then
  build_harnesses
  bin=build-fuzz/tests/fuzz
fi
out=${NW_FUZZ_OUT:-fuzz-out}
limit=()
[ -n "${NW_FUZZ_SECONDS:-}" ] && limit=(-max_total_time="$NW_FUZZ_SECONDS")
mkdir -p "$out/corpus" "$out/artifacts"
export ASAN_OPTIONS=detect_leaks=1
export bin out runs
export limit_arg="${limit[*]:-}"
for h in ${NW_FUZZ_HARNESSES:-$(cd "$bin" && ls fuzz_* | grep -v '\.')}; do
  mkdir -p "$out/corpus/$h"
  echo "$h"
done | xargs -P "$jobs" -I{} sh -c '/usr/bin/time -f "{} %e s" "$bin/{}" -runs="$runs" \
  $limit_arg -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/{}-" "$out/corpus/{}" "$bin/corpus/{}" > "$out/{}.log" 2>&1; \
  echo "{} exit $? $(grep -a number_of_executed_units "$out/{}.log")"'
