#!/usr/bin/env bash
# Starts a virtual desktop (Xvfb, a D-Bus session, trayer as the XEmbed tray host), then the tray
# with TRAY (default: trayburn), and checks as a person would see it:
#   1. the tray's icon is docked in trayer's panel;
#   2. a right click on it opens its menu (a new window on the screen);
#   3. `SUMMARY` (default: trayburn summary) opens the summary window ("trayburn — …").
# CHECK_MENU=0 (the xorg backend has no menu) instead says what a left, middle and right click show;
# SUMMARY=- skips 3 (no Tk).
# Each check waits up to 60 s for what it looks for (polling the X server), and the script exits 1
# at the first that does not come. Needs: xvfb trayer xdotool x11-utils dbus-x11 (Debian names).
#   TRAY="trayburn demo" SUMMARY="trayburn demo --window" packaging/desktop-check.sh
set -euo pipefail
tray=${TRAY:-trayburn}
summary=${SUMMARY:-trayburn summary}
check_menu=${CHECK_MENU:-1}
shots=${CHECK_SHOTS:-}  # a folder for screenshots (needs imagemagick's import), or empty
say() { printf 'desktop-check: %s\n' "$*"; }

for tool in Xvfb trayer xdotool xwininfo dbus-run-session; do
  command -v $tool >/dev/null || { say "no $tool here (apt-get install xvfb trayer xdotool x11-utils dbus-x11)"; exit 2; }
done

if [ "${1:-}" != "--inside" ]; then
  # A display number no other X server holds: Xvfb picks it and writes it to fd 3.
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp -noreset 3>"$fifo" >/dev/null 2>&1 &
  xvfb=$!
  trap 'kill $xvfb 2>/dev/null || true; rm -f "$fifo"' EXIT
  read -r number <"$fifo"
  display=:$number
  DISPLAY=$display dbus-run-session -- "$0" --inside
  exit $?
fi

poll() {  # poll WHAT COMMAND...: until COMMAND succeeds, 60 s at most
  local what=$1
  shift
  for _ in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  say "FAILED: $what did not happen within 60 s (windows shown: $(names | paste -sd'|'))"
  exit 1
}
names() { for w in $(xdotool search --onlyvisible --name . 2>/dev/null); do xdotool getwindowname "$w"; done; }
panel() { xwininfo -root -tree | awk '/"panel": \("panel" "trayer"\)/ {print $1; exit}'; }
docked() { local p; p=$(panel) && [ -n "$p" ] && xwininfo -id "$p" -tree | grep '"trayburn' >/dev/null; }
icon() { xwininfo -id "$(panel)" -tree | awk '/"trayburn/ {print $1; exit}'; }
shot() { [ -n "$shots" ] && command -v import >/dev/null && import -window root "$shots/$1.png" 2>/dev/null || true; }

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
trayer --edge top --align right --widthtype request --height 24 >/dev/null 2>&1 &
pids+=($!)
panel_shown() { [ -n "$(panel)" ]; }
poll "trayer's panel to show" panel_shown
start=$(date +%s%N)
$tray >"${CHECK_LOG:-/dev/null}" 2>&1 &
pids+=($!)
poll "the tray icon docking in trayer" docked
ms=$((($(date +%s%N) - start) / 1000000))
say "tray docked in trayer after $((ms / 1000)).$((ms % 1000 / 100)) s: $(xdotool getwindowname "$(icon)")"
shot tray

# The icon's centre, read again at each try: trayer's panel grows (and the icon moves) as it docks.
on_icon() {
  eval "$(xwininfo -id "$(icon)" | awk '/Absolute upper-left X/ {x=$4} /Absolute upper-left Y/ {y=$4}
    /Width:/ {w=$2} /Height:/ {h=$2} END {print "x=" x + int(w / 2) " y=" y + int(h / 2)}')"
  xdotool mousemove $x $y
  xdotool getmouselocation | grep "^x:$x y:$y " >/dev/null
}
poll "the pointer on the icon" on_icon
if [ "$check_menu" = 0 ]; then
  # What each button does, as a person would see it: a window shown within 3 s, or nothing.
  viewable() { for w in $(xwininfo -root -children | awk '$1 ~ /^0x/ {print $1}'); do
    if xwininfo -id "$w" 2>/dev/null | grep -q 'Map State: IsViewable'; then echo "$w"; fi; done; }
  for b in 1:left 2:middle 3:right; do
    before=$(viewable | sort)
    xdotool click "${b%%:*}"
    got="nothing shown"
    for _ in $(seq 30); do
      [ "$(viewable | sort)" != "$before" ] && { got="a window shown"; break; }
      sleep 0.1
    done
    say "${b#*:} click on the icon: $got"
    xdotool key Escape
  done
  say "menu not checked (CHECK_MENU=0)"
else
# The menu: a viewable override-redirect top-level window at least 100 px tall (a tooltip is one line).
menu() {
  local w
  for w in $(xwininfo -root -children | awk '$1 ~ /^0x/ {print $1}'); do
    xwininfo -id "$w" | awk '/Map State: IsViewable/ {v=1} /Override Redirect State: yes/ {o=1} /Height:/ {h=$2}
      END {exit !(v && o && h >= 100)}' && { echo "$w"; return 0; }
  done
  return 1
}
# A right click, again every 3 s until the menu shows (a tray just docked may not take the first).
for try in $(seq 20); do
  xdotool click 3
  for _ in $(seq 30); do menu >/dev/null && break 2; sleep 0.1; done
  [ "$try" = 20 ] && { say "FAILED: no menu after 20 right clicks on the icon"; exit 1; }
  xdotool key Escape
done
say "menu opened on a right click: $(xwininfo -id "$(menu)" | awk '/Width:/ {w=$2} /Height:/ {h=$2} END {print w "x" h " px"}')"
shot menu
xdotool key Escape || true
fi

if [ "$summary" = - ]; then
  say "summary window not checked (SUMMARY=-)"
  say "PASSED"
  exit 0
fi

$summary >/dev/null 2>&1 &
pids+=($!)
window() { names | grep '^trayburn — ' >/dev/null; }
poll "the summary window opening" window
say "summary window open: $(names | grep '^trayburn — ' | head -1)"
shot summary
say "PASSED"
