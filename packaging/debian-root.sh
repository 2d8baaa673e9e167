#!/usr/bin/env bash
# Fresh Debian root file systems for trying trayburn as a new user would (run as root):
#   packaging/debian-root.sh make SUITE DIR      debootstrap SUITE (bookworm, trixie) into DIR with only git
#                                                (kept: a DIR already made is reused)
#   packaging/debian-root.sh copy DIR NEW        a throwaway copy of DIR to try things in
#   packaging/debian-root.sh run DIR CMD...      CMD as root inside DIR (proc, sys, dev mounted in a private
#                                                mount namespace: nothing stays mounted afterwards)
#   packaging/debian-root.sh user DIR CMD...     the same as a plain user "person" (made if missing; no sudo)
# The environment inside is clean (HOME, PATH, LANG=C.UTF-8): no pip or apt settings of this machine.
set -euo pipefail
say() { printf 'debian-root: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { say "run as root (debootstrap and chroot need it)"; exit 2; }

inside() {  # inside DIR USER CMD...
  local dir=$1 user=$2
  shift 2
  cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
  # This machine's own certificate authorities (a TLS-inspecting proxy's), as its network needs them.
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null && [ ! -f "$dir/.host-cas" ]; then
    mkdir -p "$dir/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
    chroot "$dir" update-ca-certificates >/dev/null 2>&1 && touch "$dir/.host-cas"
  fi
  local home=/root
  [ "$user" = root ] || home=/home/$user
  unshare -m --propagation private bash -c '
    dir=$1; user=$2; home=$3; shift 3
    mount -t proc proc "$dir/proc"
    mount -t sysfs sys "$dir/sys"
    mount --rbind /dev "$dir/dev"
    mount -t tmpfs -o mode=1777 shm "$dir/dev/shm"
    mount -t tmpfs -o mode=1777 tmp "$dir/tmp"
    exec chroot --userspec="$user:$user" "$dir" env -i HOME="$home" USER="$user" LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "cd ~ && $*"
  ' _ "$dir" "$user" "$home" "$@"
}

case "${1:-}" in
  make)
    suite=$2 dir=$3
    if [ -f "$dir/etc/os-release" ]; then say "$dir is there already: reused"; exit 0; fi
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    start=$(date +%s)
    debootstrap --variant=minbase --include=git,ca-certificates "$suite" "$dir" http://deb.debian.org/debian \
      >"$dir.debootstrap.log" 2>&1 || { say "debootstrap failed: see $dir.debootstrap.log"; exit 1; }
    say "made $dir ($suite) in $(($(date +%s) - start)) s"
    ;;
  copy)
    rm -rf "$3"
    cp -a "$2" "$3"
    ;;
  run)
    dir=$2
    shift 2
    inside "$dir" root "$@"
    ;;
  user)
    dir=$2
    shift 2
    chroot "$dir" id person >/dev/null 2>&1 || chroot "$dir" useradd -m -s /bin/bash person
    inside "$dir" person "$@"
    ;;
  *)
    sed -n '2,9p' "$0" >&2
    exit 2
    ;;
esac
