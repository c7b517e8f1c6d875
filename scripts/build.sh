#!/usr/bin/env bash
# Configures and builds Drip. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR is build/ (RelWithDebInfo). Reuses an existing configuration.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja "$@"
fi
cmake --build "$build" -j "$(nproc)"
