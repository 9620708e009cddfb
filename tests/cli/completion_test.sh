#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The bash and zsh completion that `wattline --completion` prints (issue 34): bash's completion
# function, called as bash calls it, completes commands, each command's options (exactly those of
# its --help), the values of --format (the importer registry), --view (the export views) and
# --theme, and .h5 files; zsh's script parses, and hands _arguments each option of --help.
#
#   completion_test.sh WATTLINE_BIN
# Exit 77 (skipped) without zsh, a failure under CI=true (scripts/setup-debian.sh).
set -uo pipefail
bin=$(realpath "${1:?usage: completion_test.sh WATTLINE_BIN}")
fail() {
  echo "FAIL: $*"
  exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --completion bash >"$tmp/wattline.bash" || fail "wattline --completion bash exited $?"
"$bin" --completion zsh >"$tmp/_wattline" || fail "wattline --completion zsh exited $?"
mkdir "$tmp/cwd" "$tmp/cwd/runs" && touch "$tmp/cwd/a.h5" "$tmp/cwd/notes.txt"
cd "$tmp/cwd" || fail "cd"

# complete WORD...: what _wattline offers for the last word (one line, space-separated)
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
           _wattline; echo "${COMPREPLY[*]}"' _ "$tmp/wattline.bash" "$@"
}
expect() {  # expect "WORDS" WANTED...: each WANTED is offered
  local got
  got=" $(complete_words $1) "
  shift
  for w in "$@"; do
    [[ $got == *" $w "* ]] || fail "completing '$*' offers '$got', without '$w'"
  done
}
[ "$(complete_words wattline ana)" = analyze ] || fail "wattline ana<TAB>: $(complete_words wattline ana)"
[ "$(complete_words wattline analyze --ra)" = "--range --ranks --raw-budget" ] ||
  fail "wattline analyze --ra<TAB>: $(complete_words wattline analyze --ra)"
[ "$(complete_words wattline analyze --ran)" = "--range --ranks" ] || fail "wattline analyze --ran<TAB>"
expect "wattline import --format ''" kineto nvidia-smi-csv nsys-sqlite dcgm-dmon list
expect "wattline export --view ''" timeline heatmap pareto
expect "wattline export --theme ''" screen publication
expect "wattline export --align ''" warp absolute
expect "wattline compare --normalize ''" none token
expect "wattline simulate --model ''" Llama3-70B
[ "$(complete_words wattline export --view = heat)" = heatmap ] || fail "wattline export --view=heat<TAB>"
[ "$(complete_words wattline info '')" = "runs a.h5" ] || fail "wattline info <TAB>: $(complete_words wattline info '')"
[ -z "$(complete_words wattline analyze --range '')" ] || fail "--range <TAB> offers a value"

mapfile -t cmds < <("$bin" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
[ "$(complete_words wattline '' | tr ' ' '\n' | grep -v '\.h5$' | grep -vx runs)" = "$(printf '%s\n' "${cmds[@]}")" ] ||
  fail "wattline <TAB> does not offer the commands of --help"
for cmd in "${cmds[@]}"; do
  help_opts=$("$bin" "$cmd" --help | grep -oE '^  --[a-z0-9-]+' | sed 's/^  //' | sort)
  diff <(echo "$help_opts") <(complete_words wattline "$cmd" -- | tr ' ' '\n' | sort) ||
    fail "wattline $cmd --<TAB> does not offer exactly the options of its --help (< help, > completion)"
done

if ! command -v zsh >/dev/null; then
  [ "${CI:-}" = true ] && fail "zsh is missing under CI=true (scripts/setup-debian.sh installs it)"
  echo "SKIP: zsh is not installed (bash completion passed)"
  exit 77
fi
zsh -n "$tmp/_wattline" || fail "zsh -n rejects _wattline"
head -1 "$tmp/_wattline" | grep -qx '#compdef wattline' || fail "_wattline does not start with #compdef wattline"
# _arguments and _describe stubbed: what _wattline hands them for `wattline export --view <TAB>`.
specs=$(zsh -f -c 'compdef() { :; }; _describe() { print -- "describe:$*" }
  _files() { :; }; _arguments() { print -l -- "$@" }
  source "$1"; words=(wattline export --view ""); CURRENT=4; _wattline
  words=(wattline an); CURRENT=2; _wattline' _ "$tmp/_wattline") || fail "zsh: _wattline failed"
grep -q '^--view=\[what to draw:\]:timeline|heatmap|.*:(timeline heatmap .*pareto)$' <<<"$specs" ||
  fail "zsh: no --view spec with the export views: $specs"
grep -q '^--theme=.*:(screen publication)$' <<<"$specs" || fail "zsh: no --theme spec"
grep -q '^describe:-t commands wattline command commands$' <<<"$specs" || fail "zsh: commands not offered"
zsh_opts=$(grep -oE '^\*?(\(- \*\))?--[a-z0-9-]+' <<<"$specs" | sed -e 's/^\*//' -e 's/^(- \*)//' | sort)
diff <("$bin" export --help | grep -oE '^  --[a-z0-9-]+' | sed 's/^  //' | sort) <(echo "$zsh_opts") ||
  fail "zsh: export's _arguments specs are not exactly its --help options"
echo "ok: bash completion of ${#cmds[@]} commands, zsh script"
