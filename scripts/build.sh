#!/usr/bin/env bash
# Configures and builds Drip. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR is build/ (RelWithDebInfo) with CMake's default generator; pass
# -G Ninja (or set CMAKE_GENERATOR) for another. Reuses an existing configuration.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "$@"
fi
cmake --build "$build" -j "$(nproc)"
