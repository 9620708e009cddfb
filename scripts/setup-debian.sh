#!/usr/bin/env bash
# Installs the Debian (bookworm) packages that Wattline needs to build, test and run.
# Idempotent: installs only what is missing, with one `apt-get update`. As root it installs;
# otherwise it prints the exact command to run and exits 1 if anything is missing.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build pkg-config ccache lld  # lld: links ~2.5x faster than GNU ld (CMakeLists.txt)
  # libraries
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
  libhdf5-dev nlohmann-json3-dev libfmt-dev zlib1g-dev libsimdjson-dev libsqlite3-dev
  libcurl4-openssl-dev
  # tests and benchmarks
  libgtest-dev libbenchmark-dev xvfb xauth fonts-dejavu-core
  hdf5-tools python3-h5py python3-numpy python3-pandas poppler-utils
  prometheus  # the Prometheus importer tests start a real server (and promtool fills it)
  openssl     # the Prometheus HTTPS test makes its certificate (not pulled in without recommends)
  groff-base man-db zsh  # man_pages and shell_completion check the generated pages and scripts
  # install_tree and deb_package: the desktop entry, the file type (xdg-mime's two back ends), cpack's
  # dpkg-shlibdeps
  desktop-file-utils shared-mime-info xdg-utils libfile-mimeinfo-perl libglib2.0-bin dpkg-dev
  xdotool  # desktop_launch finds the window that opening a run from the desktop entry shows
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages are installed."
  exit 0
fi

echo "setup: missing packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: run this as root, or install them with:"
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
echo "setup: done."
