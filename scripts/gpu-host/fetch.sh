#!/bin/bash
# Run HERE (the Debian 12 machine with package access), from anywhere: downloads the Debian
# packages the GPU host lacks into <repo>/.gpu-debs and copies the unpack script into
# <repo>/.gpu-scripts, the GL loaders into <repo>/.gl and the nibabel wheels into <repo>/.whl (all
# git-ignored). Then carry both to the GPU host, e.g. with the
# device tool's carry [".gpu-debs", ".gpu-scripts"], and run scripts/gpu-host/test.sh there.
# Extra arguments are extra package names. Re-running refreshes both folders.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
shared=${NW_SHARED_GPU_HOST:-$repo/../shared/gpu-host}
[ -f "$shared/fetch-debs.sh" ] || shared=/work/shared/gpu-host
for f in fetch-debs.sh unpack.sh; do
  if [ ! -f "$shared/$f" ]; then
    echo "fetch.sh: $shared/$f not found (set NW_SHARED_GPU_HOST)" >&2
    exit 1
  fi
done
rm -rf "$repo/.gpu-debs"
# Beyond the shared list: json-glib (app/json_out.c: the CLI's and the benchmarks' JSON) with
# what it needs that the list lacks (its runtime library and that library's common files);
# GIFTI (libgiftiio and its expat) for the mesh readers and their tests.
# Open MPI (issue 16: neurowarp-cli affine --distributed, batch under mpirun and
# bench_distributed_mi; the GPU host has none): mpirun (openmpi-bin: orterun, orted), the
# library and headers (libopenmpi3, libopenmpi-dev; mpicc.openmpi for CMake's FindMPI), and
# what they load (ldd of libmpi, orterun and the MCA components here): PMIx, hwloc, libevent,
# libfabric, UCX, verbs, PSM, netlink, numa, munge, ltdl. Base libraries (libc, libudev,
# libuuid, libatomic) are the host's own. test.sh runs the relocated mpirun with OPAL_PREFIX.
openmpi=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libhwloc15 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libpmix2 libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1
  libpsm2-2 libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1 libmunge2 libltdl7
  libpciaccess0 libxnvctrl0)
bash "$shared/fetch-debs.sh" "$repo/.gpu-debs" libjson-glib-1.0-0 libjson-glib-1.0-common \
  libjson-glib-dev libgiftiio-dev libgiftiio0 libexpat1 libexpat1-dev "${openmpi[@]}" "$@"
mkdir -p "$repo/.gpu-scripts"
cp "$shared/unpack.sh" "$repo/.gpu-scripts/unpack.sh"
# Colin27 and its AAL labels, for the demo-pair timing of bench_demons (NW_TEMPLATES_DIR).
mkdir -p "$repo/.gpu-scripts/templates"
for f in ch2bet.nii.gz aal.nii.gz; do
  [ -f "/usr/share/mricron/templates/$f" ] && cp "/usr/share/mricron/templates/$f" "$repo/.gpu-scripts/templates/"
done
# The GL loaders that the GPU host lacks (libglvnd's EGL/GL dispatch), unpacked into / there
# by test.sh so that NVIDIA's EGL is found (device README): carry .gl as well.
mkdir -p "$repo/.gl"
(cd "$repo/.gl" && apt-get download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)
# nibabel and what it needs beyond the GPU host's numpy, as pure-Python wheels (test.sh
# installs .whl/*.whl): the CLI tests and the independent NIfTI reader run there too.
rm -rf "$repo/.whl" && mkdir -p "$repo/.whl"
python3 -m pip download -q --no-deps --only-binary=:all: -d "$repo/.whl" nibabel packaging
# NW_FETCH_SITK=1: SimpleITK's wheel unpacked into .peers/sitk.tar.xz (28 MB), for the CLI's
# transform-file tests there. With Open MPI's packages it passes the device tool's 64 MiB a
# call: carry one or the other.
if [ "${NW_FETCH_SITK:-0}" = 1 ]; then
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 -d "$tmp" simpleitk
  mkdir -p "$tmp/sitk" "$repo/.peers"
  (cd "$tmp/sitk" && python3 -m zipfile -e "$tmp"/simpleitk-*.whl .)
  tar -cJf "$repo/.peers/sitk.tar.xz.part" -C "$tmp/sitk" . && mv "$repo/.peers/sitk.tar.xz.part" "$repo/.peers/sitk.tar.xz"
  rm -rf "$tmp"
fi
echo "fetch.sh: $(ls "$repo/.gpu-debs" | wc -l) packages ($(du -sh "$repo/.gpu-debs" | cut -f1))" \
     "in .gpu-debs; unpack script in .gpu-scripts"
