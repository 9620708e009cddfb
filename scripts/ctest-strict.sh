#!/usr/bin/env bash
# Runs ctest with the given arguments and fails where ctest fails, and also, under CI=true, where
# it reports a test as skipped: CI installs everything the tests need (scripts/setup-debian.sh), so
# a skip there is a missing dependency that would otherwise pass as green. Elsewhere skips are
# listed and allowed. Used by .ci/run and scripts/ci-sanitize.sh.
set -euo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest "$@" 2>&1 | tee "$log"
skipped=$(grep -c "(Skipped)" "$log" || true)
if [ "$skipped" -gt 0 ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "ctest-strict: $skipped test(s) skipped (listed above); under CI=true every test must run" >&2
    exit 1
  fi
  echo "ctest-strict: $skipped test(s) skipped (listed above); CI would fail on them" >&2
fi
