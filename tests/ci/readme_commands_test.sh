#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The README's two commands (its first sh block): the first installs, builds only the targets it
# names and opens a bundled sample that exists; the second builds everything and runs ctest, as
# .ci/run does step by step. With the Ninja build tree, checks that the first command's targets
# are a small part of the whole build (it once built all 474 targets before the window opened).
#
#   readme_commands_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=${1:?usage: readme_commands_test.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: readme_commands_test.sh SOURCE_DIR BUILD_DIR}
fail() {
  echo "FAIL: $*"
  exit 1
}

mapfile -t cmds < <(awk '/^```sh$/ {inblock = 1; next} /^```$/ {if (inblock) exit} inblock' "$src/README.md")
[ ${#cmds[@]} -eq 2 ] || fail "README.md opens with ${#cmds[@]} commands, not 2"
first=${cmds[0]} second=${cmds[1]}
echo "first:  $first"
echo "second: $second"

re1='^\./scripts/setup-debian\.sh && \./scripts/build\.sh ([a-z_ ]+) && \./build/wattline (.+)$'
[[ $first =~ $re1 ]] || fail "the first command is not 'setup && build.sh TARGETS && ./build/wattline SAMPLE'"
targets=${BASH_REMATCH[1]}
sample=${BASH_REMATCH[2]}
[ -f "$src/$sample" ] || fail "the first command opens $sample, which does not exist"
[ "$second" = "./scripts/setup-debian.sh && ./scripts/build.sh && ctest --preset default" ] ||
  fail "the second command changed: update .ci/run's steps and this test together"
grep -qx './scripts/build.sh' "$src/.ci/run" || fail ".ci/run does not run ./scripts/build.sh as a step"
grep -q '^\./scripts/ctest-strict\.sh --preset default$' "$src/.ci/run" ||
  fail ".ci/run does not run the README's ctest --preset default (through ctest-strict.sh)"

# How much of the build the first command asks for: compile and link commands of its targets
# against those of everything.
# shellcheck disable=SC2086
part=$(ninja -C "$build" -t commands $targets | wc -l)
all=$(ninja -C "$build" -t commands all | wc -l)
echo "the first command's targets ($targets): $part of $all build commands"
[ "$part" -gt 0 ] || fail "ninja knows no commands for '$targets'"
[ $((part * 2)) -lt "$all" ] || fail "the first command builds $part of $all commands: not the app alone"
echo "readme_commands_test: both commands as documented"
