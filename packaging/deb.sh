#!/usr/bin/env bash
# The app bundle (dist/trayburn, from packaging/build.sh) as a Debian package:
#   packaging/deb.sh            builds dist/trayburn_<version>_<arch>.deb (runs build.sh first if needed)
# It holds /opt/trayburn (the bundle), /usr/bin/trayburn, the menu launcher in /usr/share/applications
# and the icon in /usr/share/icons/hicolor; it depends on the system's GTK and libayatana-appindicator
# (the tray) and removes cleanly (nothing is written outside its own files; a person's ledger and
# settings in their home stay theirs).
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${TRAYBURN_DIST_DIR:-dist}
[ -x "$dist/trayburn/trayburn" ] || packaging/build.sh
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' trayburn/__init__.py)
arch=$(dpkg --print-architecture)
root=build/deb/trayburn_${version}_$arch
rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" \
  "$root/usr/share/icons/hicolor/256x256/apps" "$root/usr/share/icons/hicolor/scalable/apps" \
  "$root/usr/share/doc/trayburn"
cp -a "$dist/trayburn" "$root/opt/trayburn"
ln -s /opt/trayburn/trayburn "$root/usr/bin/trayburn"
install -m 644 packaging/trayburn.desktop "$root/usr/share/applications/trayburn.desktop"
install -m 644 assets/trayburn.png "$root/usr/share/icons/hicolor/256x256/apps/trayburn.png"
install -m 644 assets/trayburn.svg "$root/usr/share/icons/hicolor/scalable/apps/trayburn.svg"
install -m 644 LICENSE "$root/usr/share/doc/trayburn/copyright"
size=$(du -sk "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: trayburn
Version: $version
Architecture: $arch
Maintainer: trayburn <trayburn@users.noreply.github.com>
Installed-Size: $size
Depends: libc6, libgtk-3-0, libayatana-appindicator3-1, gir1.2-ayatanaappindicator3-0.1
Recommends: dbus-user-session
Section: utils
Priority: optional
Homepage: https://github.com/trayburn/trayburn
Description: tray app that shows what the Cline CLI costs you
 trayburn watches the session files the Cline CLI writes and shows today's
 spend in the tray icon, with a menu, a summary window and a command line.
 It makes no network calls: prices come from data shipped with it.
EOF
# The menu and the icon cache pick up the new launcher and icon (where those tools are installed).
for step in postinst postrm; do
  cat >"$root/DEBIAN/$step" <<'EOF'
#!/bin/sh
set -e
command -v update-desktop-database >/dev/null && update-desktop-database -q /usr/share/applications || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t /usr/share/icons/hicolor || true
EOF
  chmod 755 "$root/DEBIAN/$step"
done
out=$dist/trayburn_${version}_$arch.deb
dpkg-deb --build --root-owner-group -Zxz "$root" "$out" >/dev/null
echo "built $out ($(du -h "$out" | cut -f1); installed $((size / 1024)) MB)"
