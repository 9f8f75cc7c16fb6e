#!/bin/bash
# Run THERE: on the GPU host (no display, no network, root), from the repository root or
# anywhere, with .gpu-gui (made here by scripts/gpu-host/fetch-gui.sh) and .gl (made by
# scripts/gpu-host/fetch.sh) carried along. Starts an X server of its own (Xvfb, whose GLX
# extension is backed by the bundle's Mesa softpipe driver), points the GL client at the
# NVIDIA driver's GLX through libglvnd, and runs a command on that display.
#
#   bash scripts/gpu-host/gui.sh --probe                      # which GL renderer a client gets
#   bash scripts/gpu-host/gui.sh CMD [ARGS...]                # e.g. build-gpu/ui/neurowarp --script X
#   bash scripts/gpu-host/gui.sh --probe CMD [ARGS...]        # both
#
# CMD runs from the repository root. Device tool: carry [".gpu-gui", ".gl", "build/ui/neurowarp"]
# (the GUI built here: it needs libcudart from the host's CUDA, libgomp from its gcc), e.g.
#   bash scripts/gpu-host/gui.sh --probe build/ui/neurowarp --no-demo --screenshot $OUT/x.png
#
# Steps, in order; on a failure it prints "gui.sh: FAILED at step '<step>': why" and exits 3:
#   unpack   runtime.tar.xz into $NWGUI_PREFIX (default /opt/nwgui, else /tmp/nwgui); skipped
#            when that prefix already holds this very archive
#   gl       the libglvnd loaders (.gl/*.deb) into /, + ldconfig, when libGLX.so.0 is missing
#   env      source <prefix>/env.sh; /usr/bin/xkbcomp -> the prefix's (Xvfb runs that exact
#            path), mkdir /var/lib/xkb (where Xvfb, as root, writes the compiled keymap)
#   xvfb     Xvfb :99 -screen 0 1920x1200x24 +extension GLX, stderr in $OUT/xvfb.log; waits
#            (up to $NWGUI_XVFB_WAIT s, default 30) for its socket and a first request
#   probe    (--probe) glxinfo -B with the NVIDIA GLX client and with Mesa's, the GL_RENDERER
#            lines printed; output in $OUT/probe.log
#   command  CMD with DISPLAY=:99, __GLX_VENDOR_LIBRARY_NAME=nvidia (output also in
#            $OUT/command.log); first, when CMD is an ELF file, ldd names any library that
#            neither the bundle nor the host has; Xvfb is stopped afterwards, whatever happened
# Exit status: CMD's; with --probe alone 0 when the NVIDIA client got a hardware renderer,
# else 1; 3 when a step before the command failed.
# Knobs: OUT (default ./out), NWGUI_PREFIX, NWGUI_DISPLAY (99), NWGUI_SCREEN (1920x1200x24),
# NWGUI_GLX_VENDOR (nvidia | mesa | auto = nvidia when its GLX library is found),
# NWGUI_XVFB_ARGS (extra Xvfb arguments, e.g. +iglx), NWGUI_TIMEOUT (seconds for CMD),
# NWGUI_ROOTSHOT (seconds: after that long into CMD, grab the whole screen with xwd into
# $OUT/root.png, converted by python3).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 3
repo=$PWD
OUT=${OUT:-$repo/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
display=${NWGUI_DISPLAY:-99}
screen=${NWGUI_SCREEN:-1920x1200x24}
xlog=$OUT/xvfb.log
bundle=$repo/.gpu-gui/runtime.tar.xz
xpid=

say() { echo "gui.sh: $*" >&2; }
fail() { # STEP WHY
  say "FAILED at step '$1': $2"
  if [ -s "$xlog" ]; then
    say "last lines of $xlog:"
    tail -n 20 "$xlog" >&2
  fi
  exit 3
}
stop_xvfb() {
  [ -n "$xpid" ] || return 0
  kill "$xpid" 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 "$xpid" 2>/dev/null || break
    sleep 0.3
  done
  kill -9 "$xpid" 2>/dev/null
  wait "$xpid" 2>/dev/null
  xpid=
}
trap stop_xvfb EXIT

probe=0
if [ "${1:-}" = --probe ]; then
  probe=1
  shift
fi
[ "$probe" = 1 ] || [ $# -gt 0 ] || { sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 3; }

# --- unpack ---------------------------------------------------------------------------------
[ -f "$bundle" ] || fail unpack "$bundle not found: carry .gpu-gui (make it here with scripts/gpu-host/fetch-gui.sh)"
prefix=${NWGUI_PREFIX:-/opt/nwgui}
if ! mkdir -p "$prefix" 2>/dev/null || [ ! -w "$prefix" ]; then
  prefix=/tmp/nwgui
  mkdir -p "$prefix" || fail unpack "cannot create $prefix"
fi
stamp=$(md5sum <"$bundle" | cut -d" " -f1)
if [ "$(cat "$prefix/.nwgui-stamp" 2>/dev/null)" != "$stamp" ] || [ ! -x "$prefix/usr/bin/Xvfb" ]; then
  say "unpacking $(basename "$bundle") into $prefix"
  if [ -f "$prefix/.nwgui-stamp" ]; then # an older bundle of ours: replace it
    rm -rf "${prefix:?}"/* "$prefix/.nwgui-stamp"
  elif [ -n "$(ls -A "$prefix" 2>/dev/null)" ]; then
    fail unpack "$prefix is not empty and holds no bundle of ours (set NWGUI_PREFIX)"
  fi
  if command -v xz >/dev/null; then
    xz -dc "$bundle" | tar -xf - -C "$prefix" || fail unpack "xz -dc | tar -x into $prefix failed"
  elif command -v python3 >/dev/null; then
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' \
      "$bundle" "$prefix" || fail unpack "python3 tarfile could not unpack $bundle"
  else
    fail unpack "neither xz nor python3 to unpack $bundle"
  fi
  echo "$stamp" >"$prefix/.nwgui-stamp"
fi
[ -x "$prefix/usr/bin/Xvfb" ] && [ -f "$prefix/env.sh" ] || fail unpack "$prefix lacks usr/bin/Xvfb or env.sh"

# --- gl: the libglvnd loaders, into / as scripts/gpu-host/test.sh does ----------------------
if ! ldconfig -p 2>/dev/null | grep -q 'libGLX\.so\.0 '; then
  if ls "$repo"/.gl/*.deb >/dev/null 2>&1; then
    for f in "$repo"/.gl/*.deb; do dpkg -x "$f" / || fail gl "dpkg -x $f / failed"; done
    ldconfig
  fi
  ldconfig -p 2>/dev/null | grep -q 'libGLX\.so\.0 ' ||
    fail gl "libGLX.so.0 (libglvnd) not found: carry .gl (made by scripts/gpu-host/fetch.sh)"
fi

# --- env ---------------------------------------------------------------------------------------
sys_ld=${LD_LIBRARY_PATH:-}
NWGUI_PREFIX=$prefix
# shellcheck disable=SC1091
source "$prefix/env.sh" || fail env "sourcing $prefix/env.sh failed"
gui_ld=$LD_LIBRARY_PATH
# the shell's own tools keep the system's libraries; only Xvfb and CMD get the bundle's
if [ -n "$sys_ld" ]; then export LD_LIBRARY_PATH=$sys_ld; else unset LD_LIBRARY_PATH; fi
if [ ! -e /usr/bin/xkbcomp ] || [ -L /usr/bin/xkbcomp ]; then
  ln -sf "$prefix/usr/bin/xkbcomp" /usr/bin/xkbcomp || fail env "cannot link /usr/bin/xkbcomp"
fi
mkdir -p /var/lib/xkb /tmp/.X11-unix || fail env "cannot create /var/lib/xkb or /tmp/.X11-unix"
chmod 1777 /tmp/.X11-unix 2>/dev/null
for d in "$prefix/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so" "$NWGUI_XKBDIR/rules/evdev" "$FONTCONFIG_FILE"; do
  [ -e "$d" ] || fail env "$d missing from the bundle"
done
vendor=${NWGUI_GLX_VENDOR:-auto}
if [ "$vendor" = auto ]; then
  vendor=mesa
  if ldconfig -p | grep -q 'libGLX_nvidia\.so\.0 ' ||
     ls /usr/local/nvidia/lib64/libGLX_nvidia.so.0 /usr/local/nvidia/lib/libGLX_nvidia.so.0 >/dev/null 2>&1; then
    vendor=nvidia
  else
    say "warning: libGLX_nvidia.so.0 not found: the GL client will be Mesa's (softpipe, CPU)"
  fi
fi

# --- xvfb --------------------------------------------------------------------------------------
lock=/tmp/.X$display-lock
if [ -f "$lock" ]; then
  old=$(tr -d ' ' <"$lock" 2>/dev/null)
  if [ -n "$old" ] && kill -0 "$old" 2>/dev/null; then
    fail xvfb "display :$display is taken by process $old (set NWGUI_DISPLAY)"
  fi
  rm -f "$lock" "/tmp/.X11-unix/X$display"
fi
say "starting Xvfb :$display ($screen), log $xlog"
# shellcheck disable=SC2086
env -u __GLX_VENDOR_LIBRARY_NAME LD_LIBRARY_PATH="$gui_ld" \
  "$prefix/usr/bin/Xvfb" ":$display" -screen 0 "$screen" +extension GLX -nolisten tcp -noreset \
  -fp built-ins -xkbdir "$NWGUI_XKBDIR" -dpi 96 ${NWGUI_XVFB_ARGS:-} >"$xlog" 2>&1 &
xpid=$!
export DISPLAY=:$display
wait_s=${NWGUI_XVFB_WAIT:-30}
ready=0
for ((i = 0; i < wait_s * 5; i++)); do
  kill -0 "$xpid" 2>/dev/null || { wait "$xpid"; fail xvfb "Xvfb exited (status $?) before it answered"; }
  if [ -S "/tmp/.X11-unix/X$display" ] &&
     LD_LIBRARY_PATH=$gui_ld timeout 10 xwd -root -silent -out /dev/null 2>>"$xlog"; then
    ready=1
    break
  fi
  sleep 0.2
done
[ "$ready" = 1 ] || fail xvfb "Xvfb did not answer within ${wait_s}s"
if grep -qiE 'GLX.*(fail|could not|error)|swrast.*(fail|error)|dlopen' "$xlog"; then
  say "warning: Xvfb reported GLX trouble:"
  grep -iE 'GLX|swrast|dlopen' "$xlog" >&2
fi
say "Xvfb ready (pid $xpid); GL client vendor: $vendor"

# --- probe ------------------------------------------------------------------------------------
probe_rc=0
if [ "$probe" = 1 ]; then
  plog=$OUT/probe.log
  : >"$plog"
  for v in nvidia mesa; do
    echo "=== glxinfo -B with __GLX_VENDOR_LIBRARY_NAME=$v" >>"$plog"
    LD_LIBRARY_PATH=$gui_ld __GLX_VENDOR_LIBRARY_NAME=$v timeout 30 glxinfo -B >>"$plog" 2>&1
    echo "(exit status $?)" >>"$plog"
  done
  grep -E '^===|direct rendering|OpenGL (vendor|renderer|core profile version|version) string|exit status|Error|error' "$plog"
  r=$(sed -n '/__GLX_VENDOR_LIBRARY_NAME=nvidia/,/^===/p' "$plog" | sed -n 's/^OpenGL renderer string: //p' | head -1)
  echo "GL_RENDERER (NVIDIA GLX client on Xvfb): ${r:-none}"
  case $r in
    '' | *llvmpipe* | *softpipe* | *Software*) probe_rc=1 ;;
  esac
fi
[ $# -gt 0 ] || exit "$probe_rc"

# --- command -----------------------------------------------------------------------------------
export __GLX_VENDOR_LIBRARY_NAME=$vendor
if [ -n "${NWGUI_ROOTSHOT:-}" ]; then
  (sleep "$NWGUI_ROOTSHOT"
   LD_LIBRARY_PATH=$gui_ld xwd -root -silent -out "$OUT/root.xwd" 2>>"$xlog") &
  shot_pid=$!
fi
# a program's missing libraries, named before it runs (ldd of the first argument, if ELF)
if command -v ldd >/dev/null && [ -f "$1" ] && [ "$(head -c 4 "$1" 2>/dev/null | tail -c 3)" = ELF ]; then
  missing=$(LD_LIBRARY_PATH=$gui_ld ldd "$1" 2>&1 | grep 'not found' | awk '{print $1}' | tr '\n' ' ')
  [ -z "$missing" ] || fail command "$1 needs libraries found neither in the bundle nor on this host: $missing"
fi
say "running: $*"
cmd=("$@")
[ -n "${NWGUI_TIMEOUT:-}" ] && cmd=(timeout "$NWGUI_TIMEOUT" "$@")
LD_LIBRARY_PATH=$gui_ld "${cmd[@]}" 2>&1 | tee "$OUT/command.log"
rc=${PIPESTATUS[0]}
say "command exit status $rc"
if [ -n "${shot_pid:-}" ]; then
  wait "$shot_pid" 2>/dev/null
  if [ -s "$OUT/root.xwd" ] && command -v python3 >/dev/null; then
    python3 "$repo/scripts/gpu-host/xwd2png.py" "$OUT/root.xwd" "$OUT/root.png" && rm -f "$OUT/root.xwd"
  fi
fi
exit "$rc"
