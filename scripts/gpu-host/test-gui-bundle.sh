#!/bin/bash
# Run HERE (Debian 12, root): proves that .gpu-gui/runtime.tar.xz (scripts/gpu-host/fetch-gui.sh)
# holds everything Xvfb and the GUI need, by running scripts/gpu-host/gui.sh inside a chroot
# that has nothing but what a bare GPU host has:
#   glibc, libstdc++, libgcc_s (a bare Ubuntu 24.04), libgomp (comes with gcc, which nvcc
#   needs), libcudart (the CUDA toolkit), bash + libtinfo (Ubuntu's shell), /bin/sh and the
#   coreutils-like tools from busybox-static (no shared libraries), glibc's static ldconfig,
#   and the libglvnd loaders of .gl unpacked into / (as gui.sh does there).
# There is no NVIDIA driver here, so the GL client is Mesa's (softpipe, from the bundle).
#
#   bash scripts/gpu-host/test-gui-bundle.sh [GUI_BINARY [ARGS...]]
# default: build/ui/neurowarp --no-demo --screenshot /tmp/out/x.png
# Results (Xvfb log, probe, command log, the screenshot, a whole-screen grab) go to
# $OUT (default ./out/gui-bundle-test). Exit status: gui.sh's.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$repo/out/gui-bundle-test}
[ "$(id -u)" = 0 ] || { echo "needs root (chroot, mount)" >&2; exit 1; }
[ -f "$repo/.gpu-gui/runtime.tar.xz" ] || { echo "no .gpu-gui/runtime.tar.xz: run fetch-gui.sh" >&2; exit 1; }
ls "$repo"/.gl/*.deb >/dev/null 2>&1 || { echo "no .gl/*.deb: run scripts/gpu-host/fetch.sh" >&2; exit 1; }
command -v busybox >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq busybox-static >/dev/null
if [ $# -gt 0 ]; then
  gui=$(readlink -f "$1")
  shift
  args=("$@")
else
  gui=$repo/build/ui/neurowarp
  args=(--no-demo --screenshot /tmp/out/x.png)
fi
arch=x86_64-linux-gnu
R=$(mktemp -d /tmp/nwgui-root.XXXXXX)
cleanup() {
  for m in "$R/repo" "$R/gui" "$R/tmp" "$R/proc" "$R/dev"; do
    mountpoint -q "$m" 2>/dev/null && umount -l "$m"
  done
  rm -rf "$R"
}
trap cleanup EXIT
mkdir -p "$R/usr/bin" "$R/usr/sbin" "$R/usr/lib/$arch" "$R/usr/lib64" "$R/etc/ld.so.conf.d" \
  "$R/proc" "$R/dev" "$R/tmp" "$R/repo" "$R/gui" "$R/root" "$R/var" "$R/opt"
for d in bin sbin lib lib64; do ln -s "usr/$d" "$R/$d"; done
# the GPU host's own libraries
host_libs=(ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1
  libresolv.so.2 libutil.so.1 libmvec.so.1 libanl.so.1 libstdc++.so.6 libgcc_s.so.1
  libgomp.so.1 libtinfo.so.6)
for l in "${host_libs[@]}"; do cp -L "/lib/$arch/$l" "$R/usr/lib/$arch/"; done
ln -s "../lib/$arch/ld-linux-x86-64.so.2" "$R/usr/lib64/ld-linux-x86-64.so.2"
cudart=$(ldd "$gui" | awk '$1 ~ /^libcudart/ {print $3}')
[ -n "$cudart" ] && cp -L "$cudart" "$R/usr/lib/$arch/"
cp /bin/bash "$R/usr/bin/bash"
cp /usr/bin/ldd "$R/usr/bin/ldd" # glibc's (a bash script)
cp /sbin/ldconfig "$R/usr/sbin/ldconfig"
cp "$(command -v busybox)" "$R/usr/bin/busybox"
for a in sh cat cut tr sed grep egrep head tail tee sleep mkdir ln chmod rm ls env timeout \
         dirname basename readlink md5sum xz unxz tar id printf mountpoint kill true false awk; do
  ln -s busybox "$R/usr/bin/$a"
done
cp /etc/ld.so.conf "$R/etc/"
printf '/usr/local/lib\n/lib/%s\n/usr/lib/%s\n' "$arch" "$arch" >"$R/etc/ld.so.conf.d/$arch.conf"
# .gl into / (there gui.sh does this itself with dpkg, which this root does not have)
for f in "$repo"/.gl/*.deb; do dpkg -x "$f" "$R"; done
ldconfig -r "$R"
# the repository (read-only) and the GUI binary's folder
mount --bind "$repo" "$R/repo" && mount -o remount,bind,ro "$R/repo"
mount --bind "$(dirname "$gui")" "$R/gui" && mount -o remount,bind,ro "$R/gui"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/tmp"
mkdir -p "$R/tmp/out"
# unshare -n: a network namespace of its own (no network, as there; and its own abstract
# X sockets, so that an X server of this machine on :99 does not collide)
run() { unshare -n chroot "$R" /usr/bin/env -i PATH=/usr/bin:/usr/sbin HOME=/root OUT=/tmp/out "$@"; }

echo "== the root has no GUI libraries of its own (expect 'not found' lines):"
run LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 "/gui/$(basename "$gui")" | grep -c 'not found' || true
echo "== gui.sh --probe + the GUI, inside the chroot"
set +e
run NWGUI_ROOTSHOT=${NWGUI_ROOTSHOT:-6} /usr/bin/bash /repo/scripts/gpu-host/gui.sh --probe \
  "/gui/$(basename "$gui")" "${args[@]}"
rc=$?
set -e
echo "== every ELF file of the bundle and the GUI, resolved with LD_LIBRARY_PATH=<bundle> only:"
lp=/opt/nwgui/usr/lib/$arch
missing=0
while read -r f; do
  out=$(run LD_TRACE_LOADED_OBJECTS=1 LD_LIBRARY_PATH=$lp /lib64/ld-linux-x86-64.so.2 "$f" 2>&1) || true
  grep -qE '=>|statically' <<<"$out" || { echo "$f: cannot list: $out"; missing=1; }
  if grep -q 'not found' <<<"$out"; then
    echo "$f:"; grep 'not found' <<<"$out"; missing=1
  fi
  # nothing may come from outside the bundle but the host's libraries and libglvnd
  grep '=>' <<<"$out" | awk '{print $3}' | grep -v "^$lp/" |
    grep -vE "/(ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libgomp\.so\.1|libcudart\.so\.[0-9]+|libGL\.so\.1|libGLX\.so\.0|libGLdispatch\.so\.0|libOpenGL\.so\.0|libEGL\.so\.1)$" |
    sed "s|^|  $f: from outside the bundle: |" || true
done < <(cd "$R" && find opt/nwgui -type f \( -name '*.so*' -o -path '*/usr/bin/*' \) | sed 's|^|/|'; echo "/gui/$(basename "$gui")")
[ "$missing" = 0 ] && echo "all resolved"
rm -rf "$OUT"
mkdir -p "$OUT"
cp -r "$R/tmp/out/." "$OUT/"
[ -f "$OUT/root.xwd" ] && python3 "$repo/scripts/gpu-host/xwd2png.py" "$OUT/root.xwd" "$OUT/root.png" && rm -f "$OUT/root.xwd"
du -sh "$R/opt/nwgui"
echo "results in $OUT: $(ls "$OUT" | tr '\n' ' ')"
echo "gui.sh exit status: $rc"
exit "$rc"
