#!/bin/bash
# Run THERE (a host with many cores and no project libraries): the long fuzz run of
# docs/FUZZING.md as one burst, several processes per harness where a harness is slow.
#   bash scripts/gpu-host/fuzz-burst.sh SECONDS HARNESS:PROCESSES...
# e.g. fuzz-burst.sh 560 fuzz_nifti_gz:3 fuzz_mesh_gifti:3 fuzz_nifti:2 fuzz_params
# The harnesses and their libraries come from .fuzz-carry/harnesses.tar.xz
# (scripts/gpu-host/pack-fuzz.sh), a corpus to continue from from .fuzz-carry/corpus.tar.gz.
# The processes of one harness share its corpus folder (libFuzzer reads what the others add);
# each logs to $OUT/<harness>.<n>.log; the corpus, findings and logs come back as
# $OUT/fuzz.tar.gz, and $OUT/fuzz-summary.txt sums the executions per harness.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
seconds=$1
shift
out=${OUT:-$PWD/out}
fz=$(mktemp -d /tmp/nwfuzz.XXXXXX)
mkdir -p "$fz/h" "$fz/out/corpus" "$fz/out/artifacts" "$out"
tar -xJf .fuzz-carry/harnesses.tar.xz -C "$fz/h"
[ -f .fuzz-carry/corpus.tar.gz ] && tar -xzf .fuzz-carry/corpus.tar.gz -C "$fz/out"
export LD_LIBRARY_PATH=$fz/h/lib ASAN_OPTIONS=detect_leaks=1
for spec in "$@"; do
  h=${spec%%:*}
  n=${spec#*:}
  [ "$n" = "$spec" ] && n=1
  mkdir -p "$fz/out/corpus/$h"
  for i in $(seq 1 "$n"); do
    "$fz/h/bin/$h" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$fz/out/artifacts/$h-" \
      "$fz/out/corpus/$h" "$fz/h/bin/corpus/$h" >"$fz/out/$h.$i.log" 2>&1 &
  done
done
wait
{
  echo "fuzz-burst: $seconds s, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
  for spec in "$@"; do
    h=${spec%%:*}
    total=0
    for f in "$fz/out/$h".*.log; do
      e=$(grep -a 'stat::number_of_executed_units' "$f" | awk '{print $2}')
      total=$((total + ${e:-0}))
    done
    findings=$(ls "$fz/out/artifacts" | grep -c "^$h-")
    echo "$h executions $total processes $(ls "$fz/out/$h".*.log | wc -l) findings $findings"
  done
} | tee "$out/fuzz-summary.txt"
tar czf "$out/fuzz.tar.gz" -C "$fz/out" corpus artifacts $(cd "$fz/out" && ls *.log)
