#!/usr/bin/env bash
# Fresh Debian root file systems for trying trayburn as a new user would (run as root):
#   packaging/debian-root.sh make SUITE DIR      debootstrap SUITE (bookworm, trixie) into DIR with only git
#                                                (kept: a DIR already made is reused)
#   packaging/debian-root.sh copy DIR NEW        a throwaway copy of DIR to try things in
#   packaging/debian-root.sh run DIR CMD...      CMD as root inside DIR (proc, sys, dev mounted in a private
#                                                mount namespace: nothing stays mounted afterwards)
#   packaging/debian-root.sh user DIR CMD...     the same as a plain user "person" (made if missing; no sudo)
# The environment inside is clean (HOME, PATH, LANG=C.UTF-8) but for the network: a person's machine
# has its own network, set up for it. This machine reaches the package registries only through a
# TLS-inspecting proxy, an artefact of this machine and not of trayburn, so the root gets what a
# person behind such a proxy would have set up on their own machine (host_network below): the
# certificate authorities the host added to its trust store (update-ca-certificates), the proxy
# variables of the environment, pip's network settings (/etc/pip.conf: proxy, index, cert) and apt's
# proxy (/etc/apt/apt.conf.d/80proxy). Nothing else of this machine's pip or apt set-up (its local
# wheel folders, its constraints) goes in.
set -euo pipefail
say() { printf 'debian-root: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { say "run as root (debootstrap and chroot need it)"; exit 2; }

proxy_vars=(http_proxy https_proxy ftp_proxy all_proxy no_proxy HTTP_PROXY HTTPS_PROXY FTP_PROXY ALL_PROXY NO_PROXY)

host_network() {  # host_network DIR: this machine's network settings, as a person's would be (see above)
  local dir=$1 new=$1/.host-cas.new
  cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
  # The certificates in the host's bundle that Debian's ca-certificates did not ship: its own additions.
  rm -rf "$new" && mkdir -p "$new"
  cat /usr/share/ca-certificates/*/*.crt >"$new/shipped" 2>/dev/null || true
  awk -v out="$new" '
    FNR == 1 { file++ }
    /-----BEGIN CERTIFICATE-----/ { key = ""; inb = 1 }
    inb { key = key $0 "\n" }
    /-----END CERTIFICATE-----/ { inb = 0; if (file == 1) shipped[key] = 1; else if (!(key in shipped)) {
        n++; f = sprintf("%s/host-%03d.crt", out, n); printf "%s", key > f; close(f) } }
  ' "$new/shipped" /etc/ssl/certs/ca-certificates.crt
  local there=$dir/usr/local/share/ca-certificates
  if [ "$(cat "$new"/*.crt 2>/dev/null | sha256sum)" != "$(cat "$there"/host-*.crt 2>/dev/null | sha256sum)" ]; then
    mkdir -p "$there"
    rm -f "$there"/host-*.crt
    cp "$new"/*.crt "$there"/ 2>/dev/null || true
    chroot "$dir" update-ca-certificates --fresh >/dev/null 2>&1 || say "update-ca-certificates failed in $dir"
  fi
  rm -rf "$new"
  # pip's network settings as pip itself reads them here (its config files and PIP_* variables).
  local conf=$dir/etc/pip.conf line key value
  rm -f "$conf"
  if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
    while IFS= read -r line; do
      key=${line%%=*} value=${line#*=}
      key=${key##*.} value=${value#\'} value=${value%\'}
      case $key in
        proxy | index-url | trusted-host) ;;
        extra-index-url) value=$(tr ' ' '\n' <<<"$value" | { grep -v '^file:' || true; } | paste -sd' ') ;;  # not local folders
        cert) value=/etc/ssl/certs/ca-certificates.crt ;;  # the root's own bundle, with the host's additions
        *) continue ;;
      esac
      [ -n "$value" ] || continue
      [ -f "$conf" ] || echo "[global]" >"$conf"
      grep -q "^$key = " "$conf" || echo "$key = $value" >>"$conf"
    done < <(python3 -m pip config list 2>/dev/null | sort)  # sorted, :env: (it wins) comes first
  fi
  # apt's proxy, as apt reads it here.
  local apt=$dir/etc/apt/apt.conf.d/80proxy
  rm -f "$apt"
  apt-config dump 2>/dev/null | grep -iE '^Acquire::[a-z]+::Proxy(::[^ ]+)? ' >"$apt.new" || true
  if [ -s "$apt.new" ]; then mv "$apt.new" "$apt"; else rm -f "$apt.new"; fi
}

inside() {  # inside DIR USER CMD...
  local dir=$1 user=$2
  shift 2
  host_network "$dir"
  local pass=() v
  for v in "${proxy_vars[@]}"; do [ -n "${!v:-}" ] && pass+=("$v=${!v}"); done
  local home=/root
  [ "$user" = root ] || home=/home/$user
  unshare -m --propagation private bash -c '
    dir=$1; user=$2; home=$3; pass=$4; shift 4
    mount -t proc proc "$dir/proc"
    mount -t sysfs sys "$dir/sys"
    mount --rbind /dev "$dir/dev"
    mount -t tmpfs -o mode=1777 shm "$dir/dev/shm"
    mount -t tmpfs -o mode=1777 tmp "$dir/tmp"
    exec chroot --userspec="$user:$user" "$dir" env -i HOME="$home" USER="$user" LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin $pass bash -c "cd ~ && $*"
  ' _ "$dir" "$user" "$home" "${pass[*]:-}" "$@"
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
