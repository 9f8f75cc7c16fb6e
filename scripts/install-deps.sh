#!/bin/bash
# Install what neurowarp needs to build, run and test, on Debian 12 or Ubuntu 24.04.
# Installs only what is missing; safe to run again. Needs root (or sudo).
# CUDA is not installed here: the build uses nvcc when it finds one (NW_CUDA=AUTO).
set -euo pipefail

pkgs=(
  # build
  build-essential cmake ninja-build pkg-config
  # core
  libglib2.0-dev zlib1g-dev libniftiio-dev libnifti2-dev libgsl-dev libpng-dev libtiff-dev
  # JSON output of the CLI and the benchmarks
  libjson-glib-dev
  # GUI and rendering
  libgtk-3-dev libglew-dev libegl-dev libgl-dev libgiftiio-dev
  # headless GUI tests: Xvfb with Mesa's software GL
  xvfb xauth libgl1-mesa-dri libegl-mesa0
  # tests and the demo case: independent NIfTI reader, Colin27 (ch2bet) with AAL labels,
  # elastix's transformix for field interoperability, dipy for the SyN comparison
  python3 python3-numpy python3-nibabel mricron-data elastix python3-dipy
  # libFuzzer harnesses (tests/fuzz): clang with its fuzzer and sanitizer runtimes
  clang libclang-rt-dev
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
