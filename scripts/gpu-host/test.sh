#!/bin/bash
# Run THERE: on the GPU host (no network), from the repository root or anywhere, with
# .gpu-debs and .gpu-scripts carried along (made here by scripts/gpu-host/fetch.sh).
#
#   bash scripts/gpu-host/test.sh            # logs go to $OUT (default ./out)
#
# With the device tool: command "bash scripts/gpu-host/test.sh", carry [".gpu-debs",
# ".gpu-scripts"], timeout 600 (the script keeps itself under NW_TIME_BUDGET, below).
#
# Steps, each logged to $OUT/<step>.log, each run even when an earlier one failed (so every
# log comes back): unpack the debs into /opt/nwdeps (else /tmp/nwdeps), configure build-gpu
# (Ninja, Release, NW_CUDA=ON, NW_GUI=OFF), build with all cores, nvidia-smi, the whole
# ctest suite (tee'd to $OUT/ctest.log), then every test labelled "cuda" under
# compute-sanitizer memcheck and racecheck. A summary table comes last (and in
# $OUT/summary.txt). Knobs: NW_GPU_JOBS (build jobs), NW_CTEST_TIMEOUT (s per test, default
# 120), NW_SANITIZER_TIMEOUT (s per sanitizer run, default 150), NW_TIME_BUDGET (s, default
# 540: no sanitizer run starts that could end later), NW_SKIP_SANITIZERS=1, NW_SANITIZE_ONLY
# (a regex: only the CUDA tests it matches), NW_SANITIZE_SKIP (a regex on "tool test", e.g.
# "memcheck test_cuda_nlm": those runs are skipped), NW_RACECHECK_ARGS (options for the tests under
# racecheck, e.g. "-s /cuda/nlm/top-m-large" to skip a case too slow there),
# NW_SKIP_LIVE_BENCH=1, NW_LIVE_SIZE / NW_LIVE_SECONDS (bench_live, default 256 and 8),
# NW_LIVE_REFRESH (the display rates bench_live runs at, default "0 60"; a rate named again
# is another run of it),
# NW_LIVE_VARIANTS=0 (no bench_live variants at 60 Hz), NW_LIVE_PATH (interop, host or both),
# NW_SKIP_STALLS=1 (no bench_stalls beside bench_live), NW_SKIP_GUI=1, NW_SKIP_CTEST=1,
# NW_BUILD_TARGETS (build only these), NW_CTEST_REGEX (ctest -R), NW_SKIP_SMOOTH_BENCH=1,
# NW_SKIP_CLI=1 (a quick check of a few tests), NW_SKIP_DEMONS_BENCH=1, NW_SKIP_SWEEP=1, NW_BENCH_SIZES (bench_demons grid edges),
# NW_SKIP_AFFINE_BENCH=1, NW_SKIP_NLM_BENCH=1, NW_NLM_SIZES (bench_nlm's band sizes),
# NW_SKIP_NLM_PEER=1 (the PyTorch peer of bench_nlm), NW_SKIP_NLM_BRAIN=1, NW_NLM_BRAIN_MM,
# NW_NLM_BRAIN_TIMEOUT, NW_NLM_BRAIN_KERNELS (denoise-surface on the demo brain on CUDA),
# NW_NLM_KERNELS (bench_nlm's top-m kernels: exact, tc or both),
# NW_SKIP_FLUID_BENCH=1 (bench_fluid), NW_FLUID_BENCH_ARGS (its options), NW_FLUID_BENCH_TIMEOUT,
# NW_SKIP_DMI_BENCH=1 (bench_distributed_mi), NW_DMI_RANKS
# (its rank counts, default "1 2 4": one process, then mpirun -n R; a rank per GPU where
# there are several, else the ranks share GPU 0), NW_DMI_SIZE (section edge, default 16384),
# NW_DMI_BUDGET (s for all its runs, default 150), NW_DMI_MODES ("per-rank" and/or "fixed":
# one GPU's memory cap at every rank count, the replicated strategy; default per-rank),
# NW_BATCH_BENCH=1 with NW_BATCH_PAIRS, NW_BATCH_RANKS, NW_BATCH_BUDGET (batch throughput),
# NW_FUZZ_SECONDS / NW_FUZZ_JOBS (the long fuzz run beside the rest),
# NW_GENERALIZE=1 with NW_GEN_MM, NW_GEN_SEEDS, NW_GEN_CONFIGS, NW_GEN_CHOOSE,
# NW_GEN_REPORT_ALSO, NW_GEN_TIMEOUT, NW_GEN_PEERS=1, NW_GEN_PEER_TIMEOUT (the demons
# evaluation on drawn cases and FireANTs beside it; see the step below),
# NW_FLUID_GENERALIZE=1 with NW_FGEN_MM, NW_FGEN_SEEDS, NW_FGEN_CONFIGS, NW_FGEN_CHOOSE,
# NW_FGEN_REPORT_ALSO, NW_FGEN_TIMEOUT (fluid tuned and reported beside demons on the same
# cases; its JSON also lands in $OUT itself).
# Carry .gl too (the GL loaders, see the device README) for the EGL tests and bench_live.
# Exit status: 0 when every step passed, else 1.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
repo=$PWD
# The device tool returns at most 8 files from $OUT: every log goes to a scratch folder that
# is packed into $OUT/logs.tar.gz at the end, beside summary.txt and the benchmark JSON.
FINAL_OUT=${OUT:-$repo/out}
OUT=$(mktemp -d /tmp/nwgpu-logs.XXXXXX)
mkdir -p "$FINAL_OUT"
build=$repo/build-gpu
jobs=${NW_GPU_JOBS:-$(nproc)}
ctest_timeout=${NW_CTEST_TIMEOUT:-120}
san_timeout=${NW_SANITIZER_TIMEOUT:-150}
# The device tool stops a command after 600 s: sanitizer runs that would end past this many
# seconds since the start are skipped (and listed as such) so that the logs still come back.
budget=${NW_TIME_BUDGET:-540}

summary=()
failed=0
# record STEP RC [NOTE]: 0 ok, 77 skipped, 124 timeout, else FAIL.
record() {
  local verdict=FAIL
  case $2 in
    0) verdict=ok ;;
    77) verdict=skipped ;;
    124 | 137) verdict=TIMEOUT ;;
  esac
  [ "$verdict" = ok ] || [ "$verdict" = skipped ] || failed=1
  summary+=("$(printf '%-36s %-8s rc=%-4s %s' "$1" "$verdict" "$2" "${3:-}")")
}
# step NAME CMD...: runs CMD with its output in $OUT/NAME.log and records the outcome.
step() {
  local name=$1
  shift
  echo "== $name: $*"
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  record "$name" "$rc" "$name.log"
  [ "$rc" -eq 0 ] || tail -n 30 "$OUT/$name.log"
  return "$rc"
}

