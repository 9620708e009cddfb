# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by the tests of this folder: fail MESSAGE, and need PROGRAM PACKAGE, which exits 77
# (skipped) when PROGRAM is missing, or fails under CI=true (tests/support/missing.h's rule; the
# Debian package is installed by scripts/setup-debian.sh).
fail() {
  echo "FAIL: $*"
  exit 1
}
need() {
  command -v "$1" >/dev/null && return
  [ "${CI:-}" = true ] && fail "$1 is missing under CI=true (scripts/setup-debian.sh installs $2)"
  echo "SKIP: $1 is not installed (Debian package $2)"
  exit 77
}
