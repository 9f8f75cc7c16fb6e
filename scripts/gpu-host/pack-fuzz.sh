#!/bin/bash
# Run HERE: builds the libFuzzer harnesses (clang, ASan + UBSan, RelWithDebInfo, as
# scripts/fuzz.sh builds them), writes their seed corpus, and packs them for a host without
# the project's libraries into <repo>/.fuzz-carry/harnesses.tar.xz (git-ignored):
#   bin/fuzz_*      the harnesses
#   bin/corpus/     the seeds (make_seeds)
#   lib/            the shared libraries they load, except the C runtime (glibc, libgcc,
#                   libstdc++), which a newer host has
# scripts/gpu-host/test.sh unpacks it there and runs scripts/fuzz.sh with NW_FUZZ_BIN and
# LD_LIBRARY_PATH pointing into it (NW_FUZZ_SECONDS > 0). A grown corpus from an earlier
# session goes beside it as .fuzz-carry/corpus.tar.gz (a folder corpus/<harness>/).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
build=build-fuzz # scripts/fuzz.sh's
NW_FUZZ_BUILD_ONLY=1 bash scripts/fuzz.sh >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
src=$build/tests/fuzz
for h in "$src"/fuzz_*; do
  case $h in *.*) continue ;; esac
  [ -x "$h" ] && cp "$h" "$stage/bin/"
done
cp -r "$src/corpus" "$stage/bin/corpus"
# The libraries the harnesses load, resolved here, minus the C runtime.
for h in "$stage"/bin/fuzz_*; do
  ldd "$h" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r so; do
  case $(basename "$so") in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libgcc_s.so* | \
      libstdc++.so* | libresolv.so*) continue ;;
  esac
  cp -L "$so" "$stage/lib/"
done
mkdir -p .fuzz-carry
tar -cJf .fuzz-carry/harnesses.tar.xz.tmp -C "$stage" bin lib
mv .fuzz-carry/harnesses.tar.xz.tmp .fuzz-carry/harnesses.tar.xz
echo "pack-fuzz.sh: $(ls "$stage"/bin | grep -c '^fuzz_') harnesses, $(ls "$stage/lib" | wc -l)" \
  "libraries: .fuzz-carry/harnesses.tar.xz ($(du -h .fuzz-carry/harnesses.tar.xz | cut -f1))"
