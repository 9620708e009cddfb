#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs .ci/run in a scratch copy of its tree where every step it calls is a stub that records its
# name and fails on request, and checks that a failure of any step fails the run and stops the
# steps after it, and that a test ctest reports as skipped fails it under CI=true. (.ci/run once
# chained its steps with &&, under which bash's `set -e` let a failed build through.)
#
#   ci_run_selftest.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: ci_run_selftest.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

mkdir -p "$work/repo/.ci" "$work/repo/scripts" "$work/bin"
cp "$src/.ci/run" "$work/repo/.ci/run"
cp "$src/scripts/ctest-strict.sh" "$work/repo/scripts/ctest-strict.sh"
# A stub: records its name in $STEPS_LOG, fails when FAIL_STEP names it.
stub() {
  cat >"$1" <<STUB
#!/usr/bin/env bash
echo $2 >>"\$STEPS_LOG"
if [ "\${FAIL_STEP:-}" = "$2" ]; then echo "stub $2 fails" >&2; exit 1; fi
STUB
  chmod +x "$1"
}
stub "$work/repo/scripts/setup-debian.sh" setup
stub "$work/repo/scripts/build.sh" build
stub "$work/repo/scripts/ci-sanitize.sh" sanitize
stub "$work/bin/apt-get" apt-get
# ctest: passes, fails, or reports a skipped test the way ctest does (exit 0).
cat >"$work/bin/ctest" <<'STUB'
#!/usr/bin/env bash
echo ctest >>"$STEPS_LOG"
case "${FAIL_STEP:-}" in
  ctest) echo "50% tests passed, 1 tests failed out of 2"; exit 8 ;;
  skip) printf '100%% tests passed, 0 tests failed out of 2\n\nThe following tests did not run:\n\t  7 - Prom.Https (Skipped)\n'; exit 0 ;;
esac
echo "100% tests passed, 0 tests failed out of 2"
STUB
chmod +x "$work/bin/ctest"

# case FAIL_STEP WANT_EXIT(0|nonzero) STEPS_THAT_MUST_NOT_RUN...
check() {
  local step=$1 want=$2
  shift 2
  : >"$work/steps"
  STEPS_LOG="$work/steps" FAIL_STEP=$step CI=true PATH="$work/bin:$PATH" \
    bash "$work/repo/.ci/run" >"$work/out" 2>&1
  local rc=$?
  if [ "$want" = 0 ] && [ $rc -ne 0 ]; then
    echo "FAIL: with no failing step .ci/run exited $rc"; cat "$work/out"; failures=$((failures + 1))
  elif [ "$want" != 0 ] && [ $rc -eq 0 ]; then
    echo "FAIL: with step '$step' failing .ci/run exited 0"; cat "$work/out"; failures=$((failures + 1))
  fi
  for later in "$@"; do
    if grep -qx "$later" "$work/steps"; then
      echo "FAIL: step '$later' ran after step '$step' failed"; failures=$((failures + 1))
    fi
  done
  echo "case '${step:-none}': exit $rc, steps: $(tr '\n' ' ' <"$work/steps")"
}

check "" 0
grep -qx sanitize "$work/steps" || { echo "FAIL: a passing run did not reach the sanitizer step"; failures=$((failures + 1)); }
check setup nonzero build ctest sanitize
check build nonzero ctest sanitize
check ctest nonzero sanitize
check skip nonzero sanitize
check sanitize nonzero

# The sanitizer step's own ctest goes through ctest-strict.sh too.
grep -q 'ctest-strict.sh' "$src/scripts/ci-sanitize.sh" ||
  { echo "FAIL: scripts/ci-sanitize.sh runs ctest without ctest-strict.sh"; failures=$((failures + 1)); }

if [ $failures -gt 0 ]; then
  echo "ci_run_selftest: $failures failure(s)"
  exit 1
fi
echo "ci_run_selftest: every failing step fails .ci/run"
