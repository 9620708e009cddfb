#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The man pages that `wattline --generate-docs` writes (issue 34): one per command of
# `wattline --help` plus wattline(1); each lists exactly the options its command's --help lists,
# is what `wattline --man COMMAND` prints, and is troff that groff formats without a warning and
# man renders. The generator options stay out of --help.
#
#   man_pages_test.sh WATTLINE_BIN
# Exit 77 (skipped) without groff or man, a failure under CI=true (scripts/setup-debian.sh).
set -uo pipefail
bin=${1:?usage: man_pages_test.sh WATTLINE_BIN}
fail() {
  echo "FAIL: $*"
  exit 1
}
for tool in groff man; do
  if ! command -v "$tool" >/dev/null; then
    [ "${CI:-}" = true ] && fail "$tool is missing under CI=true (scripts/setup-debian.sh installs it)"
    echo "SKIP: $tool is not installed"
    exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --generate-docs "$tmp" || fail "wattline --generate-docs exited $?"
mapfile -t cmds < <("$bin" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
[ ${#cmds[@]} -ge 7 ] || fail "wattline --help lists ${#cmds[@]} commands"
"$bin" --help | grep -q -- '--man\|--completion\|--generate-docs' && fail "wattline --help shows the generator options"

# The option names of a man page: the .TP heads that start with \fB\-\-.
man_options() {
  awk 'prev == ".TP" && /^\\fB\\-\\-/ {print} {prev = $0}' "$1" |
    sed -e 's/^\\fB//' -e 's/\\fR.*//' -e 's/\\-/-/g' | sort
}
checked=0
for cmd in "${cmds[@]}"; do
  page=$tmp/man/man1/wattline-$cmd.1
  [ -f "$page" ] || fail "no man page for $cmd"
  diff <("$bin" --man "$cmd") "$page" >/dev/null || fail "wattline --man $cmd differs from $page"
  help_opts=$("$bin" "$cmd" --help | grep -oE '^  --[a-z0-9-]+' | sed 's/^  //' | sort)
  [ -n "$help_opts" ] || fail "wattline $cmd --help lists no options"
  diff <(echo "$help_opts") <(man_options "$page") ||
    fail "wattline-$cmd.1 does not list exactly the options of 'wattline $cmd --help' (< help, > man)"
  grep -q "^\.B wattline $cmd\$" "$page" || fail "wattline-$cmd.1 has no SYNOPSIS"
  grep -q '^\.BR wattline\\-'"$cmd"' (1)$' "$tmp/man/man1/wattline.1" || fail "wattline.1 does not list $cmd"
  checked=$((checked + 1))
done

for page in "$tmp"/man/man1/*.1; do
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "groff warns on $(basename "$page"): $warnings"
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' 'SEE ALSO'; do
    grep -q "^\.SH $section\$" "$page" || fail "$(basename "$page") has no $section section"
  done
done
rendered=$(MANWIDTH=100 man -l "$tmp/man/man1/wattline-analyze.1" 2>&1)
grep -q 'wattline-analyze - ' <<<"$rendered" || fail "man -l does not render wattline-analyze's NAME: $rendered"
grep -q -- '--range START:END' <<<"$rendered" || fail "man -l does not render --range START:END"
echo "ok: $checked command pages and wattline.1"
