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
  # the run's animation export (GIF)
  libgif-dev
  # headless GUI tests: Xvfb with Mesa's software GL
  xvfb xauth libgl1-mesa-dri libegl-mesa0
  # `neurowarp-cli batch` under mpirun (NW_MPI) and its test with 2 and 4 ranks
  libopenmpi-dev openmpi-bin
  # tests and the demo case: independent NIfTI reader, Colin27 (ch2bet) with AAL labels,
  # elastix's transformix for field interoperability, dipy for the SyN comparison
  python3 python3-numpy python3-nibabel mricron-data elastix python3-dipy
  # affine registration's tests: ITK's example images (the Software Guide's 2D pairs), and a
  # virtual environment for SimpleITK (PyPI), the independent reader of transform files
  insighttoolkit5-examples python3-venv
  # libFuzzer harnesses (tests/fuzz): clang with its fuzzer and sanitizer runtimes
  clang libclang-rt-dev
)

# SimpleITK (PyPI; Debian has no package) in .venv beside the sources, over the system
# Python so that Debian's numpy and nibabel stay visible: tests/affine.cmake runs the
# transform-file tests with it. NW_SKIP_VENV=1 leaves it out (no network).
venv_simpleitk() {
  local root venv
  root="$(cd "$(dirname "$0")/.." && pwd)"
  venv="$root/.venv"
  [ "${NW_SKIP_VENV:-0}" = 1 ] && return 0
  if "$venv/bin/python3" -c "import SimpleITK" 2>/dev/null; then
    return 0
  fi
  echo "install-deps: SimpleITK into $venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check SimpleITK
}

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: every package is installed"
  venv_simpleitk
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
venv_simpleitk
