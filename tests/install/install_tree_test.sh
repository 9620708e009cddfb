#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `cmake --install` into a scratch prefix (issue 34, docs/install.md): every file is where
# docs/install.md says, the desktop entry validates, the installed file type tells a run written by
# the current writer (and a bundled sample) from a plain HDF5 file, with both of xdg-mime's
# back ends (File::MimeInfo as on most desktops, GLib's gio as under GNOME), and the installed
# binary runs `--version` and `info` on the installed sample.
#
#   install_tree_test.sh SOURCE_DIR BUILD_DIR
# Exit 77 (skipped) without a program it needs, a failure under CI=true (scripts/setup-debian.sh).
set -uo pipefail
src=${1:?usage: install_tree_test.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: install_tree_test.sh SOURCE_DIR BUILD_DIR}
source "$(dirname "$0")/need.sh"  # fail, need PROGRAM PACKAGE
need cmake cmake
need desktop-file-validate desktop-file-utils
need update-mime-database shared-mime-info
need xdg-mime xdg-utils
need mimetype libfile-mimeinfo-perl
need gio libglib2.0-bin
if ! /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
  [ "${CI:-}" = true ] && fail "python3-h5py is missing under CI=true (scripts/setup-debian.sh)"
  echo "SKIP: /usr/bin/python3 has no h5py (Debian package python3-h5py)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
p=$tmp/prefix
export QT_QPA_PLATFORM=offscreen

cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"
  fail "cmake --install exited with an error"
}
files=(
  bin/wattline
  share/icons/hicolor/scalable/apps/wattline.svg
  share/applications/wattline.desktop
  share/mime/packages/wattline.xml
  share/man/man1/wattline.1
  share/man/man1/wattline-analyze.1
  share/bash-completion/completions/wattline
  share/zsh/vendor-completions/_wattline
  share/doc/wattline/README.md
  share/doc/wattline/LICENSE
  share/doc/wattline/copyright
  share/doc/wattline/docs/format.md
  share/doc/wattline/docs/install.md
)
for f in "${files[@]}"; do
  [ -f "$p/$f" ] || fail "not installed: $f"
done
[ -x "$p/bin/wattline" ] || fail "bin/wattline is not executable"
# Every man page wattline_docs made, every sample and every doc of the source tree.
for f in "$build"/man/man1/*.1; do
  cmp -s "$f" "$p/share/man/man1/$(basename "$f")" || fail "man page $(basename "$f") not installed"
done
for f in "$src"/resources/samples/*; do
  cmp -s "$f" "$p/share/wattline/samples/$(basename "$f")" || fail "sample $(basename "$f") not installed"
done
for f in "$src"/docs/*.md; do
  cmp -s "$f" "$p/share/doc/wattline/docs/$(basename "$f")" || fail "doc $(basename "$f") not installed"
done

desktop-file-validate "$p/share/applications/wattline.desktop" || fail "desktop-file-validate rejects wattline.desktop"
d=$p/share/applications/wattline.desktop
grep -qx 'Exec=wattline %F' "$d" || fail "wattline.desktop: no Exec=wattline %F"
grep -qx 'MimeType=application/x-wattline-run;' "$d" || fail "wattline.desktop: no MimeType"

# The file type: the installed package alone in the prefix's database, the system's beside it.
update-mime-database "$p/share/mime" || fail "update-mime-database $p/share/mime failed"
"$p/bin/wattline" simulate -o "$tmp/run.h5" --model TinyLlama-1.1B --gpus-per-node 1 --duration 1 \
  --quiet || fail "wattline simulate exited $?"
/usr/bin/python3 -c 'import h5py, sys
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["format"] = "not-a-run"
    f["x"] = list(range(1000))' "$tmp/plain.h5" || fail "could not write a plain HDF5 file"
cp "$tmp/run.h5" "$tmp/run-no-extension"
filetype() {  # filetype BACKEND FILE: xdg-mime's answer with the prefix's database
  local desktop=
  [ "$1" = gio ] && desktop=GNOME
  env -u DESKTOP_SESSION -u KDE_FULL_SESSION XDG_CURRENT_DESKTOP=$desktop \
    XDG_DATA_HOME="$tmp/home" XDG_DATA_DIRS="$p/share:/usr/share" xdg-mime query filetype "$2" 2>/dev/null
}
for backend in mimeinfo gio; do
  for f in "$tmp/run.h5" "$tmp/run-no-extension" "$p/share/wattline/samples/llama3-8b-h100x8-mbs4.h5"; do
    t=$(filetype $backend "$f")
    [ "$t" = application/x-wattline-run ] || fail "$backend: $(basename "$f") is '$t', not application/x-wattline-run"
  done
  t=$(filetype $backend "$tmp/plain.h5")
  [ "$t" = application/x-hdf ] || fail "$backend: a plain HDF5 file is '$t', not application/x-hdf"
done

v=$("$p/bin/wattline" --version) || fail "installed wattline --version exited $?"
[[ "$v" == *wattline* ]] || fail "wattline --version printed '$v'"
out=$("$p/bin/wattline" info "$p/share/wattline/samples/llama3-8b-h100x8-mbs4.h5") ||
  fail "installed wattline info on the installed sample exited $?"
grep -q 'Llama3-8B' <<<"$out" || fail "wattline info does not name the model: $out"
echo "ok: ${#files[@]} named files, every man page, sample and doc installed; desktop entry valid;" \
  "file type right with File::MimeInfo and gio; installed binary runs ($v)"
