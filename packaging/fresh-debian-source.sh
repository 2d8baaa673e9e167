#!/usr/bin/env bash
# README's "Two commands" on a fresh Debian root file system with only git (run as root):
#   packaging/fresh-debian-source.sh SUITE [ROOTS]      SUITE: bookworm (12) or trixie (13)
# 1. as root, in a clone of this checkout's HEAD: ./scripts/run (sets up everything, Python included);
#    then the tray under Xvfb with trayer, docked, its menu and its summary window (desktop-check.sh);
# 2. a second start with no network at all (unshare -n);
# 3. ./scripts/test as root (TESTS="-m 'not desktop'" picks a subset; TRAYBURN_SKIP_PYINSTALLER=1 skips
#    the bundle build);
# 4. as a plain user without sudo on a copy where only python3 and python3-venv are installed: setup's
#    messages, twice (the second time says nothing it said before).
# ROOTS (default build/roots) keeps SUITE-base, made once by debootstrap and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=$1
roots=$(realpath -m "${2:-build/roots}")
here=$PWD
tool=$here/packaging/debian-root.sh
say() { printf '== %s\n' "$*"; }
clock() { local s=$SECONDS; "$@"; local rc=$?; say "($((SECONDS - s)) s, exit $rc)"; return $rc; }
mkdir -p "$roots"
"$tool" make "$suite" "$roots/$suite-base"

root=$roots/$suite-root
"$tool" copy "$roots/$suite-base" "$root"
git clone -q "$here" "$root/root/trayburn"
git -C "$root/root/trayburn" checkout -q "$(git rev-parse HEAD)"
say "$suite as root: ./scripts/run --version (first start: system packages, Python, .venv)"
clock "$tool" run "$root" "cd trayburn && ./scripts/run --version"
say "$suite: the tray under Xvfb with trayer (harness: xvfb trayer xdotool x11-utils dbus-x11)"
"$tool" run "$root" "apt-get install -y -qq xvfb trayer xdotool x11-utils dbus-x11 >/dev/null 2>&1"
cp packaging/desktop-check.sh "$root/root/desktop-check.sh"
clock "$tool" run "$root" "cd trayburn && TRAY=./scripts/run SUMMARY='.venv/bin/trayburn summary' ../desktop-check.sh"
say "$suite: second start, offline (no network namespace)"
clock unshare -n "$tool" run "$root" "cd trayburn && ./scripts/run --version"
say "$suite as root: ./scripts/test ${TESTS:-}"
clock "$tool" run "$root" "cd trayburn && TRAYBURN_SKIP_PYINSTALLER=${TRAYBURN_SKIP_PYINSTALLER:-0} ./scripts/test -q -p no:cacheprovider ${TESTS:-} 2>&1 | tail -15" || true

user=$roots/$suite-user
"$tool" copy "$roots/$suite-base" "$user"
"$tool" run "$user" "apt-get update -qq && apt-get install -y -qq python3 python3-venv >/dev/null 2>&1"
"$tool" user "$user" "true"
git clone -q "$here" "$user/home/person/trayburn"
git -C "$user/home/person/trayburn" checkout -q "$(git rev-parse HEAD)"
chroot "$user" chown -R person:person /home/person/trayburn
say "$suite as a plain user without sudo: ./scripts/run --version, twice"
clock "$tool" user "$user" "cd trayburn && ./scripts/run --version" || true
clock "$tool" user "$user" "cd trayburn && ./scripts/run --version" || true
