#!/usr/bin/env bash
# Builds the one-folder app with PyInstaller: a throwaway venv under build/, the project and
# PyInstaller installed into it, then packaging/trayburn.spec. Prints where the app is.
#   packaging/build.sh          plain build (Linux tray backend: Xlib / XEmbed)
#   packaging/build.sh --gtk    also bundle PyGObject for the GTK / AppIndicator backends
#                               (needs the system packages that scripts/setup installs)
# PYTHON picks the interpreter (default python3); it must be a CPython built with a shared libpython.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--gtk" ] && extras="[gtk]"
py=${PYTHON:-python3}
# TRAYBURN_BUILD_DIR / TRAYBURN_DIST_DIR move the work and output folders (tests use temp dirs).
work=${TRAYBURN_BUILD_DIR:-build}
dist=${TRAYBURN_DIST_DIR:-dist}
venv=$work/pyinstaller-venv
bin="$venv/bin"

start=$(date +%s)
rm -rf "$venv" "$work/pyinstaller" "$dist/trayburn" "$dist/trayburn.app"
"$py" -m venv "$venv"
[ -d "$venv/Scripts" ] && bin="$venv/Scripts"  # Windows (Git Bash)
"$bin/python" -m pip install -q --upgrade pip
"$bin/python" -m pip install -q ".$extras" "pyinstaller>=6.10"
# The pyinstaller script, not `python -m`, so the source tree is not on sys.path.
"$bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work/pyinstaller" packaging/trayburn.spec

out=$dist/trayburn
[ -d "$dist/trayburn.app" ] && out=$dist/trayburn.app
echo "built in $(( $(date +%s) - start ))s: $out ($(du -sh "$out" | cut -f1))"
