#!/usr/bin/env bash
# Builds the one-folder app with PyInstaller: a throwaway venv under build/, the project and
# PyInstaller installed into it, then packaging/trayburn.spec. Prints where the app is.
#   packaging/build.sh          the app with its GTK/AppIndicator tray (menu, click) and its Tk window
#   packaging/build.sh --no-gtk the X11-only tray (no menu): no PyGObject build headers needed
#   What it needs from the system is installed as root, else named (Debian/Ubuntu).
# PYTHON picks the interpreter (default python3); it must be a CPython built with a shared libpython.
set -euo pipefail
cd "$(dirname "$0")/.."

py=${PYTHON:-python3}
say() { printf 'build.sh: %s\n' "$*" >&2; }
# The app's tray needs PyGObject (GTK/AppIndicator backends: menu and click) and its summary window
# needs Tk: a bundle without either is refused. --no-gtk builds the X11-only one (no menu) knowingly.
gtk=1
[ "${1:-}" = "--no-gtk" ] && gtk=0
# TRAYBURN_BUILD_DIR / TRAYBURN_DIST_DIR move the work and output folders (tests use temp dirs).
work=${TRAYBURN_BUILD_DIR:-build}
dist=${TRAYBURN_DIST_DIR:-dist}
venv=$work/pyinstaller-venv
bin="$venv/bin"
mkdir -p "$work"
log=$(realpath "$work")/build.log
: >"$log"

# What the build needs from the system (Debian/Ubuntu names): PyInstaller's objdump (binutils), the
# interpreter's shared libpython, Tk, and PyGObject's build headers; installed as root, else named.
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || { say "no '$py' here (PYTHON=...)"; exit 1; }
# (Only for the system's own Python: another one, e.g. a CI runner's, brings its own libpython and Tk.)
if [ "$(uname -s)" = Linux ] && command -v dpkg-query >/dev/null && [ "$("$py" -c 'import sys; print(sys.base_prefix)')" = /usr ]; then
  need=(binutils "libpython$ver" python3-tk python3-venv)
  [ $gtk = 1 ] && need+=(python3-dev libgirepository1.0-dev libcairo2-dev pkg-config gir1.2-gtk-3.0 gir1.2-ayatanaappindicator3-0.1)
  have=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${need[@]}" 2>/dev/null | awk '$2 == "ii" {print $1}' || true)
  missing=()
  for p in "${need[@]}"; do grep -qx "$p" <<<"$have" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      say "installing ${missing[*]}"
      { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; } >>"$log" 2>&1 ||
        { say "apt-get could not install them (network?): see $log"; exit 1; }
    else
      say "the build needs: ${missing[*]}; run:  sudo apt-get install ${missing[*]}"
      exit 1
    fi
  fi
fi
"$py" -c 'import tkinter' 2>/dev/null || { say "$py has no Tk (tkinter): the app's summary window would not open"; exit 1; }

start=$(date +%s)
rm -rf "$venv" "$work/pyinstaller" "$dist/trayburn" "$dist/trayburn.app"
"$py" -m venv "$venv"
[ -d "$venv/Scripts" ] && bin="$venv/Scripts"  # Windows (Git Bash)
extras=""
[ $gtk = 1 ] && [ "$(uname -s)" = Linux ] && extras="[gtk]"
"$bin/python" -m pip install --upgrade pip >>"$log" 2>&1 || true
"$bin/python" -m pip install ".$extras" "pyinstaller>=6.10" >>"$log" 2>&1 ||
  { say "pip could not install trayburn$extras and PyInstaller (network, or PyGObject's headers): see $log"; exit 1; }
# The pyinstaller script, not `python -m`, so the source tree is not on sys.path.
"$bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work/pyinstaller" packaging/trayburn.spec >>"$log" 2>&1 ||
  { say "PyInstaller failed: see $log"; tail -5 "$log" >&2; exit 1; }

out=$dist/trayburn
[ -d "$dist/trayburn.app" ] && out=$dist/trayburn.app
# Refuse a bundle without its window or its tray backend.
[ -n "$(find "$out" -name '_tkinter*' -print -quit)" ] || { say "the bundle has no Tk (_tkinter): refused"; exit 1; }
if [ -n "$extras" ]; then
  [ -n "$(find "$out" -path '*gi/_gi*' -print -quit)" ] || { say "the bundle has no PyGObject (gi): refused"; exit 1; }
  [ -n "$(find "$out" -name 'Gtk-3.0.typelib' -print -quit)" ] || { say "the bundle has no GTK typelib: refused"; exit 1; }
fi
echo "built in $(( $(date +%s) - start ))s: $out ($(du -sh "$out" | cut -f1))"
