#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Start Wattline from its desktop entry as a desktop would (issue 34, docs/install.md): install into
# a scratch prefix, build the prefix's file-type and desktop-entry caches, then under Xvfb open the
# installed sample with `gio open` (GLib picks the entry for application/x-wattline-run and runs its
# Exec line). A window of the installed binary must appear within 20 s, titled with the run's name.
#
#   desktop_launch_test.sh BUILD_DIR
# Exit 77 (skipped) without a program it needs, a failure under CI=true (scripts/setup-debian.sh).
set -uo pipefail
source "$(dirname "$0")/need.sh"  # fail, need PROGRAM PACKAGE

if [ "${1:-}" = --under-xvfb ]; then  # the second half, run by xvfb-run below
  p=${2:?} tmp=${3:?}
  sample=$p/share/wattline/samples/llama3-8b-h100x8-mbs4.h5
  run=$(QT_QPA_PLATFORM=offscreen "$p/bin/wattline" info "$sample" | sed -n 's/^run  *\(.*[^ ]\)  *\[SIMULATED\]$/\1/p;s/^run  *\([^[]*[^ []\)$/\1/p')
  [ -n "$run" ] || fail "wattline info does not name the sample's run"
  gio open "$sample" >"$tmp/gio.log" 2>&1 || {
    cat "$tmp/gio.log"
    fail "gio open $sample exited with an error"
  }
  exe=$(readlink -f "$p/bin/wattline")
  for _ in $(seq 1 100); do  # 20 s
    for w in $(xdotool search --name 'Wattline' 2>/dev/null); do
      pid=$(xdotool getwindowpid "$w" 2>/dev/null) || continue
      title=$(xdotool getwindowname "$w" 2>/dev/null) || continue
      [ "$(readlink -f "/proc/$pid/exe" 2>/dev/null)" = "$exe" ] || continue
      [[ "$title" == *"$run"*" — Wattline" ]] || continue
      kill "$pid"
      echo "ok: gio open started $exe (pid $pid) from the desktop entry; its window is '$title'"
      exit 0
    done
    sleep 0.2
  done
  echo "windows named Wattline: $(xdotool search --name Wattline 2>/dev/null | while read -r w; do
    echo -n "'$(xdotool getwindowname "$w")' (pid $(xdotool getwindowpid "$w" 2>/dev/null)) "; done)"
  cat "$tmp/gio.log"
  for e in /proc/[0-9]*/exe; do  # only processes of this prefix's binary
    [ "$(readlink -f "$e" 2>/dev/null)" = "$exe" ] && kill "$(basename "$(dirname "$e")")" 2>/dev/null
  done
  fail "no window of $exe titled '$run — Wattline' within 20 s"
fi

build=${1:?usage: desktop_launch_test.sh BUILD_DIR}
need cmake cmake
need update-mime-database shared-mime-info
need update-desktop-database desktop-file-utils
need gio libglib2.0-bin
need xvfb-run xvfb
need xauth xauth
need xdotool xdotool
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
p=$tmp/prefix
cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"
  fail "cmake --install exited with an error"
}
mkdir -p "$tmp/home" "$tmp/config" "$tmp/cache" "$tmp/runtime"
chmod 700 "$tmp/runtime"
# The prefix as the only user data dir: no other mimeapps.list or desktop entry can claim the type.
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache XDG_RUNTIME_DIR=$tmp/runtime
export XDG_DATA_HOME=$p/share XDG_DATA_DIRS=$p/share:/usr/share XDG_CONFIG_DIRS=/etc/xdg
export PATH=$p/bin:$PATH
unset QT_QPA_PLATFORM WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS XDG_CURRENT_DESKTOP DESKTOP_SESSION
update-mime-database "$p/share/mime" || fail "update-mime-database $p/share/mime failed"
update-desktop-database "$p/share/applications" || fail "update-desktop-database failed"
grep -q '^application/x-wattline-run=.*wattline.desktop' "$p/share/applications/mimeinfo.cache" ||
  fail "mimeinfo.cache does not list wattline.desktop for application/x-wattline-run"
t=$(gio info -a standard::content-type "$p/share/wattline/samples/llama3-8b-h100x8-mbs4.h5" |
  sed -n 's/^ *standard::content-type: //p')
[ "$t" = application/x-wattline-run ] || fail "gio sees the sample as '$t', not application/x-wattline-run"
xvfb-run -a -s '-screen 0 1280x1024x24' bash "$0" --under-xvfb "$p" "$tmp"