# --- dependencies: unpack the carried debs into a prefix and take its environment ----------
prefix=${NW_DEPS_PREFIX:-/opt/nwdeps}
mkdir -p "$prefix" 2>/dev/null && [ -w "$prefix" ] || prefix=/tmp/nwdeps
if [ -f .gpu-scripts/unpack.sh ] && [ -d .gpu-debs ]; then
  if bash .gpu-scripts/unpack.sh .gpu-debs "$prefix" >"$OUT/env.sh" 2>"$OUT/unpack.log"; then
    # shellcheck disable=SC1091
    source "$OUT/env.sh"
    record unpack 0 "into $prefix"
  else
    record unpack 1 unpack.log
  fi
else
  record unpack 1 "missing .gpu-debs or .gpu-scripts/unpack.sh: run scripts/gpu-host/fetch.sh"
fi
# The GL loaders (libglvnd's libEGL/libGL) go into / as the device README says, so that the
# NVIDIA driver's EGL is found: render/ and the CUDA-GL interop test and benchmark draw
# offscreen through EGL on the GPU (the device platform; there is no X server).
if ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" / 2>>"$OUT/unpack.log"; done
  ldconfig
  record gl-loaders 0 "$(ls .gl/*.deb | wc -l) packages into /"
fi
for j in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json \
         /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
  if [ -f "$j" ]; then export __EGL_VENDOR_LIBRARY_FILENAMES=$j; break; fi
done
for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do
  [ -d "$d" ] && export PATH=$PATH:$d
done
command -v nvcc >/dev/null && export CUDACXX=${CUDACXX:-$(command -v nvcc)}
# Open MPI from the carried debs (fetch.sh), unpacked under $prefix/usr instead of /usr: its
# programs find their components, help files and orted through OPAL_PREFIX (PMIx's components
# through PMIX_MCA_mca_base_component_path), its libraries through LD_LIBRARY_PATH (checked
# here with /usr's Open MPI and PMIx hidden in a mount namespace); CMake's FindMPI asks
# mpicc.openmpi (the Debian alternatives' mpicc/mpirun links are not made by dpkg -x). As
# root, mpirun wants the two OMPI_ALLOW_RUN_AS_ROOT variables. The carried Open MPI is taken
# even where the host has its own: the H100 image's /usr/bin/mpiexec then loads Debian's
# libpmix from $prefix first (LD_LIBRARY_PATH) and stops at "undefined symbol:
# PMIx_Info_create" in its mca_pmix_ext3x.so; one Open MPI from one place avoids the mix.
mpirun=
mpi_cmake=()
if [ -x "$prefix/usr/bin/orterun" ]; then
  export OPAL_PREFIX=$prefix/usr
  export PMIX_INSTALL_PREFIX=$prefix/usr/lib/x86_64-linux-gnu/pmix2
  export PMIX_MCA_mca_base_component_path=$PMIX_INSTALL_PREFIX/lib/pmix
  # the ranks' PMIx also tried the host's own pmix2 compression component (a newer PMIx's)
  # and warned for every rank; compression of start-up data does not matter here
  export PMIX_MCA_pcompress_base_silence_warning=1
  export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu/openmpi/lib:$prefix/usr/lib/x86_64-linux-gnu/pmix2/lib:${LD_LIBRARY_PATH:-}
  mpirun=$prefix/usr/bin/orterun
  mpi_cmake=(-DMPI_C_COMPILER="$prefix/usr/bin/mpicc.openmpi" -DMPIEXEC_EXECUTABLE="$mpirun")
elif command -v mpirun >/dev/null; then
  mpirun=$(command -v mpirun)
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NCCL for the distributed metric's histogram sum between GPUs of this host: PyTorch's venv
# carries it (cuda/CMakeLists.txt looks under NCCL_ROOT).
for d in /opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl; do
  if [ -z "${NCCL_ROOT:-}" ] && [ -f "$d/include/nccl.h" ]; then
    export NCCL_ROOT=$d
    export LD_LIBRARY_PATH=$d/lib:${LD_LIBRARY_PATH:-}
  fi
