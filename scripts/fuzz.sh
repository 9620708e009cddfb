#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (fuzz/README.md): scripts/fuzz.sh [TARGET|all] [CPU_SECONDS]
#
# Builds the "fuzz" preset (clang, ASan + UBSan) into build-fuzz/, writes the seed corpora once
# (fuzz/make_seeds.py from tests/data, plus small run files), then fuzzes each target under
# `nice -n 19`, one at a time, until it has used CPU_SECONDS of CPU time (default 60; the
# machine's other work slows the wall clock, not the count). The corpus grows in
# build-fuzz/corpus/TARGET; crashes, timeouts and out-of-memory inputs land in
# build-fuzz/artifacts/TARGET/ and stop that target (FUZZ_KEEP_GOING=1 keeps fuzzing past them).
# Every session appends a line to build-fuzz/fuzz-stats.tsv (CPU seconds, runs, outcome).
#
#   scripts/fuzz.sh --list            the targets
#   scripts/fuzz.sh kineto 1800       30 CPU-minutes of the Kineto parser
#   scripts/fuzz.sh all 1800          every target in turn
#   FUZZ_NO_BUILD=1 scripts/fuzz.sh   skip the build step
#   FUZZ_KEEP_GOING=1 FUZZ_JOBS=2     fork mode: go on past findings, with 2 fuzzing processes
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(kineto rocprofv3 rocprof_csv nsys nvidia_smi_csv nvidia_smi_dmon dcgm amd_smi zeus charllm
         experiment_matrix run_file cli_args range_args import_job)
BUILD=build-fuzz
CHUNK_WALL=${FUZZ_CHUNK_SECONDS:-600}  # wall-clock length of one fuzzer session

dict_for() {
  case "$1" in
    kineto | rocprofv3) echo fuzz/dict/json.dict ;;
    cli_args | range_args) echo fuzz/dict/args.dict ;;
    nsys | run_file) echo "" ;;
    *) echo fuzz/dict/csv.dict ;;
  esac
}

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${TARGETS[@]}"
  exit 0
fi
target=${1:-all}
budget=${2:-60}
if [ "$target" != all ] && [[ ! " ${TARGETS[*]} " =~ " $target " ]]; then
  echo "fuzz.sh: unknown target '$target' (scripts/fuzz.sh --list)" >&2
  exit 2
fi

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  cmake --preset fuzz >/dev/null
  nice -n 19 cmake --build --preset fuzz -j "${FUZZ_BUILD_JOBS:-2}"
fi
if [ ! -d "$BUILD/seeds" ]; then
  python3 fuzz/make_seeds.py "$BUILD/seeds.tmp" >/dev/null
  mv "$BUILD/seeds.tmp" "$BUILD/seeds"
fi
# The run files come from the built fuzz_seed_runs (remove seeds/run_file to write them again).
if [ ! -d "$BUILD/seeds/run_file" ]; then
  "$BUILD/fuzz/fuzz_seed_runs" "$BUILD/seeds/run_file.tmp"
  mv "$BUILD/seeds/run_file.tmp" "$BUILD/seeds/run_file"
fi

# CPU seconds (user + system) of every child this shell has waited for.
# CPU seconds (user + system) of every child this shell has waited for, into CPU_NOW. `times`
# must run in this shell, not in a $(...) subshell (which has no children of its own).
cpu_now() {
  times >"$BUILD/.times.$$"
  CPU_NOW=$(python3 -c '
import re, sys
line = open(sys.argv[1]).read().splitlines()[-1]  # children: "0m1.250s 0m0.031s"
t = sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", line))
print("%.1f" % t)' \
    "$BUILD/.times.$$")
}

fuzz_one() {
  local t=$1 corpus=$BUILD/corpus/$1 art=$BUILD/artifacts/$1 log=$BUILD/logs/$1.log
  mkdir -p "$corpus" "$art" "$BUILD/logs"
  local dict extra=()
  dict=$(dict_for "$t")
  [ -n "$dict" ] && extra+=("-dict=$dict")
  [ -n "${FUZZ_KEEP_GOING:-}" ] &&
    extra+=("-fork=${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  local lsan=${LSAN_OPTIONS:-}
  [ "$t" = run_file ] && lsan=${LSAN_OPTIONS:-suppressions=$PWD/fuzz/hdf5.lsan.supp:print_suppressions=0}
  local start_cpu used runs=0 outcome=ok wall0=$SECONDS
  cpu_now
  start_cpu=$CPU_NOW
  used=0
  while python3 -c "import sys; sys.exit(0 if float('$used') < float('$budget') else 1)"; do
    local left
    left=$(python3 -c "print(max(10, int(min($CHUNK_WALL, float('$budget') - float('$used') + 1))))")
    set +e
    LSAN_OPTIONS=$lsan nice -n 19 "$BUILD/fuzz/fuzz_$t" "$corpus" "$BUILD/seeds/$t" "${extra[@]}" \
      -max_total_time="$left" -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -print_final_stats=1 -artifact_prefix="$art/" >"$log" 2>&1
    local rc=$?
    set -e
    cpu_now
    used=$(python3 -c "print(round($CPU_NOW - $start_cpu, 1))")
    # Executions: the final stats line, or in fork mode (FUZZ_KEEP_GOING) the last status line.
    local n
    n=$(grep -oP 'stat::number_of_executed_units: \K\d+' "$log" | tail -n 1 || true)
    [ -z "$n" ] && n=$(grep -oP '^#\K\d+(?=: cov)' "$log" | tail -n 1 || true)
    runs=$((runs + ${n:-0}))
    if [ $rc -ne 0 ]; then
      outcome="finding (exit $rc): $(grep -m1 -oE '(ERROR: [A-Za-z]+: [^ ]+|==[0-9]+==ERROR: [^(]*|runtime error: .{0,80}|ALARM: .*|out-of-memory.*|deadly signal)' "$log" | head -n 1)"
      echo "fuzz.sh: $t: $outcome" >&2
      ls -t "$art" | head -n 3 | sed "s|^|  $art/|" >&2
      echo "  reproduce: $BUILD/fuzz/fuzz_$t $art/FILE   (log: $log)" >&2
      break
    fi
  done
  local corpus_n
  corpus_n=$(find "$corpus" -type f | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$used" "$((SECONDS - wall0))" \
    "$runs" "$corpus_n" "$outcome" >>"$BUILD/fuzz-stats.tsv"
  echo "fuzz.sh: $t: ${used} CPU s, $((SECONDS - wall0)) s wall, $runs runs, corpus $corpus_n: $outcome"
  [ "$outcome" = ok ]
}

status=0
if [ "$target" = all ]; then
  for t in "${TARGETS[@]}"; do fuzz_one "$t" || status=1; done
else
  fuzz_one "$target" || status=1
fi
exit $status
