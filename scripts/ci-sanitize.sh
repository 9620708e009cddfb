#!/usr/bin/env bash
# CI's sanitizer step (issue 16, docs/robustness.md): builds the "asan" preset (GCC, ASan + UBSan,
# -O1) into build-asan/ and runs the tests labelled "sanitize" (loaders, analysis, the command
# line, the cheap GUI tests) under it. Any sanitizer report fails the test it happens in.
#
#   scripts/ci-sanitize.sh            configure, build the sanitize tests, run them
#   SANITIZE_SET=core scripts/...     only loaders' and the fuzz regression tests (no widgets, no
#                                     wattline executable): about a third of the build
#   SANITIZE_JOBS=4 scripts/...       parallel jobs (default: the machine's cores)
#
# It builds only the target wattline_sanitize_tests (tests/CMakeLists.txt lists its tests), not the
# whole tree: a cold build of everything would not fit CI's time on 2 cores. Prints the wall time
# of the build and of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${SANITIZE_JOBS:-$(nproc)}
case "${SANITIZE_SET:-all}" in
  all) target=wattline_sanitize_tests label=sanitize ;;
  core) target=wattline_sanitize_core label=sanitize_core ;;
  *)
    echo "ci-sanitize.sh: SANITIZE_SET is 'all' or 'core'" >&2
    exit 2
    ;;
esac
# Leaks count; UBSan's findings stop the process (GCC recovers from them by default and the test
# would pass); reports carry a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}

t0=$SECONDS
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs" --target "$target"
t1=$SECONDS
./scripts/ctest-strict.sh --preset asan -L "$label" -j "$jobs"
t2=$SECONDS
echo "ci-sanitize: build $((t1 - t0)) s, tests $((t2 - t1)) s (jobs $jobs)"
