#!/usr/bin/env bash
# Configures and builds Wattline into build/ (CMake preset "default": Ninja, RelWithDebInfo).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default
