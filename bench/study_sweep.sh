#!/bin/bash
# The study benchmark: simulate every configuration of the seed paper's experiment matrix (386
# runs; 2 iterations each, kernel traces of the first rank of each pipeline stage), then time
# `wattline compare` over the folder cold (no summary cache: every run analysed) and warm (every
# summary from the cache).
#
# Usage: [WATTLINE=BIN] bench/study_sweep.sh [OUT_DIR] [MATRIX_CSV]   (from the repository root)
# Platforms: the sweeps named ...-h200 and the inference and lora sweeps (4 nodes x 8 GPUs: the
# paper's H200 cluster) on H200, the rest on H100. Rows are addressed as SWEEP/NAME@LINE (names
# repeat in the inference and lora sweeps). Configurations that do not fit in GPU memory are
# simulated with --allow-oom and marked invalid, as the paper's out-of-memory rows; those the
# simulator refuses (a global batch that dp x mbs does not divide, layers that pp does not
# divide) are listed in OUT_DIR/simulate.log and left out.
set -euo pipefail
out=${1:-/tmp/wattline-study-386}
matrix=${2:-../shared/data/charllm/experiment-matrix.csv}
bin=${WATTLINE:-./build/wattline}  # a copy keeps a rebuild from disturbing the run
mkdir -p "$out"
start=$(date +%s.%N)
line=1
tail -n +2 "$matrix" | while IFS=, read -r sweep model name rest; do
  line=$((line + 1))
  case "$sweep" in *h200* | inference | lora) platform=h200 ;; *) platform=h100 ;; esac
  file="$out/$sweep--$name@$line.h5"
  [ -f "$file" ] && continue
  "$bin" simulate --from-matrix "$matrix" --config "$sweep/$name@$line" --platform "$platform" \
    --iterations 2 --trace-ranks first-per-stage --allow-oom --quiet -o "$file" \
    >/dev/null 2>>"$out/simulate.log" ||
    echo "not simulated: $sweep/$name@$line" >>"$out/simulate.log"
done
end=$(date +%s.%N)
echo "simulated $(ls "$out"/*.h5 | wc -l) runs in $(echo "$end - $start" | bc) s ($(du -sh "$out" | cut -f1))"
rm -f "$out"/*.summary.json
for t in 1 2; do
  /usr/bin/time -f "compare cold, threads=$t: %e s wall, %U s user, %M KB peak" \
    "$bin" compare "$out" --threads "$t" --no-cache --quiet >/dev/null
done
/usr/bin/time -f "compare writing the cache (threads=2): %e s wall, %U s user" \
  "$bin" compare "$out" --threads 2 --quiet >/dev/null
/usr/bin/time -f "compare warm (all cached): %e s wall, %U s user, %M KB peak" \
  "$bin" compare "$out" --quiet >/dev/null
