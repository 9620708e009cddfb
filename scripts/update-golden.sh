#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Regenerates the golden hashes of tests/golden/samples.txt: runs every line's wattline command on
# the bundled samples, writes the outputs to BUILD_DIR/golden/ (to look at before committing) and
# rewrites the first column with their SHA-256. Run it after an intentional change of what the
# samples are or of how they are analysed or drawn; tests/export/golden_test.cpp checks the hashes.
#
#   scripts/update-golden.sh [BUILD_DIR]      (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bin="$build/wattline"
manifest="$root/tests/golden/samples.txt"
out="$build/golden"
[[ -x "$bin" ]] || { echo "update-golden: $bin not built (cmake --build --preset default)" >&2; exit 1; }
mkdir -p "$out"
# Headless, as the test runs it.
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM
tmp="$(mktemp "$manifest.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
changed=0
while IFS= read -r line || [[ -n "$line" ]]; do
  if [[ -z "$line" || "$line" == \#* ]]; then
    printf '%s\n' "$line" >>"$tmp"
    continue
  fi
  read -r old name args <<<"$line"
  file="$out/$name"
  cmd="${args//\{S\}/$root/resources/samples}"
  cmd="${cmd//\{OUT\}/$file}"
  # shellcheck disable=SC2086  # the arguments are words without spaces
  if [[ "$args" == *"{OUT}"* ]]; then
    "$bin" $cmd >/dev/null
  else
    "$bin" $cmd >"$file"
  fi
  new="$(sha256sum "$file" | cut -d' ' -f1)"
  if [[ "$new" != "$old" ]]; then
    echo "changed: $name ($file)"
    changed=$((changed + 1))
  fi
  printf '%s %s %s\n' "$new" "$name" "$args" >>"$tmp"
done <"$manifest"
mv "$tmp" "$manifest"
trap - EXIT
echo "update-golden: $changed of the outputs changed; they are in $out"
