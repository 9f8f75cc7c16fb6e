# gui-env.sh — the environment of the neurowarp GUI runtime bundle (.gpu-gui/env.sh, and
# env.sh at the top of runtime.tar.xz; made by scripts/gpu-host/fetch-gui.sh).
# Source it (bash) after unpacking runtime.tar.xz into a prefix:
#   NWGUI_PREFIX=/opt/nwgui; source /opt/nwgui/env.sh
# NWGUI_PREFIX defaults to the folder of this file when that holds the bundle, else /opt/nwgui.
# Everything points into the prefix; nothing of the Debian packages is put into /.
# Paths compiled into the Debian binaries, and what replaces them:
#   /usr/share/X11/xkb              Xvfb -xkbdir "$NWGUI_XKBDIR" (gui.sh passes it)
#   /usr/bin/xkbcomp                Xvfb runs exactly this path (XkbBinDirectory is compiled
#                                   in, no option): gui.sh links it to the prefix's copy
#   /var/lib/xkb                    Xvfb (as root) writes compiled keymaps there: gui.sh mkdirs it
#   /usr/lib/x86_64-linux-gnu/dri   LIBGL_DRIVERS_PATH (read by Xvfb's GLX and by Mesa's GLX)
#   /usr/share/fonts/X11/...        Xvfb -fp built-ins (the server's own "fixed" and "cursor")
#   /etc/fonts/fonts.conf           FONTCONFIG_FILE (the file finds the fonts relative to itself)
#   gdk-pixbuf loaders.cache        GDK_PIXBUF_MODULE_FILE
#   /usr/share/glib-2.0/schemas     GSETTINGS_SCHEMA_DIR
#   /usr/share/X11/locale           XLOCALEDIR
#   /usr/share (icons, themes)      XDG_DATA_DIRS
# LD_LIBRARY_PATH puts the prefix's libraries first: use it only for Xvfb and the GUI (some
# of them are older than Ubuntu 24.04's own, e.g. libsystemd, liblzma).
if [ -z "${NWGUI_PREFIX:-}" ]; then
  _nwgui_here=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" 2>/dev/null && pwd)
  if [ -x "$_nwgui_here/usr/bin/Xvfb" ]; then NWGUI_PREFIX=$_nwgui_here; else NWGUI_PREFIX=/opt/nwgui; fi
  unset _nwgui_here
fi
export NWGUI_PREFIX
_nwgui_lib=$NWGUI_PREFIX/usr/lib/x86_64-linux-gnu
export PATH=$NWGUI_PREFIX/usr/bin:$PATH
# the bundle first; then the NVIDIA driver's and CUDA's folders where they exist (glvnd
# dlopens libGLX_nvidia.so.0 by name; the GUI needs libcudart)
_nwgui_ld=$_nwgui_lib
for _d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/local/cuda/lib64; do
  [ -d "$_d" ] && _nwgui_ld=$_nwgui_ld:$_d
done
export LD_LIBRARY_PATH=$_nwgui_ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset _d _nwgui_ld
# Mesa: the swrast (softpipe) DRI driver, for Xvfb's GLX and for a Mesa GLX client
export LIBGL_DRIVERS_PATH=$_nwgui_lib/dri
# X keyboard and locale data
export NWGUI_XKBDIR=$NWGUI_PREFIX/usr/share/X11/xkb
export XKB_CONFIG_ROOT=$NWGUI_XKBDIR
export XLOCALEDIR=$NWGUI_PREFIX/usr/share/X11/locale
# fonts
export FONTCONFIG_FILE=$NWGUI_PREFIX/etc/fonts/fonts.conf
export FONTCONFIG_PATH=$NWGUI_PREFIX/etc/fonts
# GTK / GLib data
export GDK_PIXBUF_MODULE_FILE=$_nwgui_lib/gdk-pixbuf-2.0/2.10.0/loaders.cache
export GDK_PIXBUF_MODULEDIR=$_nwgui_lib/gdk-pixbuf-2.0/2.10.0/loaders
export GSETTINGS_SCHEMA_DIR=$NWGUI_PREFIX/usr/share/glib-2.0/schemas
export GSETTINGS_BACKEND=memory            # no dconf there
export XDG_DATA_DIRS=$NWGUI_PREFIX/usr/share
export XDG_CONFIG_DIRS=$NWGUI_PREFIX/etc/xdg
export GTK_EXE_PREFIX=$NWGUI_PREFIX/usr    # GTK's modules/immodules look-ups stay in the prefix
export GTK_DATA_PREFIX=$NWGUI_PREFIX/usr
export GTK_IM_MODULE=gtk-im-context-simple # the built-in input method, no immodules.cache
export GIO_MODULE_DIR=$_nwgui_lib/gio/modules
export GIO_USE_VFS=local
export GDK_BACKEND=x11
export NO_AT_BRIDGE=1                      # no accessibility bus (no D-Bus there)
export DBUS_SESSION_BUS_ADDRESS=disabled:  # GApplication runs without a session bus, at once
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/nwgui-runtime}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/nwgui-cache}
export XDG_CONFIG_HOME=${XDG_CONFIG_HOME:-/tmp/nwgui-config}
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" 2>/dev/null && chmod 700 "$XDG_RUNTIME_DIR" 2>/dev/null
unset _nwgui_lib
true
