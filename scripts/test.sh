#!/usr/bin/env bash
# The README's test command: installs what Drip needs, builds it, and runs every test —
# once in a normal build and once under AddressSanitizer + UndefinedBehaviorSanitizer —
# then fuzzes every parser of untrusted bytes for a short while (scripts/fuzz.sh).
# Works on a fresh Debian 12 machine as root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/install-deps.sh
bash scripts/check-format.sh

run_suite() {
  local dir=$1
  shift
  bash scripts/build.sh "$dir" "$@"
  # Integration tests start daemons on loopback ports; one at a time keeps them quiet
  # on a 2-core machine, unit tests run in parallel.
  (cd "$dir" && ctest --output-on-failure -LE integration -j "$(nproc)" && \
    ctest --output-on-failure -L integration)
}

echo "== release build and tests =="
run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== ASan + UBSan build and tests =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DDRIP_SANITIZE=ON -DDRIP_BUILD_BENCH=OFF
echo "== fuzzing: libFuzzer targets under ASan + UBSan (clang) =="
bash scripts/fuzz.sh
