#!/usr/bin/env bash
# Configures and builds Drip. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR is build/ (RelWithDebInfo) with CMake's default generator; pass
# -G Ninja (or set CMAKE_GENERATOR) for another. Reuses an existing configuration.
# DRIP_BUILD_TARGETS="a b" builds only those targets (and what they need), as the quick
# start does; unset, everything, tests and benchmarks included.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "$@"
fi
targets=()
if [ -n "${DRIP_BUILD_TARGETS:-}" ]; then
  read -r -a names <<<"$DRIP_BUILD_TARGETS"
  targets=(--target "${names[@]}")
fi
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
