#!/bin/bash
# Configure and build neurowarp into a build folder. Usage: build.sh [BUILD_DIR] [cmake args...]
# Uses Ninja when present. NW_CUDA/NW_GUI/NW_MPI default to AUTO (on when found).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}; shift || true
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
elif [ $# -gt 0 ]; then
  cmake "$dir" "$@"
fi
cmake --build "$dir" -j "$(nproc)"
