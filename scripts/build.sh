#!/usr/bin/env bash
# Configures and builds Wattline into build/ (CMake preset "default": Ninja, RelWithDebInfo).
#
#   scripts/build.sh              everything: the app, every test and benchmark (the README's
#                                 second command)
#   scripts/build.sh wattline     only the named targets (the README's first command builds the
#                                 app alone, a fraction of the tree)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
if [ $# -gt 0 ]; then
  cmake --build --preset default --target "$@"
else
  cmake --build --preset default
fi