done
# nibabel (pure Python, carried as a wheel in .whl: scripts/gpu-host/fetch.sh) for the CLI
# tests and the independent NIfTI reader; the tests run under the python3 on PATH there.
python=$(command -v python3)
if ls .whl/nibabel-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/nwsite \
    .whl/*.whl >"$OUT/pip.log" 2>&1 && export PYTHONPATH=/tmp/nwsite${PYTHONPATH:+:$PYTHONPATH}
  record nibabel $? "$(python3 -c 'import nibabel; print("nibabel", nibabel.__version__)' 2>&1)"
fi
# SimpleITK, where .peers/sitk.tar.xz is carried (its wheel unpacked: ../shared/peers/fireants.md,
# or scripts/gpu-host/fetch.sh with NW_FETCH_SITK=1): affine_cli_test reads the CLI's transform
# files with it, the CUDA run's among them; without it that test skips there
if [ -f .peers/sitk.tar.xz ]; then
  mkdir -p /tmp/nwsite && tar -xJf .peers/sitk.tar.xz -C /tmp/nwsite
  case ":${PYTHONPATH:-}:" in *:/tmp/nwsite:*) ;; *) export PYTHONPATH=/tmp/nwsite${PYTHONPATH:+:$PYTHONPATH} ;; esac
  sitk_version=$(python3 -c 'import SimpleITK; print("SimpleITK", SimpleITK.Version_VersionString())' 2>&1)
  record simpleitk $? "$sitk_version"
fi

# --- GPU, configure, build -------------------------------------------------------------------
step nvidia-smi nvidia-smi
# NW_GUI=AUTO: there is no GTK here, so the application is not built, but render/ (GLEW,
# EGL) is, with the CUDA-GL interop test and the live-view benchmark.
step configure cmake -S "$repo" -B "$build" -G Ninja -DNW_GUI=AUTO -DNW_CUDA=ON \
  -DCMAKE_BUILD_TYPE=Release -DNW_PYTHON3="$python" "${mpi_cmake[@]}"
configured=$?
if [ "$configured" -eq 0 ]; then
  # -k 0: keep going, so one broken target does not keep every other test from running
  targets=()
  for t in ${NW_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
  step build cmake --build "$build" -j "$jobs" "${targets[@]}" -- -k 0
else
  record build 1 "not run: configure failed"
fi

# The peers' wheels carried in .peers (../shared/peers/fireants.md: fireants, hydra-core,
# omegaconf, antlr4, nibabel, and SimpleITK unpacked into sitk.tar.xz) installed into
# /tmp/nwpeers once; false when they were not carried or do not install.
peers_ready() {
  ls .peers/fireants-*.whl >/dev/null 2>&1 && [ -f .peers/sitk.tar.xz ] || return 1
  [ -d /tmp/nwpeers/fireants ] && return 0
  mkdir -p /tmp/nwpeers &&
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/nwpeers \
      .peers/*.whl >"$OUT/peers_pip.log" 2>&1 && tar -xJf .peers/sitk.tar.xz -C /tmp/nwpeers
}

# --- the whole test suite (NW_SKIP_CTEST=1: not this time) --------------------------------------
# Colin27 and its labels where Debian's mricron-data puts them, as on CI: the demo case and
# the tests that register the demo brain use it (without it they get the phantom or skip).
if [ -d "$repo/.gpu-scripts/templates" ]; then
  mkdir -p /usr/share/mricron/templates && cp "$repo"/.gpu-scripts/templates/* /usr/share/mricron/templates/
fi
if [ "${NW_SKIP_CTEST:-0}" != 1 ]; then
  echo "== ctest"
  # four tests at a time, each with a quarter of the cores: OpenMP tests that each took every
  # core (16 threads x 4 tests) ran slower than alone on 2 cores, past the timeout
  OMP_NUM_THREADS=$(($(nproc) / 4 > 0 ? $(nproc) / 4 : 1)) \
    ctest --test-dir "$build" --output-on-failure --timeout "$ctest_timeout" -j 4 \
    ${NW_CTEST_REGEX:+-R "$NW_CTEST_REGEX"} 2>&1 |
    tee "$OUT/ctest.log"
  record ctest "${PIPESTATUS[0]}" "ctest.log: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)"
  cp "$build/Testing/Temporary/LastTest.log" "$OUT/LastTest.log" 2>/dev/null
fi

# --- benchmarks (JSON, packed with the logs) -----------------------------------------------
if [ -x "$build/bench/bench_smooth" ] && [ "${NW_SKIP_SMOOTH_BENCH:-0}" != 1 ]; then
  echo "== bench_smooth"
  timeout 120 "$build/bench/bench_smooth" --size 192 --iterations 10 >"$OUT/bench_smooth.json" \
    2>"$OUT/bench_smooth.log"
  record bench_smooth $? "$(head -c 300 "$OUT/bench_smooth.json")"
elif [ "${NW_SKIP_SMOOTH_BENCH:-0}" = 1 ]; then
  record bench_smooth 77 "NW_SKIP_SMOOTH_BENCH=1" # skipped, not failed
else
  record bench_smooth 1 "not built"
fi

# --- the affine cost on the GPU: evaluations per second at 512^2 .. 3072^2 and brain size ----
if [ -x "$build/bench/bench_affine" ] && [ "${NW_SKIP_AFFINE_BENCH:-0}" != 1 ]; then
  echo "== bench_affine"
  # G_MESSAGES_DEBUG: the jobs of the end-to-end runs say where their time goes
  G_MESSAGES_DEBUG=all timeout "${NW_AFFINE_BENCH_TIMEOUT:-240}" "$build/bench/bench_affine" --json "$OUT/bench_affine.json" \
    >"$OUT/bench_affine.log" 2>&1
  record bench_affine $? "bench_affine.log"
  grep -v DEBUG "$OUT/bench_affine.log"
  # the PyTorch peer on the same images and transforms (where the host's python3 has torch)
  if python3 -c "import torch" 2>/dev/null; then
    timeout 120 python3 bench/peer_affine_torch.py --json "$OUT/peer_affine_torch.json" \
      >"$OUT/peer_affine_torch.log" 2>&1
    record peer_affine_torch $? "peer_affine_torch.log"
    cat "$OUT/peer_affine_torch.log"
  fi
  # FireANTs on the 3D end-to-end case, where its wheels are carried in .peers,
  # on a brain pair (the demo's Colin27 at 1 mm and its copy a known affine apart), with
  # neurowarp-cli on the same files in the same call
  if peers_ready; then
    cli=$build/app/neurowarp-cli
    "$cli" demo-data /tmp/nwaffdemo >"$OUT/peer_affine_demo.log" 2>&1
    for fixed in "" /tmp/nwaffdemo/fixed_1mm.nii.gz; do
      tag=${fixed:+_brain}
      PYTHONPATH=/tmp/nwpeers timeout 300 python3 bench/peer_affine_fireants.py \
        ${fixed:+--fixed "$fixed" --cli "$cli"} --json "$OUT/peer_affine_fireants$tag.json" \
        >"$OUT/peer_affine_fireants$tag.log" 2>&1
      record "peer_affine_fireants$tag" $? "$(grep -E '^(fireants|neurowarp)' "$OUT/peer_affine_fireants$tag.log" | cut -c1-150 | tr '\n' ' ')"
      tail -n 6 "$OUT/peer_affine_fireants$tag.log"
    done
    # and the 3072² similarity case (FireANTs' rigid with scaling), neurowarp-cli beside it
    PYTHONPATH=/tmp/nwpeers timeout 300 python3 bench/peer_affine_fireants.py --2d \
      --cli "$cli" --json "$OUT/peer_affine_fireants_2d.json" >"$OUT/peer_affine_fireants_2d.log" 2>&1
    record peer_affine_fireants_2d $? "$(grep -E '^(fireants|neurowarp)' "$OUT/peer_affine_fireants_2d.log" | cut -c1-150 | tr '\n' ' ')"
    tail -n 6 "$OUT/peer_affine_fireants_2d.log"
  fi
fi

# --- nlm-surface: the fused patch distance + exact top-m (cuda/nlm_topm_kernel.cu) at band
# sizes 17.5k .. 175k, P = 125, m = 96: ms, TFLOP/s (2 N^2 P), 256 sample rows checked against
# the CPU reference, the CPU reference on 1 thread and on all (extrapolated from 256 rows); the
# tensor-core variant (nlm_topm_tc_kernel.cu) beside it, every row equal to the exact kernel's
# or the step fails (NW_NLM_KERNELS=exact|tc|both, default both);
# then the PyTorch peer (chunked addmm + topk, FP32 and TF32) on the very patches bench_nlm
# dumped, with how many sample rows keep the exact top-m set (NW_SKIP_NLM_PEER=1: not) -------
if [ -x "$build/bench/bench_nlm" ] && [ "${NW_SKIP_NLM_BENCH:-0}" != 1 ]; then
  echo "== bench_nlm"
  nlm_dump=
  if [ "${NW_SKIP_NLM_PEER:-0}" != 1 ] && python3 -c "import torch" 2>/dev/null; then
    nlm_dump=/tmp/nwnlm-patches
    rm -rf "$nlm_dump"
  fi
  timeout 300 "$build/bench/bench_nlm" --sizes "${NW_NLM_SIZES:-17500,50000,100000,175000}" \
    --check-rows 256 --kernel "${NW_NLM_KERNELS:-both}" ${nlm_dump:+--dump-patches "$nlm_dump"} \
    --json "$OUT/bench_nlm.json" >"$OUT/bench_nlm.log" 2>&1
  record bench_nlm $? "$(grep -E '^(N |  tc)' "$OUT/bench_nlm.log" | awk '$1 == "N" {printf "N=%s %s ms %s TF/s; ", $2, $7, $12} $1 ~ /^tc/ {printf "%s %s ms; ", $1, $2}')"
  cat "$OUT/bench_nlm.log"
  if [ -n "$nlm_dump" ]; then
    timeout 120 python3 bench/peer_nlm_torch.py --patches "$nlm_dump" \
      --json "$OUT/peer_nlm_torch.json" >"$OUT/peer_nlm_torch.log" 2>&1
    record peer_nlm_torch $? "$(grep -E '^N .* torch' "$OUT/peer_nlm_torch.log" | awk '{printf "N=%s %s %s ms set %s; ", $2, $4, $5, $(NF-1)}' | cut -c1-240)"
    cat "$OUT/peer_nlm_torch.log"
    rm -rf "$nlm_dump"
  fi
fi

# --- nlm-surface on a whole brain: the demo's brain-extracted Colin27 at NW_NLM_BRAIN_MM (1)
# mm made a mask (voxels > 0, nibabel), `neurowarp-cli denoise-surface` with its
# defaults on CUDA, --json: band size N and ms per iteration, and the wall time from the
# command to its files (NW_SKIP_NLM_BRAIN=1: not; NW_NLM_BRAIN_TIMEOUT s, default 300, per run;
# NW_NLM_BRAIN_KERNELS="exact tc" runs it with each top-m kernel and compares the SDFs (default
# tc, the method's own); at 1 mm
# the band holds about 462k voxels) --------------------------------------------------------------
if [ -x "$build/app/neurowarp-cli" ] && [ "${NW_SKIP_NLM_BRAIN:-0}" != 1 ]; then
  echo "== nlm brain"
  cli=$build/app/neurowarp-cli
  mm=${NW_NLM_BRAIN_MM:-1}
  nb=/tmp/nwnlmbrain
  rm -rf "$nb"
  "$cli" demo-data "$nb" --resolution "$mm" >"$OUT/nlm_brain.log" 2>&1 &&
    python3 -c "import sys, nibabel as nib, numpy as np
f = nib.load(sys.argv[1])
nib.save(nib.Nifti1Image((np.asarray(f.dataobj) > 0).astype(np.uint8), f.affine), sys.argv[2])
" "$nb/fixed_${mm}mm.nii.gz" "$nb/brain_${mm}mm.nii.gz" >>"$OUT/nlm_brain.log" 2>&1
  for kern in ${NW_NLM_BRAIN_KERNELS:-tc}; do
    t0=$(date +%s.%N)
    NW_NLM_KERNEL=$kern timeout "${NW_NLM_BRAIN_TIMEOUT:-300}" "$cli" denoise-surface "$nb/brain_${mm}mm.nii.gz" \
      -o "$OUT/nlm_brain_${mm}mm_$kern" --device cuda --json >"$OUT/nlm_brain_${mm}mm_$kern.jsonl" 2>>"$OUT/nlm_brain.log"
    rc=$?
    t1=$(date +%s.%N)
    record "nlm brain ${mm}mm cuda $kern" $rc "$(python3 -c "
import json, sys
its, summ = [], {}
for line in open('$OUT/nlm_brain_${mm}mm_$kern.jsonl'):
    d = json.loads(line)
    if d.get('summary'):
        summ = d
    elif 'iteration' in d:
        its.append(d)
src = [l for l in open('$nb/README.txt') if l.startswith('Source:')]
print(src[0].split('(')[0].strip() if src else '', '; wall %.2f s;' % ($t1 - $t0),
      'N/ms per iteration', ' '.join('%d/%.0f' % (d['band'], d['ms']) for d in its) + ';',
      'time_s', ' '.join('%s %.2f' % kv for kv in summ.get('time_s', {}).items()))
" 2>&1 | cut -c1-300)"
  done
  # the two kernels' SDFs must be the same bytes (the tc kernel is exact by construction)
  if [ -f "$OUT/nlm_brain_${mm}mm_exact_sdf.nii.gz" ] && [ -f "$OUT/nlm_brain_${mm}mm_tc_sdf.nii.gz" ]; then
    cmp <(gzip -dc "$OUT/nlm_brain_${mm}mm_exact_sdf.nii.gz") <(gzip -dc "$OUT/nlm_brain_${mm}mm_tc_sdf.nii.gz") \
      >>"$OUT/nlm_brain.log" 2>&1
    record "nlm brain ${mm}mm: tc SDF = exact SDF" $? "cmp of the decompressed NIfTIs"
  fi
  tail -n 5 "$OUT/nlm_brain.log"
  rm -rf "$nb" "$OUT"/nlm_brain_*_sdf.nii.gz "$OUT"/nlm_brain_*_surface.*
fi

# --- fluid (issue 14): per-iteration time at 128^3, 192x128x192, 240^3 for both force variants,
# the force kernel's GFLOP/s and GB/s against the peaks, a full 240^3 registration per level
# with the method's phases, the CPU at 128^3 on one thread and on all; the variants checked
# against the CPU force first (exit 1 when they differ) ------------------------------------
if [ -x "$build/bench/bench_fluid" ] && [ "${NW_SKIP_FLUID_BENCH:-0}" != 1 ]; then
  echo "== bench_fluid"
  # shellcheck disable=SC2086 # NW_FLUID_BENCH_ARGS: extra options, e.g. "--sizes 240x240x240"
  timeout "${NW_FLUID_BENCH_TIMEOUT:-420}" "$build/bench/bench_fluid" ${NW_FLUID_BENCH_ARGS:-} \
    --json "$OUT/bench_fluid.json" >"$OUT/bench_fluid.log" 2>&1
  record bench_fluid $? "$(grep -E '^(iteration|full|cpu) ' "$OUT/bench_fluid.log" | cut -c1-80 | tr '\n' ';')"
  cat "$OUT/bench_fluid.log"
fi

# --- the distributed MI metric (issue 16): evaluations per second of a 16384² section, the
# memory cap forcing 2 and 4 blocks a rank, both strategies, one process and mpirun -n R (a
# GPU per rank where there are several); the CUDA histograms checked against the CPU's first
if [ -x "$build/bench/bench_distributed_mi" ] && [ "${NW_SKIP_DMI_BENCH:-0}" != 1 ]; then
  echo "== bench_distributed_mi"
  dmi_t0=$SECONDS
  # NW_DMI_MODES: "per-rank" (the cap forces k blocks on every rank: both strategies) and/or
  # "fixed" (one GPU's cap at every rank count, strong scaling: the replicated strategy)
  for mode in ${NW_DMI_MODES:-per-rank}; do
    tag=; mode_args=()
    [ "$mode" = fixed ] && tag=fixed_ && mode_args=(--strategies replicated --cap-mode fixed)
    for r in ${NW_DMI_RANKS:-1 2 4}; do
      left=$((${NW_DMI_BUDGET:-150} - (SECONDS - dmi_t0)))
      if [ "$left" -lt 15 ]; then
        record "bench_distributed_mi $mode $r ranks" 77 "the ${NW_DMI_BUDGET:-150} s budget is spent"
        continue
      fi
      cmd=("$build/bench/bench_distributed_mi")
      base=()
      if [ "$r" -gt 1 ]; then
        [ -f "$OUT/bench_distributed_mi_${tag}1.json" ] && base=(--baseline "$OUT/bench_distributed_mi_${tag}1.json")
        if [ -n "$mpirun" ]; then
          cmd=("$mpirun" -n "$r" --oversubscribe --bind-to none -x OMP_NUM_THREADS
               "$build/bench/bench_distributed_mi")
        else
          cmd+=(--ranks "$r") # no mpirun: simulated ranks on threads (loopback)
        fi
      fi
      log=$OUT/bench_distributed_mi_${tag}$r.log
      OMP_NUM_THREADS=$(($(nproc) / r > 0 ? $(nproc) / r : 1)) timeout "$left" "${cmd[@]}" \
        --device cuda --size "${NW_DMI_SIZE:-16384}" "${mode_args[@]}" "${base[@]}" \
        --json "$OUT/bench_distributed_mi_${tag}$r.json" >"$log" 2>&1
      record "bench_distributed_mi $mode $r ranks" $? "$(grep -E '^[0-9]+ +(replicated|distributed)' "$log" | awk '{printf "%s k=%s %s ev/s; ", $2, $4, $9}')"
      cat "$log"
    done
  done
fi

# --- batch throughput (issue 16/17): NW_BATCH_PAIRS drawn demo pairs at 2 mm (seeds 101, 103,
# ...), demons with the brain preset on CUDA, `neurowarp-cli batch` as one process and under
# mpirun -n R (NW_BATCH_RANKS, default "1 2 4"; a rank per GPU where there are several: the
# CUDA jobs take local rank % devices), pairs per minute from command to table
# (NW_BATCH_BENCH=1; NW_BATCH_BUDGET s for all, default 150) -------------------------------------
if [ "${NW_BATCH_BENCH:-0}" = 1 ] && [ -x "$build/app/neurowarp-cli" ]; then
  echo "== batch throughput"
  cli=$build/app/neurowarp-cli
  bw=/tmp/nwbatch
  rm -rf "$bw" && mkdir -p "$bw"
  echo "id,fixed,moving,fixed_labels,moving_labels" >"$bw/pairs.csv"
  for ((q = 0; q < ${NW_BATCH_PAIRS:-16}; q++)); do
    seed=$((101 + 2 * q))
    "$cli" demo-data "$bw/c$seed" --draw --seed "$seed" --resolution 2 >>"$OUT/batch_bench.log" 2>&1
    echo "c$seed,c$seed/fixed_2mm.nii.gz,c$seed/moving_2mm.nii.gz,c$seed/fixed_labels_2mm.nii.gz,c$seed/moving_labels_2mm.nii.gz" >>"$bw/pairs.csv"
  done
  bt0=$SECONDS
  for r in ${NW_BATCH_RANKS:-1 2 4}; do
    left=$((${NW_BATCH_BUDGET:-150} - (SECONDS - bt0)))
    if [ "$left" -lt 15 ]; then
      record "batch $r ranks" 77 "the ${NW_BATCH_BUDGET:-150} s budget is spent"
      continue
    fi
    cmd=("$cli")
    [ "$r" -gt 1 ] && [ -n "$mpirun" ] && cmd=("$mpirun" -n "$r" --oversubscribe --bind-to none -x OMP_NUM_THREADS "$cli")
    t0=$(date +%s.%N)
    OMP_NUM_THREADS=$(($(nproc) / r > 0 ? $(nproc) / r : 1)) timeout "$left" "${cmd[@]}" batch \
      "$bw/pairs.csv" --out "$bw/out$r" --params resources/presets/demons-brain-mri.ini \
      --device cuda >>"$OUT/batch_bench.log" 2>&1
    rc=$?
    wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
    cp "$bw/out$r/batch_summary.json" "$OUT/batch_summary_$r.json" 2>/dev/null
    record "batch $r ranks" $rc "wall ${wall} s; $(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
t = d.get('totals', d)
print({k: v for k, v in t.items() if not isinstance(v, (list, dict))})" "$bw/out$r/batch_summary.json" 2>&1 | cut -c1-300)"
  done
  rm -rf "$bw"
fi

# --- live view while a demons job runs on the same GPU: interop vs host frames, drawn as fast
# as possible and paced like a 60 Hz display --------------------------------------------------
if [ -x "$build/bench/bench_live" ] && [ "${NW_SKIP_LIVE_BENCH:-0}" != 1 ]; then
  live_s=${NW_LIVE_SECONDS:-8}
  live_run=0
  for hz in ${NW_LIVE_REFRESH:-0 60}; do
    # a rate named again (NW_LIVE_REFRESH="60 60 60": repeated runs) gets its own files
    live_run=$((live_run + 1))
    tag=$hz
    [ -e "$OUT/bench_live_$tag.json" ] && tag=${hz}_$live_run
    echo "== bench_live refresh $hz ($tag)"
    variants=()
    [ "$hz" = 60 ] && [ "${NW_LIVE_VARIANTS:-1}" = 1 ] && variants=(--variants)
    # two paths and the job alone twice, or eleven variants at 60 Hz
    limit=$((${#variants[@]} > 0 ? 13 * live_s + 60 : 2 * live_s + 60))
    # beside it, how often the machine itself held a thread up (bench_stalls: no GPU, one
    # thread; NW_SKIP_STALLS=1: not): late host frames come in such moments
    stalls_pid=
    if [ -x "$build/bench/bench_stalls" ] && [ "${NW_SKIP_STALLS:-0}" != 1 ]; then
      "$build/bench/bench_stalls" --seconds "$((limit - 60))" --json "$OUT/bench_stalls_$tag.json" \
        >"$OUT/bench_stalls_$tag.log" 2>&1 &
      stalls_pid=$!
    fi
    timeout "$limit" "$build/bench/bench_live" --size "${NW_LIVE_SIZE:-256}" --seconds "${NW_LIVE_SECONDS:-8}" \
      --path "${NW_LIVE_PATH:-both}" \
      --refresh "$hz" "${variants[@]}" --json "$OUT/bench_live_$tag.json" >"$OUT/bench_live_$tag.log" 2>&1
    record "bench_live refresh $tag" $? "$(grep -E '^(interop|host) ' "$OUT/bench_live_$tag.log" | cut -c1-90 | tr '\n' ' ')"
    cat "$OUT/bench_live_$tag.log"
    if [ -n "$stalls_pid" ]; then
      wait "$stalls_pid"
      record "bench_stalls $tag" $? "$(cut -c1-200 "$OUT/bench_stalls_$tag.log")"
    fi
  done
fi

# --- the long fuzz run beside what follows (NW_FUZZ_SECONDS > 0 and the harnesses carried in
# .fuzz-carry: docs/FUZZING.md). It starts after the benchmarks that time the GPU against the
# display (bench_affine, bench_live), so that their figures are not taken beside it. The
# harnesses use the CPU only; they run under nice 19 so that the tests keep their cores, and
# their corpus comes back as fuzz.tar.gz.
fuzz_pid=
if [ "${NW_FUZZ_SECONDS:-0}" -gt 0 ] && [ -f .fuzz-carry/harnesses.tar.xz ]; then
  fz=/tmp/nwfuzz
  mkdir -p $fz/h $fz/out
  tar -xJf .fuzz-carry/harnesses.tar.xz -C $fz/h
  [ -f .fuzz-carry/corpus.tar.gz ] && tar -xzf .fuzz-carry/corpus.tar.gz -C $fz/out
  (LD_LIBRARY_PATH=$fz/h/lib NW_FUZZ_BIN=$fz/h/bin NW_FUZZ_OUT=$fz/out \
     nice -n 19 bash scripts/fuzz.sh 1000000000 "${NW_FUZZ_JOBS:-13}" >"$OUT/fuzz.log" 2>&1) &
  fuzz_pid=$!
  record fuzz-start 0 "$NW_FUZZ_SECONDS s per harness, ${NW_FUZZ_JOBS:-13} at a time"
fi

# --- the GUI itself on the GPU: Xvfb with NVIDIA's GLX, the 1 mm demo pair, demons on CUDA,
# screenshots mid-run (the GUI binary is built HERE with GTK and carried in .gpu-gui) -------
if [ -x .gpu-gui/neurowarp ] && [ -f scripts/gpu-host/gui.sh ] && [ "${NW_SKIP_GUI:-0}" != 1 ]; then
  echo "== gui"
  mkdir -p /usr/share/mricron/templates && cp "$repo"/.gpu-scripts/templates/* /usr/share/mricron/templates/
  mkdir -p /tmp/nwdemo /tmp/nwgui-out
  [ -x "$build/app/neurowarp-cli" ] && "$build/app/neurowarp-cli" demo-data /tmp/nwdemo >"$OUT/gui_demo.log" 2>&1
  OUT=$OUT timeout 180 bash scripts/gpu-host/gui.sh --probe .gpu-gui/neurowarp --no-demo --shot-size 320 \
    --script scripts/gpu-host/gui-run.nwscript >"$OUT/gui.log" 2>&1
  record gui $? "$(grep -E 'readouts:|renderer' "$OUT/gui.log" | head -4 | cut -c1-200 | tr '\n' ' ')"
  cp /tmp/nwgui-out/*.png "$OUT/" 2>/dev/null
  tail -n 40 "$OUT/gui.log"
fi

# --- log-demons benchmark (before the sanitizers, which may use up the time budget) -------
if [ -x "$build/bench/bench_demons" ] && [ "${NW_SKIP_DEMONS_BENCH:-0}" != 1 ]; then
  echo "== bench_demons"
  export NW_TEMPLATES_DIR=$repo/.gpu-scripts/templates
  OMP_NUM_THREADS=1 timeout 120 "$build/bench/bench_demons" --cpu-only --cpu-sizes 128 \
    --cpu-iters 2 --json "$OUT/bench_demons_cpu1.json" >"$OUT/bench_demons_cpu1.log" 2>&1
  record bench_demons_cpu1 $? "$(tail -1 "$OUT/bench_demons_cpu1.log")"
  timeout 240 "$build/bench/bench_demons" --sizes "${NW_BENCH_SIZES:-128,192,256,320}" \
    --cpu-sizes 128 --cpu-iters 3 --demo-mm 1 --json "$OUT/bench_demons.json" \
    >"$OUT/bench_demons.log" 2>&1
  record bench_demons $? "bench_demons.log"
  cat "$OUT/bench_demons.log"
  # Parameter sweep on the demo case: every configuration of bench/demons_sweep.txt for each
  # demo seed (different deformations, noise and bias) and resolution asked for.
  if [ -f bench/demons_sweep.txt ] && [ "${NW_SKIP_SWEEP:-0}" != 1 ]; then
    for mm in ${NW_SWEEP_MM:-2}; do
      for seed in ${NW_SWEEP_SEEDS:-1 2 3}; do
        NW_DEMO_SEED=$seed timeout 150 "$build/bench/bench_demons" --sizes "" --cpu-sizes "" \
          --demo-mm 0 --sweep @bench/demons_sweep.txt --sweep-mm "$mm" \
          --json "$OUT/sweep_${mm}mm_seed$seed.json" >"$OUT/sweep_${mm}mm_seed$seed.log" 2>&1
        record "sweep ${mm}mm seed $seed" $? "sweep_${mm}mm_seed$seed.log"
      done
    done
  fi
fi

# --- neurowarp-cli demons on the demo pair, on the GPU, with every output -------------------
if [ -x "$build/app/neurowarp-cli" ] && [ -d "$repo/.gpu-scripts/templates" ] &&
  [ "${NW_SKIP_CLI:-0}" != 1 ]; then
  echo "== cli demons"
  cli=$build/app/neurowarp-cli
  demo=$OUT/demo
  mkdir -p /usr/share/mricron/templates && cp "$repo"/.gpu-scripts/templates/* /usr/share/mricron/templates/
  "$cli" demo-data "$demo" >"$OUT/cli_demo.log" 2>&1
  for res in 2mm 1mm; do
    /usr/bin/time -f "%e s wall" "$cli" demons "$demo/fixed_$res.nii.gz" "$demo/moving_$res.nii.gz" \
      -o "$OUT/cli_$res" --device cuda --params resources/presets/demons-brain-mri.ini --outputs all \
      --fixed-labels "$demo/fixed_labels_$res.nii.gz" --moving-labels "$demo/moving_labels_$res.nii.gz" \
      >>"$OUT/cli_demo.log" 2>&1
    record "cli demons cuda $res" $? "$(python3 -c "import json; d=json.load(open('$OUT/cli_${res}_summary.json')); print('device', d['device'], 'iterations', d['iterations'], 'time_s', ' '.join('%s %.3f' % kv for kv in d['time_s'].items()), 'mean Dice %.4f' % d['mean_dice'], 'folds', d['final']['folds'])" 2>&1)"
  done
  # what a user waits for: command -> files, default outputs (warped, forward), no labels
  for res in 2mm 1mm; do
    t0=$(date +%s.%N)
    "$cli" demons "$demo/fixed_$res.nii.gz" "$demo/moving_$res.nii.gz" -o "$OUT/cli_default_$res" \
      --device cuda --params resources/presets/demons-brain-mri.ini >>"$OUT/cli_demo.log" 2>&1
    rc=$?
    record "cli demons cuda $res default outputs" $rc "$(python3 -c "import json; d=json.load(open('$OUT/cli_default_${res}_summary.json')); print('wall %.2f s;' % ($(date +%s.%N) - $t0), ' '.join('%s %.3f' % kv for kv in d['time_s'].items()))" 2>&1)"
  done
  # where the 2 mm command's wall time outside its own clock goes: from its start to its
  # summary file (written last) and from there to its exit (CUDA's teardown), beside the
  # start and exit of a process that touches no GPU (--version)
  sum=$OUT/cli_exit_2mm_summary.json
  t0=$(date +%s.%N)
  "$cli" demons "$demo/fixed_2mm.nii.gz" "$demo/moving_2mm.nii.gz" -o "$OUT/cli_exit_2mm" \
    --device cuda --params resources/presets/demons-brain-mri.ini >>"$OUT/cli_demo.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ ! -e "$sum" ]; do sleep 0.001; done
  t_sum=$(date +%s.%N)
  wait "$pid"
  rc=$?
  t1=$(date +%s.%N)
  "$cli" --version >/dev/null
  t2=$(date +%s.%N)
  record "cli demons cuda 2mm: the wall outside time_s" $rc "$(python3 -c "import json; t=json.load(open('$sum'))['time_s']; print('wall %.3f s, summary file at %.3f s, exit %.3f s after it; time_s.total %.3f; --version %.3f s' % ($t1 - $t0, $t_sum - $t0, $t1 - $t_sum, t['total'], $t2 - $t1))" 2>&1)"
  ls -la "$OUT"/cli_* >>"$OUT/cli_demo.log"
  rm -rf "$demo" "$OUT"/cli_*.nii.gz # large; the summaries stay in logs.tar.gz
fi

# --- demons on cases it was not tuned on (issue 12): bench/demons_generalize.py on drawn
# cases (NW_GENERALIZE=1; NW_GEN_MM resolutions, NW_GEN_SEEDS, NW_GEN_CONFIGS, NW_GEN_CHOOSE
# to report a configuration without tuning, NW_GEN_TIMEOUT s each) ---------------------------
if [ "${NW_GENERALIZE:-0}" = 1 ] && [ -x "$build/app/neurowarp-cli" ] &&
  [ -d "$repo/.gpu-scripts/templates" ]; then
  echo "== demons generalize"
  mkdir -p /usr/share/mricron/templates && cp "$repo"/.gpu-scripts/templates/* /usr/share/mricron/templates/
  for mm in ${NW_GEN_MM:-2}; do
    timeout "${NW_GEN_TIMEOUT:-400}" python3 bench/demons_generalize.py \
      --cli "$build/app/neurowarp-cli" --work "/tmp/nwgen$mm" --seeds "${NW_GEN_SEEDS:-100-123}" \
      --resolution "$mm" --configs "${NW_GEN_CONFIGS:-bench/demons_generalize.txt}" --device cuda \
      --report-also "${NW_GEN_REPORT_ALSO-brain-preset,defaults}" ${NW_GEN_CHOOSE:+--choose "$NW_GEN_CHOOSE"} \
      --json "$OUT/generalize_${mm}mm.json" >"$OUT/generalize_${mm}mm.log" 2>&1
    record "generalize ${mm}mm" $? "$(grep 'reporting half' "$OUT/generalize_${mm}mm.log" | cut -c17-120 | tr '\n' ';')"
    grep -E 'half|made' "$OUT/generalize_${mm}mm.log"
    # FireANTs greedy and SyN on the same reporting half (NW_GEN_PEERS=1, wheels in .peers)
    if [ "${NW_GEN_PEERS:-0}" = 1 ] && peers_ready; then
      odd=$(python3 -c "import json; print(','.join(map(str, json.load(open('$OUT/generalize_${mm}mm.json'))['reporting_seeds'])))")
      PYTHONPATH=/tmp/nwpeers${PYTHONPATH:+:$PYTHONPATH} timeout "${NW_GEN_PEER_TIMEOUT:-300}" \
        python3 bench/peer_demons_fireants.py --work "/tmp/nwgen$mm" --seeds "$odd" \
        --resolution "$mm" --json "$OUT/peer_demons_fireants_${mm}mm.json" \
        >"$OUT/peer_demons_fireants_${mm}mm.log" 2>&1
      record "fireants ${mm}mm" $? "$(grep 'reporting half' "$OUT/peer_demons_fireants_${mm}mm.log" | cut -c17-150 | tr '\n' ';')"
      grep -E 'half|Error|error:' "$OUT/peer_demons_fireants_${mm}mm.log" | tail -n 5
    fi
  done
fi

# --- fluid beside demons on the same drawn cases (issue 14): bench/demons_generalize.py
# --method fluid tunes bench/fluid_generalize.txt on the even seeds and reports the chosen
# configuration beside demons' brain preset on the odd ones (NW_FLUID_GENERALIZE=1;
# NW_FGEN_MM, NW_FGEN_SEEDS, NW_FGEN_CONFIGS, NW_FGEN_CHOOSE to report without tuning,
# NW_FGEN_REPORT_ALSO, NW_FGEN_TIMEOUT s, default 200: the script stops tuning in time to
# report). The cases are the NW_GENERALIZE step's (/tmp/nwgenMM), made here when absent. ----
if [ "${NW_FLUID_GENERALIZE:-0}" = 1 ] && [ -x "$build/app/neurowarp-cli" ] &&
  [ -d "$repo/.gpu-scripts/templates" ]; then
  echo "== fluid generalize"
  mkdir -p /usr/share/mricron/templates && cp "$repo"/.gpu-scripts/templates/* /usr/share/mricron/templates/
  fgen_timeout=${NW_FGEN_TIMEOUT:-200}
  for mm in ${NW_FGEN_MM:-2}; do
    timeout "$fgen_timeout" python3 bench/demons_generalize.py --method fluid \
      --cli "$build/app/neurowarp-cli" --work "/tmp/nwgen$mm" --seeds "${NW_FGEN_SEEDS:-100-123}" \
      --resolution "$mm" --configs "${NW_FGEN_CONFIGS:-bench/fluid_generalize.txt}" --device cuda \
      --report-also "${NW_FGEN_REPORT_ALSO-demons:brain-mri}" ${NW_FGEN_CHOOSE:+--choose "$NW_FGEN_CHOOSE"} \
      --budget-s $((fgen_timeout - 15)) --json "$OUT/fluid_generalize_${mm}mm.json" \
      >"$OUT/fluid_generalize_${mm}mm.log" 2>&1
    record "fluid generalize ${mm}mm" $? "$(grep 'reporting half' "$OUT/fluid_generalize_${mm}mm.log" | cut -c17-150 | tr '\n' ';')"
    grep -E 'half|made|skipped' "$OUT/fluid_generalize_${mm}mm.log"
    cp "$OUT/fluid_generalize_${mm}mm.json" "$FINAL_OUT/" 2>/dev/null
  done
fi

# --- CUDA tests under compute-sanitizer -------------------------------------------------------
# The tests labelled cuda (nw_add_test ... CUDA), found from ctest's own listing.
cuda_tests() {
  ctest --test-dir "$build" -L cuda --show-only=json-v1 2>/dev/null | python3 -c '
import json, sys
for t in json.load(sys.stdin).get("tests", []):
    cmd = t.get("command") or []
    if cmd:
        print(t["name"] + "\t" + cmd[0])
' 2>/dev/null ||
    ctest --test-dir "$build" -L cuda -N 2>/dev/null |
    sed -n 's/^ *Test *#[0-9]*: *\(.*\)$/\1/p' | while read -r t; do
      printf '%s\t%s\n' "$t" "$build/tests/$t"
    done
}
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ "${NW_SKIP_SANITIZERS:-0}" = 1 ]; then
  record compute-sanitizer 77 "NW_SKIP_SANITIZERS=1"
elif [ -z "$sanitizer" ]; then
  record compute-sanitizer 1 "compute-sanitizer not found"
else
  list=$(cuda_tests)
  [ -n "$list" ] || record compute-sanitizer 1 "no tests labelled cuda were found"
  export NW_TEST_DATA=$repo/tests/data G_DEBUG=fatal-criticals
  while IFS=$'\t' read -r name exe; do
    [ -n "$name" ] || continue
    [[ -z "${NW_SANITIZE_ONLY:-}" || "$name" =~ $NW_SANITIZE_ONLY ]] || continue
    for tool in memcheck racecheck; do
      left=$((budget - SECONDS))
      if [ "$left" -lt 20 ]; then
        record "$tool $name" 77 "time budget of ${budget}s spent"
        continue
      fi
      # test_cuda_dmi's ranks are threads sharing one context: racecheck lost track of their
      # concurrent launches there ("failure to track a kernel launch") and stalled (H100,
      # 2026-11-26); the same kernels are raced-checked below as mpirun ranks, a process each
      if [ "$tool" = racecheck ] && [ "$name" = test_cuda_dmi ]; then
        record "$tool $name" 77 "ranks as threads; see 'racecheck mpirun ranks'"
        continue
      fi
      run_timeout=$((left < san_timeout ? left : san_timeout))
      extra=() args=()
      [ "$tool" = memcheck ] && extra=(--leak-check full)
      if [[ -n "${NW_SANITIZE_SKIP:-}" && "$tool $name" =~ $NW_SANITIZE_SKIP ]]; then
        record "$tool $name" 77 "NW_SANITIZE_SKIP"
        continue
      fi
      # shellcheck disable=SC2206 # GLib test options, e.g. "-s /cuda/nlm/top-m-large"
      [ "$tool" = racecheck ] && args=(${NW_RACECHECK_ARGS:-})
      # under racecheck the tests take their small cases only (NW_TEST_SMALL; e.g.
      # test_cuda_nlm's 16k-row band, minutes there): the kernels and paths are the same
      small=
      [ "$tool" = racecheck ] && small=1
      log=$OUT/$tool-$name.log
      echo "== $tool $name"
      (cd "$build/tests" 2>/dev/null || cd "$build"
       env ${small:+NW_TEST_SMALL=1} timeout "$run_timeout" "$sanitizer" --tool "$tool" "${extra[@]}" \
         --error-exitcode 1 "$exe" "${args[@]}") >"$log" 2>&1
      rc=$?
      record "$tool $name" "$rc" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
      [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || tail -n 30 "$log"
    done
  done <<<"$list"
  # the distributed metric's CUDA path as mpirun runs it: 2 ranks, each under the tool
  # (tests/affine_dist_cli_test.py's NW_RANK_WRAPPER), both strategies; the test still checks
  # the transforms
  if [ -n "$mpirun" ] && [[ -z "${NW_SANITIZE_ONLY:-}" || dmi =~ $NW_SANITIZE_ONLY ]]; then
    for tool in memcheck racecheck; do
      left=$((budget - SECONDS))
      if [ "$left" -lt 30 ]; then
        record "$tool mpirun ranks" 77 "time budget of ${budget}s spent"
        continue
      fi
      echo "== $tool mpirun ranks"
      # memcheck without API-error reports: NCCL 2.28.3's start-up (ranks with a GPU each) asks
      # cudaFuncGetAttributes of kernels its fatbin lacks for this GPU and gets
      # cudaErrorNoKernelImageForDevice, 8 a rank, which memcheck counts as errors; every API
      # call of neurowarp's own is checked by its caller (NW_CUDA_CHECK), so the test fails on
      # those anyway. Memory access errors are still reported.
      api=()
      [ "$tool" = memcheck ] && api=(--report-api-errors no)
      (cd "$build" && NW_RANK_WRAPPER="$sanitizer --tool $tool ${api[*]} --error-exitcode 9" \
        timeout "$((left < san_timeout ? left : san_timeout))" \
        ctest -V -R '^affine_dist_cli_mpi_cuda$') >"$OUT/$tool-mpirun-ranks.log" 2>&1
      rc=$?
      record "$tool mpirun ranks" "$rc" "$(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$OUT/$tool-mpirun-ranks.log") clean rank runs; $(grep -E 'tests passed' "$OUT/$tool-mpirun-ranks.log")"
      [ "$rc" -eq 0 ] || tail -n 30 "$OUT/$tool-mpirun-ranks.log"
    done
  fi
fi

# --- the fuzz run's end: its logs, findings and grown corpus --------------------------------
if [ -n "$fuzz_pid" ]; then
  wait "$fuzz_pid"
  record fuzz $? "$(grep -c ' exit 0 ' "$OUT/fuzz.log") harnesses exited 0"
  cp $fz/out/*.log "$OUT/" 2>/dev/null
  tar czf "$FINAL_OUT/fuzz.tar.gz" -C $fz/out corpus artifacts $(cd $fz/out && ls *.log)
fi

# --- summary, last -----------------------------------------------------------------------------
{
  echo
  echo "==== neurowarp GPU host summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
  printf '%s\n' "${summary[@]}"
  [ "$failed" -eq 0 ] && echo "ALL OK" || echo "SOME STEPS FAILED (logs in $OUT)"
} | tee "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL_OUT/" 2>/dev/null # ctest.log is in logs.tar.gz (8 files at most)
tar czf "$FINAL_OUT/logs.tar.gz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
exit "$failed"
