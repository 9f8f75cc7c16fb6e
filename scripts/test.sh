#!/bin/bash
# Install what is missing, build, and run the whole test suite; then build and run the tests
# again with AddressSanitizer + UndefinedBehaviorSanitizer (skip with NW_SKIP_ASAN=1); then
# build the libFuzzer harnesses with clang, replay their seed corpus and fuzz each reader for
# a few seconds (skip with NW_SKIP_FUZZ=1; scripts/fuzz.sh is the long run).
# GUI tests need a display: without one the suite runs under Xvfb (Mesa software GL).
# CUDA tests report themselves skipped when no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

run_ctest() {
  local dir=$1
  if [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then
    xvfb-run -a -s "-screen 0 1600x1200x24" ctest --test-dir "$dir" --output-on-failure -j 2
  else
    ctest --test-dir "$dir" --output-on-failure -j 2
  fi
}

bash scripts/build.sh build
run_ctest build

if [ "${NW_SKIP_ASAN:-0}" != 1 ]; then
  # The sanitizer build covers core, CLI and render/GUI code; CUDA code is checked on the GPU
  # machine with compute-sanitizer instead (ASan and the CUDA driver do not mix well).
  bash scripts/build.sh build-asan -DNW_SANITIZE=ON -DNW_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan
fi

if [ "${NW_SKIP_FUZZ:-0}" != 1 ]; then
  CC=clang bash scripts/build.sh build-fuzz -DNW_FUZZ=ON -DNW_SANITIZE=ON -DNW_CUDA=OFF \
    -DNW_GUI=OFF -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Debug
  ctest --test-dir build-fuzz -L fuzz --output-on-failure -j 2
fi
