#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Debian package (issue 34, docs/install.md): `cpack -G DEB` into a scratch folder; its control
# fields (Package, Version, Depends from dpkg-shlibdeps), its contents (binary, man pages,
# completion, desktop entry, icon, file type, samples), and the binary extracted from it runs
# `--version` and `info` on the extracted sample.
#
#   deb_package_test.sh BUILD_DIR VERSION
# Exit 77 (skipped) without a program it needs, a failure under CI=true (scripts/setup-debian.sh).
set -uo pipefail
build=${1:?usage: deb_package_test.sh BUILD_DIR VERSION}
version=${2:?usage: deb_package_test.sh BUILD_DIR VERSION}
source "$(dirname "$0")/need.sh"  # fail, need PROGRAM PACKAGE
need cpack cmake
need dpkg-deb dpkg
need dpkg-shlibdeps dpkg-dev
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QT_QPA_PLATFORM=offscreen

(cd "$build" && cpack -G DEB -B "$tmp/out") >"$tmp/cpack.log" 2>&1 || {
  cat "$tmp/cpack.log"
  fail "cpack -G DEB failed"
}
debs=("$tmp"/out/wattline_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no single wattline_*.deb: $(ls "$tmp/out")"
deb=${debs[0]}
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = wattline ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', not $version (project())"
[ "$(basename "$deb")" = "wattline_${version}_$(dpkg --print-architecture).deb" ] ||
  fail "file name $(basename "$deb")"
depends=$(field Depends)
depends_names=$(sed -e 's/ ([^)]*)//g' -e 's/, /\n/g' <<<"$depends")  # one package a line
for pkg in libqt6core6 libqt6gui6 libqt6widgets6 libqt6svg6 libqt6charts6 libhdf5-103-1 libfmt9 \
  libsimdjson14 libsqlite3-0 zlib1g libstdc++6 libc6 qt6-qpa-plugins; do
  grep -qxF "$pkg" <<<"$depends_names" || fail "Depends lacks $pkg: $depends"
done
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
[ -n "$(field Description)" ] || fail "no Description"

dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$tmp/contents"
for f in /usr/bin/wattline /usr/share/man/man1/wattline.1 /usr/share/man/man1/wattline-analyze.1 \
  /usr/share/bash-completion/completions/wattline /usr/share/zsh/vendor-completions/_wattline \
  /usr/share/applications/wattline.desktop /usr/share/icons/hicolor/scalable/apps/wattline.svg \
  /usr/share/mime/packages/wattline.xml /usr/share/wattline/samples/llama3-8b-h100x8-mbs4.h5 \
  /usr/share/doc/wattline/copyright; do
  grep -qx "$f" "$tmp/contents" || fail "the package lacks $f"
done

dpkg-deb -x "$deb" "$tmp/root" || fail "dpkg-deb -x failed"
bin=$tmp/root/usr/bin/wattline
v=$("$bin" --version) || fail "the extracted wattline --version exited $?"
[ "$v" = "wattline $version" ] || fail "wattline --version printed '$v'"
out=$("$bin" info "$tmp/root/usr/share/wattline/samples/llama3-8b-h100x8-mbs4.h5") ||
  fail "the extracted wattline info on the extracted sample exited $?"
grep -q 'Llama3-8B' <<<"$out" || fail "wattline info does not name the model: $out"
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB), Depends: $depends"
