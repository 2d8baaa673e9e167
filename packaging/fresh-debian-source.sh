#!/usr/bin/env bash
# README's two commands (its "Start") on a fresh Debian root file system with only git (run as root):
#   packaging/fresh-debian-source.sh SUITE [ROOTS]      SUITE: bookworm (12) or trixie (13)
# 1. as root, in a clone of this checkout's HEAD: ./scripts/run (sets up everything, Python included);
#    then the tray under Xvfb with trayer, docked, its menu and its summary window (desktop-check.sh);
#    the same with PYSTRAY_BACKEND=xorg (docked; no menu there);
# 2. a second start with no network at all (unshare -n): --version, then the tray under Xvfb again;
# 3. as a plain user "person" without sudo: ./scripts/run with only git (no Python: the message), then
#    on the same root where an administrator installed python3 and python3-venv only, ./scripts/run
#    twice (the second time says nothing it said before), then the tray offline (xorg backend);
# 4. ./scripts/test as root, last (TESTS=none skips it, TESTS="-m 'not desktop'" picks a subset;
#    TRAYBURN_SKIP_PYINSTALLER=1 skips the bundle build). The whole output: ROOT/root/test.log.
# ROOTS (default build/roots) keeps SUITE-base, made once by debootstrap and reused. The roots get
# this machine's network settings (its proxy's certificate authority, ...): see debian-root.sh.
# Xvfb, trayer, xdotool, x11-utils and dbus-x11 are the test desktop, installed after trayburn's own
# set-up so that they do not hide a package trayburn needs.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=$1
roots=$(realpath -m "${2:-build/roots}")
here=$PWD
tool=$here/packaging/debian-root.sh
desktop="xvfb trayer xdotool x11-utils dbus-x11"
say() { printf '== %s %s\n' "$(date +%T)" "$*"; }
clock() {
  local s=$SECONDS rc=0
  "$@" || rc=$?
  say "($((SECONDS - s)) s, exit $rc)"
  return $rc
}
clone() {  # clone DIR: this checkout's HEAD in DIR
  git clone -q "$here" "$1"
  git -C "$1" checkout -q "$(git rev-parse HEAD)"
}
mkdir -p "$roots"
"$tool" make "$suite" "$roots/$suite-base"
say "HEAD $(git rev-parse --short HEAD); $suite $(cat "$roots/$suite-base/etc/debian_version")"

root=$roots/$suite-root
"$tool" copy "$roots/$suite-base" "$root"
clone "$root/root/trayburn"
say "$suite as root: ./scripts/run --version (first start: system packages, Python, .venv)"
clock "$tool" run "$root" "cd trayburn && ./scripts/run --version"
say "$suite: the test desktop ($desktop)"
clock "$tool" run "$root" "apt-get install -y -qq $desktop >/dev/null 2>&1"
cp packaging/desktop-check.sh "$root/root/desktop-check.sh"
say "$suite as root: the tray under Xvfb with trayer (the backend it picks)"
clock "$tool" run "$root" "cd trayburn && TRAY=./scripts/run SUMMARY='.venv/bin/trayburn summary' ../desktop-check.sh" || true
say "$suite as root: the tray with PYSTRAY_BACKEND=xorg"
clock "$tool" run "$root" "cd trayburn && TRAY='env PYSTRAY_BACKEND=xorg ./scripts/run' CHECK_MENU=0 SUMMARY=- ../desktop-check.sh" || true
say "$suite as root: second start, offline (no network namespace): --version, then the tray"
clock unshare -n "$tool" run "$root" "cd trayburn && ./scripts/run --version" || true
clock unshare -n "$tool" run "$root" "cd trayburn && TRAY=./scripts/run SUMMARY='.venv/bin/trayburn summary' ../desktop-check.sh" || true

user=$roots/$suite-user
"$tool" copy "$roots/$suite-base" "$user"
"$tool" user "$user" "true"  # makes the user
clone "$user/home/person/trayburn"
chroot "$user" chown -R person:person /home/person/trayburn
say "$suite as a plain user without sudo, only git installed: ./scripts/run --version"
clock "$tool" user "$user" "cd trayburn && ./scripts/run --version" || true
say "$suite: an administrator installs python3 and python3-venv only"
clock "$tool" run "$user" "apt-get update -qq && apt-get install -y -qq python3 python3-venv >/dev/null 2>&1"
say "$suite as a plain user without sudo: ./scripts/run --version, twice"
clock "$tool" user "$user" "cd trayburn && ./scripts/run --version" || true
clock "$tool" user "$user" "cd trayburn && ./scripts/run --version" || true
say "$suite: the test desktop ($desktop), then the plain user's tray, offline"
"$tool" run "$user" "apt-get install -y -qq $desktop >/dev/null 2>&1"
cp packaging/desktop-check.sh "$user/home/person/desktop-check.sh"
clock unshare -n "$tool" user "$user" "cd trayburn && TRAY=./scripts/run CHECK_MENU=0 SUMMARY=- ../desktop-check.sh" || true

if [ "${TESTS:-}" != none ]; then
  say "$suite as root: ./scripts/test ${TESTS:-}"
  clock "$tool" run "$root" "cd trayburn && TRAYBURN_SKIP_PYINSTALLER=${TRAYBURN_SKIP_PYINSTALLER:-0} ./scripts/test -q -p no:cacheprovider ${TESTS:-} >../test.log 2>&1; rc=\$?; tail -15 ../test.log; exit \$rc" || true
fi
