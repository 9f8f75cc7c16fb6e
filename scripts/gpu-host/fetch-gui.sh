#!/bin/bash
# Run HERE (the Debian 12 machine with package access, as root), from anywhere: builds
# <repo>/.gpu-gui/ (git-ignored through .git/info/exclude) with what the GPU host lacks to
# show neurowarp's GTK window on an X server of its own:
#   runtime.tar.xz  Xvfb (+ xkbcomp, xkb data), Mesa's swrast DRI driver for Xvfb's GLX,
#                   glxinfo, xwd, and the shared-library closure of the GUI binary (GTK 3,
#                   GLib, X libraries, ...) plus the GTK data it reads at run time (DejaVu
#                   fonts + fontconfig file, gdk-pixbuf loaders.cache, the org.gtk.Settings
#                   GSettings schemas, hicolor index, X locale data). No glibc, libstdc++,
#                   libgcc, libgomp, CUDA or libglvnd (.gl carries the GL loaders).
#   env.sh          the environment for a prefix where runtime.tar.xz was unpacked (also at
#                   the top of the archive); see the comments in it.
#   MANIFEST.txt    every file of the archive with the Debian package it came from.
# Then carry .gpu-gui (and .gl, made by fetch.sh) to the GPU host and run
# scripts/gpu-host/gui.sh there.
#
# Mesa: Debian's swrast_dri.so links LLVM 15 (117 MB, + z3, ICU: ~40 MB compressed), far
# too big to carry. This script builds the same Mesa version from Debian's source package
# with LLVM disabled (softpipe only) and ships that swrast_dri.so (+ its libglapi and
# libGLX_mesa). The server side of GLX in Xvfb only needs *a* DRI driver to offer GLX
# visuals; the client (the GUI) draws through NVIDIA's GLX there. The build (~15 min on 2
# cores) is cached in $NW_GUI_CACHE (default /var/tmp/nwgui).
#
# Usage: bash scripts/gpu-host/fetch-gui.sh [GUI_BINARY]
#   GUI_BINARY (default <repo>/build/ui/neurowarp, or $NW_GUI_BIN): a local build of the
#   application, used only to compute the library closure (it is not put in the bundle).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$repo/.gpu-gui
gui=${1:-${NW_GUI_BIN:-$repo/build/ui/neurowarp}}
cache=${NW_GUI_CACHE:-/var/tmp/nwgui}
arch=x86_64-linux-gnu
lib=/usr/lib/$arch
say() { echo "fetch-gui.sh: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (apt-get install, dpkg)"
[ -x "$gui" ] || die "GUI binary $gui not found: build it (scripts/build.sh build) or pass its path"

# --- 1. packages: what goes into the bundle, and what builds Mesa ---------------------------
runtime_pkgs=(xvfb x11-xkb-utils xkb-data xserver-common fonts-dejavu-core fontconfig-config
  mesa-utils-bin x11-apps libx11-data hicolor-icon-theme libgtk-3-0 libgtk-3-common
  libgdk-pixbuf-2.0-0 libglib2.0-bin libgl1-mesa-dri shared-mime-info adwaita-icon-theme)
build_pkgs=(dpkg-dev meson ninja-build bison flex python3-mako pkg-config binutils xz-utils
  libdrm-dev libx11-dev libxext-dev libxfixes-dev libxcb-glx0-dev libxcb-shm0-dev libx11-xcb-dev
  libxcb-dri2-0-dev libxcb-dri3-dev libxcb-present-dev libxshmfence-dev libxxf86vm-dev
  libxrandr-dev libxcb-sync-dev libxcb-randr0-dev libexpat1-dev zlib1g-dev libzstd-dev)
missing=()
for p in "${runtime_pkgs[@]}" "${build_pkgs[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 2. Mesa without LLVM (softpipe), the version Debian ships, built once and cached -------
mesa_ver=$(dpkg-query -W -f '${Version}' libgl1-mesa-dri)
mstage=$cache/stage-$mesa_ver
if [ ! -f "$mstage$lib/dri/swrast_dri.so" ]; then
  mkdir -p "$cache"
  src=$cache/mesa build=$cache/build
  if [ ! -f "$src/meson.build" ] || [ "$(cat "$cache/src-version" 2>/dev/null)" != "$mesa_ver" ]; then
    say "fetching the source of mesa $mesa_ver"
    rm -rf "$src" "$build" "$cache/apt" "$cache"/mesa_*
    # a private apt configuration with deb-src lines (the system's sources are left alone)
    mkdir -p "$cache/apt/lists/partial" "$cache/apt/parts"
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && sed 's/^Types:.*$/Types: deb-src/' "$f" >"$cache/apt/parts/$(basename "$f")"
    done
    list=/dev/null
    if [ -f /etc/apt/sources.list ]; then
      list=$cache/apt/sources.list
      sed -n 's/^deb \(.*\)$/deb-src \1/p' /etc/apt/sources.list >"$list"
    fi
    apt_opts=(-o "Dir::Etc::SourceList=$list" -o "Dir::Etc::SourceParts=$cache/apt/parts"
      -o "Dir::State::Lists=$cache/apt/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
    apt-get "${apt_opts[@]}" update -qq
    (cd "$cache" && apt-get "${apt_opts[@]}" source --download-only "mesa=$mesa_ver" 2>&1 | grep -v unsandboxed)
    (cd "$cache" && dpkg-source -x mesa_*.dsc "$src" >/dev/null)
    echo "$mesa_ver" >"$cache/src-version"
  fi
  if [ ! -f "$build/build.ninja" ]; then
    say "configuring mesa (gallium swrast = softpipe, no LLVM, GLX for glvnd)"
    # Debian's python3 (with mako), not a pyenv or venv one
    PATH=/usr/bin:$PATH meson setup "$build" "$src" --prefix=/usr --libdir=lib/$arch \
      -Dbuildtype=release -Db_ndebug=true -Dplatforms=x11 -Dgallium-drivers=swrast \
      -Dvulkan-drivers= -Dllvm=disabled -Dglx=dri -Degl=disabled -Dgbm=disabled \
      -Dgles1=disabled -Dgles2=disabled -Dopengl=true -Dshared-glapi=enabled -Dglvnd=true \
      -Dgallium-vdpau=disabled -Dgallium-va=disabled -Dgallium-xa=disabled \
      -Dgallium-omx=disabled -Dgallium-nine=false -Dgallium-opencl=disabled -Dosmesa=false \
      -Dvalgrind=disabled -Dlibunwind=disabled -Dlmsensors=disabled -Dbuild-tests=false \
      -Dzstd=enabled -Dxlib-lease=disabled -Dvideo-codecs= -Dselinux=false -Dtools= \
      >"$cache/meson-setup.log" 2>&1 || { tail -30 "$cache/meson-setup.log"; die "meson setup failed"; }
  fi
  say "building mesa (log: $cache/ninja.log)"
  PATH=/usr/bin:$PATH ninja -C "$build" >"$cache/ninja.log" 2>&1 || { tail -30 "$cache/ninja.log"; die "mesa build failed"; }
  rm -rf "$mstage"
  DESTDIR=$mstage ninja -C "$build" install >"$cache/install.log" 2>&1 || die "mesa install failed"
fi

# --- 3. the prefix tree, laid out like / (usr/bin, usr/lib/<arch>, usr/share, etc) ---------
work=$(mktemp -d /tmp/nwgui-fetch.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/usr/bin" "$root$lib/dri" "$root/etc/fonts" "$root/var/cache/fontconfig"
manifest=$work/manifest
: >"$manifest"
origin() { # FILE -> "package" (or the Mesa build)
  case $1 in
    "$mstage"/*) echo "mesa $mesa_ver (rebuilt here without LLVM)" ;;
    *) local p q
       for p in "$1" "/usr$1" "$(readlink -f "$1")" "/usr$(readlink -f "$1")"; do
         q=$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1) || q=
         [ -n "$q" ] && { echo "$q"; return; }
       done
       echo "?" ;;
  esac
}
# put SRC DEST: copy SRC (following links) to $root/DEST and note its package
put() {
  mkdir -p "$(dirname "$root/$2")"
  cp -L "$1" "$root/$2"
  printf '%s\t%s\n' "$2" "$(origin "$1")" >>"$manifest"
}

# What a bare Ubuntu 24.04 GPU host has (glibc, gcc runtime), what .gl puts into / there
# (libglvnd), and what the NVIDIA driver / CUDA toolkit bring: never bundled.
skip_re='^(ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1|libmvec\.so\.1|libBrokenLocale\.so\.1|libnss_.*|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libgomp\.so\.1|libatomic\.so\.1|libGL\.so\.1|libGLX\.so\.0|libGLdispatch\.so\.0|libOpenGL\.so\.0|libEGL\.so\.1|libGLESv[12].*|libcuda\.so.*|libcudart\.so.*|libnvidia-.*|linux-vdso\.so\.1)$'
mesa_ld=$mstage$lib
declare -A have=()
# add_closure FILE...: the libraries FILE needs (ldd, with the Mesa build first so that its
# libglapi is the one found), copied into usr/lib/<arch>.
add_closure() {
  local f name path
  for f in "$@"; do
    while read -r name path; do
      [[ $name =~ $skip_re ]] && continue
      [ -n "${have[$name]:-}" ] && continue
      [ -f "$path" ] || die "ldd $f: $name not found"
      have[$name]=1
      put "$path" "$lib/$name"
    done < <(LD_LIBRARY_PATH=$mesa_ld ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $2 == "=>" && $3 == "not" {print $1, "MISSING"}')
  done
}

# programs
put /usr/bin/Xvfb usr/bin/Xvfb
put /usr/bin/xkbcomp usr/bin/xkbcomp
# glxinfo: /usr/bin/glxinfo where mesa-utils made the link, else mesa-utils-bin's own name
glxinfo_bin=$(readlink -f /usr/bin/glxinfo 2>/dev/null || true)
[ -x "$glxinfo_bin" ] || glxinfo_bin=$(ls /usr/bin/glxinfo.* 2>/dev/null | head -n 1)
[ -x "$glxinfo_bin" ] || die "glxinfo not found (mesa-utils-bin)"
put "$glxinfo_bin" usr/bin/glxinfo
put /usr/bin/xwd usr/bin/xwd
# Mesa (softpipe) for Xvfb's GLX, and Mesa's GLX client for glvnd (a software fallback)
put "$mstage$lib/dri/swrast_dri.so" "$lib/dri/swrast_dri.so"
put "$mstage$lib/libglapi.so.0" "$lib/libglapi.so.0"
put "$mstage$lib/libGLX_mesa.so.0" "$lib/libGLX_mesa.so.0"
have[libglapi.so.0]=1
have[libGLX_mesa.so.0]=1
add_closure /usr/bin/Xvfb /usr/bin/xkbcomp "$glxinfo_bin" /usr/bin/xwd \
  "$mstage$lib/dri/swrast_dri.so" "$mstage$lib/libGLX_mesa.so.0" "$gui"
# GTK's own closure too (the GUI could be linked with --as-needed differently)
add_closure "$lib/libgtk-3.so.0"
# The loaders cache: PNG and JPEG are built into Debian's gdk-pixbuf; no module is needed
# (no SVG: librsvg would cost ~3 MB, and the icons GTK needs are PNGs in its resources).
pixdir=$lib/gdk-pixbuf-2.0/2.10.0
mkdir -p "$root$pixdir/loaders"
printf '# GdkPixbuf Image Loader Modules file (neurowarp GUI bundle: none; png, jpeg built in)\n' \
  >"$root$pixdir/loaders.cache"
printf '%s\t%s\n' "$pixdir/loaders.cache" "generated" >>"$manifest"

# --- data ---------------------------------------------------------------------------------------
# xkb data for Xvfb's keyboard (xkbcomp compiles it at start-up); the compiled/ link is dropped
mkdir -p "$root/usr/share/X11"
cp -a /usr/share/X11/xkb "$root/usr/share/X11/"
rm -f "$root/usr/share/X11/xkb/compiled"
printf '%s\t%s\n' "usr/share/X11/xkb/" "xkb-data" >>"$manifest"
put /usr/share/X11/XErrorDB usr/share/X11/XErrorDB
put /usr/lib/xorg/protocol.txt usr/lib/xorg/protocol.txt
# libX11's locale data, C and UTF-8 only (XLOCALEDIR)
for f in locale.alias locale.dir compose.dir C/XLC_LOCALE C/Compose en_US.UTF-8/XLC_LOCALE en_US.UTF-8/Compose; do
  [ -f "/usr/share/X11/locale/$f" ] && put "/usr/share/X11/locale/$f" "usr/share/X11/locale/$f"
done
# fonts: DejaVu Sans (regular, bold) and Sans Mono, and a fontconfig file that finds them
# relative to itself (prefix="relative": the directory of fonts.conf)
for f in DejaVuSans.ttf DejaVuSans-Bold.ttf DejaVuSansMono.ttf; do
  put "/usr/share/fonts/truetype/dejavu/$f" "usr/share/fonts/truetype/dejavu/$f"
done
cat >"$root/etc/fonts/fonts.conf" <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<!-- neurowarp GUI bundle: only DejaVu, paths relative to this file (<prefix>/etc/fonts) -->
<fontconfig>
  <dir prefix="relative">../../usr/share/fonts</dir>
  <cachedir prefix="relative">../../var/cache/fontconfig</cachedir>
  <alias binding="same"><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias binding="same"><family>serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias binding="same"><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
  <alias binding="same"><family>Sans</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias binding="same"><family>Monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>true</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintslight</const></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
  </match>
</fontconfig>
EOF
printf '%s\t%s\n' "etc/fonts/fonts.conf" "generated" >>"$manifest"
# GSettings: GTK's own schemas (the file and colour choosers read them), compiled
schemas=$root/usr/share/glib-2.0/schemas
mkdir -p "$schemas"
cp /usr/share/glib-2.0/schemas/org.gtk.Settings.*.gschema.xml "$schemas/"
glib-compile-schemas "$schemas"
rm -f "$schemas"/*.xml
printf '%s\t%s\n' "usr/share/glib-2.0/schemas/gschemas.compiled" "libgtk-3-common (compiled)" >>"$manifest"
# the shared-mime-info database: gdk-pixbuf picks its loader by content type (GIO), so
# without it even GTK's built-in PNG icons fail to load ("Unrecognized image file format",
# an assertion in gtkiconhelper.c aborts the program); mime.cache alone is enough
mkdir -p "$root/usr/share/mime"
cp /usr/share/mime/mime.cache "$root/usr/share/mime/"
printf '%s\t%s\n' "usr/share/mime/mime.cache" "shared-mime-info (update-mime-database)" >>"$manifest"
# icons: GTK has PNGs of a few in its resources (open-menu, pan-down, list-add, ...); the
# rest (view-fullscreen-symbolic of the views, the window buttons, the file chooser's) come
# from Adwaita, whose symbolic icons also exist as pre-rendered PNGs: its 16x16 ones
# (~650 files, ~100 KB packed) and index.theme; no SVG (no librsvg: ~11 MB + ICU)
put /usr/share/icons/hicolor/index.theme usr/share/icons/hicolor/index.theme
put /usr/share/icons/Adwaita/index.theme usr/share/icons/Adwaita/index.theme
(cd /usr/share/icons/Adwaita && find 16x16 -name '*.symbolic.png' -print0 |
  xargs -0 cp --parents -t "$root/usr/share/icons/Adwaita/")
printf '%s\t%s\n' "usr/share/icons/Adwaita/16x16/*/*.symbolic.png" "adwaita-icon-theme" >>"$manifest"
# env.sh at the top of the prefix too
cp "$repo/scripts/gpu-host/gui-env.sh" "$root/env.sh"

# --- 4. strip, pack ------------------------------------------------------------------------------
find "$root" -type f \( -name '*.so*' -o -path '*/usr/bin/*' \) -print0 |
  xargs -0 strip --strip-unneeded 2>/dev/null || true
sort "$manifest" >"$root/MANIFEST.txt"
mkdir -p "$dest"
rm -f "$dest/runtime.tar.xz"
say "packing $(du -sh "$root" | cut -f1) with xz -9e"
tar -C "$root" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . |
  xz -9e -T1 >"$dest/runtime.tar.xz"
cp "$root/env.sh" "$dest/env.sh"
cp "$root/MANIFEST.txt" "$dest/MANIFEST.txt"
# keep the folder out of git without touching .gitignore
exclude=$repo/.git/info/exclude
if [ -d "$repo/.git" ]; then
  mkdir -p "$(dirname "$exclude")"
  grep -qxF '/.gpu-gui/' "$exclude" 2>/dev/null || echo '/.gpu-gui/' >>"$exclude"
fi
size=$(stat -c %s "$dest/runtime.tar.xz")
say "$dest/runtime.tar.xz: $((size / 1024)) KiB ($(awk -v s="$size" 'BEGIN{printf "%.1f", s/1048576}') MiB)," \
  "$(wc -l <"$root/MANIFEST.txt") entries from $(cut -f2 "$root/MANIFEST.txt" | sort -u | wc -l) packages/sources"
say "carry .gpu-gui and .gl; run: bash scripts/gpu-host/gui.sh --probe"
