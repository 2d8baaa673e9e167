#!/usr/bin/env bash
# The .deb on a fresh Debian 12 root file system (run as root), as a person would install it:
#   packaging/fresh-debian-deb.sh [ROOTS]      (builds the .deb first with packaging/deb.sh if needed)
# apt-get install ./trayburn_*.deb; trayburn --version; the tray docked in trayer under Xvfb with its
# menu and its summary window (desktop-check.sh); then apt-get remove, and nothing of it is left.
set -euo pipefail
cd "$(dirname "$0")/.."
roots=$(realpath -m "${1:-build/roots}")
tool=$PWD/packaging/debian-root.sh
say() { printf '== %s\n' "$*"; }
deb=$(ls dist/trayburn_*.deb 2>/dev/null | tail -1)
[ -n "$deb" ] || { packaging/deb.sh; deb=$(ls dist/trayburn_*.deb | tail -1); }
mkdir -p "$roots"
"$tool" make bookworm "$roots/bookworm-base"
root=$roots/bookworm-deb
"$tool" copy "$roots/bookworm-base" "$root"
cp "$deb" packaging/desktop-check.sh "$root/root/"
start=$SECONDS
say "apt-get install ./$(basename "$deb")"
"$tool" run "$root" "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./$(basename "$deb") >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }"
say "installed in $((SECONDS - start)) s: $("$tool" run "$root" "command -v trayburn; trayburn --version; ls /usr/share/applications/trayburn.desktop /usr/share/icons/hicolor/*/apps/trayburn.*" | paste -sd' ')"
say "the tray under Xvfb with trayer (harness: xvfb trayer xdotool x11-utils dbus-x11)"
"$tool" run "$root" "apt-get install -y -qq xvfb trayer xdotool x11-utils dbus-x11 >/dev/null 2>&1"
"$tool" run "$root" "TRAY=trayburn SUMMARY='trayburn summary' ./desktop-check.sh 2>&1 | grep '^desktop-check'"
say "apt-get remove trayburn"
"$tool" run "$root" "apt-get remove -y -qq trayburn >/dev/null 2>&1; dpkg -s trayburn 2>&1 | grep -i '^Status' || echo 'trayburn: not installed'; ls /opt/trayburn /usr/bin/trayburn /usr/share/applications/trayburn.desktop 2>&1 | sed 's/^/  /'"
