#!/usr/bin/env bash
# Resident memory of the real GUI while a user pans through a whole run (docs/performance.md,
# "10^8 kernels"): bench/gui_pan_memory.sh RUN.h5 [OUT_DIR] [WATTLINE_BINARY]
#
# Under Xvfb (2200 x 1300), opens RUN.h5 in `wattline` as a user would, and with the keyboard
# (xdotool; the timeline's own keys: W/S zoom by 0.8 about the mouse, D pans 15 % of the view,
# Home fits the run) goes through these phases:
#   open     the window opens and analyses the whole run (the analysis dock), until its RSS settles
#   hour     the whole run
#   10min    zoomed to ~10 min (8 x W), panned through the whole hour (40 x D)
#   1min     zoomed to ~1 min (18 x W), panned through the whole hour (370 x D)
#   1s       zoomed to ~1 s (36 x W) at 12 places across the hour, 20 x D at each
# twice: on the GPU heatmap a run of many GPUs opens on ("heatmap-"), then on the tracks (Ctrl+H)
# paged down to the ranks' kernel streams at the bottom ("tracks-").
# VmRSS is sampled every 0.2 s into OUT_DIR/rss.tsv (seconds, phase, MB); the peak of each phase
# and the process's VmHWM are printed; a screenshot ends each phase (OUT_DIR/PHASE.png).
# Needs xvfb-run, xdotool and imagemagick (Debian: xvfb xdotool imagemagick).
set -euo pipefail
run=${1:?usage: gui_pan_memory.sh RUN.h5 [OUT_DIR] [WATTLINE_BINARY]}
out=${2:-/tmp/wattline-gui-pan}
bin=${3:-$(dirname "$0")/../build/wattline}
run=$(realpath "$run")
bin=$(realpath "$bin")
mkdir -p "$out"
out=$(realpath "$out")
for tool in xvfb-run xdotool import; do
  command -v "$tool" >/dev/null || { echo "gui_pan_memory.sh: needs $tool" >&2; exit 2; }
done

if [ -z "${WATTLINE_GUI_PAN_INNER:-}" ]; then
  WATTLINE_GUI_PAN_INNER=1 exec xvfb-run -a -s '-screen 0 2200x1300x24' "$0" "$run" "$out" "$bin"
fi

export QT_QPA_PLATFORM=xcb
"$bin" "$run" >"$out/gui.log" 2>&1 &
pid=$!
phase=open
echo "$phase" >"$out/phase"
: >"$out/rss.tsv"
t0=$(date +%s.%N)
(
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' /proc/"$pid"/status 2>/dev/null || true)
    [ -n "$rss" ] && printf '%.1f\t%s\t%.0f\n' "$(echo "$(date +%s.%N) - $t0" | bc)" \
      "$(cat "$out/phase")" "$(echo "$rss / 1024" | bc -l)" >>"$out/rss.tsv"
    sleep 0.2
  done
) &
sampler=$!

win=$(xdotool search --sync --onlyvisible --pid "$pid" --name 'Wattline' | head -n 1)
xdotool windowmove "$win" 0 0 windowsize "$win" 2200 1300
sleep 2
# The timeline's centre: the window minus its docks; the mouse stays there (zoom anchor).
xdotool mousemove 900 650 click 1
settle() {  # wait until RSS changes by < 2 MB over 3 s (at most $1 s)
  local last=0 now i
  for ((i = 0; i < $1; i += 3)); do
    sleep 3
    now=$(awk '/^VmRSS/ {print int($2 / 1024)}' /proc/"$pid"/status)
    [ $((now - last)) -lt 2 ] && [ $((last - now)) -lt 2 ] && return
    last=$now
  done
}
keys() {  # KEY COUNT
  local i
  for ((i = 0; i < $2; ++i)); do
    xdotool key --window "$win" "$1"
    sleep 0.05
  done
}
shot() { import -window root "$out/$phase.png"; }
next() {
  shot
  phase=$1
  echo "$phase" >"$out/phase"
}

# One pass of the four zooms, each phase named PREFIX-ZOOM.
pass() {
  local prefix=$1
  next "$prefix-hour"
  xdotool key --window "$win" Home
  settle 30
  next "$prefix-10min"
  keys w 8
  keys d 40
  settle 15
  next "$prefix-1min"
  xdotool key --window "$win" Home
  keys w 18
  keys d "${WATTLINE_GUI_PAN_1MIN_STEPS:-370}"
  settle 15
  next "$prefix-1s"
  local p
  for p in 0 1 2 3 4 5 6 7 8 9 10 11; do
    xdotool key --window "$win" Home
    sleep 0.3
    # Zoom anchors spread across the hour: the timeline spans x = 470-1790 in this window.
    xdotool mousemove $((470 + (p * 2 + 1) * 1320 / 24)) 650
    keys w 36
    keys d "${WATTLINE_GUI_PAN_1S_STEPS:-20}"
  done
  xdotool mousemove 900 650
  settle 15
}

settle 300
# A run of many GPUs opens on the GPU heatmap (one row per GPU); then the tracks (Ctrl+H), paged
# down to the last rows, the ranks' kernel streams.
pass heatmap
xdotool key --window "$win" ctrl+h
sleep 1
keys Next "${WATTLINE_GUI_PAN_PAGES:-400}"
pass tracks
next end
hwm=$(awk '/^VmHWM/ {print int($2 / 1024)}' /proc/"$pid"/status)
kill "$pid"
wait "$pid" 2>/dev/null || true
kill "$sampler" 2>/dev/null || true
echo "phase	peak RSS (MB)"
awk -F'\t' '{ if ($3 > peak[$2]) peak[$2] = $3; if (!seen[$2]++) order[++n] = $2 }
  END { for (i = 1; i <= n; ++i) printf "%s\t%d\n", order[i], peak[order[i]] }' "$out/rss.tsv"
echo "VmHWM	$hwm"
