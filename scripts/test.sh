#!/usr/bin/env bash
# The README's test command: installs what Drip needs, builds it twice and runs the tests
# (docs/testing.md has the plan and the time budget):
#   release    GCC, CMake's default generator (Unix Makefiles): every test
#   sanitizer  clang, Ninja, ASan + UBSan: every unit and replay test, the integration
#              tests minus the long repeats listed in SANITIZER_SKIPS below; then every
#              libFuzzer target of the same build for a short while (scripts/fuzz.sh)
# and prints how long each stage took. Works on a fresh Debian 12 machine as root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Integration tests that the sanitizer run leaves to the release run: each repeats, for
# longer, code that a shorter test runs under the sanitizers too (docs/testing.md).
# (ctest -E matches anywhere in a name; a parameterized test's name goes on with its
# parameter, "…/plain  # GetParam() = "plain"".)
SANITIZER_SKIPS='TwentyKills|KillNineUnderLoad|HeapSnapshotExpectedGrowthTest|HeapSnapshotTest.*/(new|rare|rarekeep|churn|realloc|library|cache|startup) |ALeakOnOnePathOfAChurningSite|ABusyProcessWhoseFreesExceed|ADryRunPolicy|LeakingChildsOpenLeakReport|ViewerReadsOperatorActs|PrologWithTcmalloc|DetectorPathsTest|MemoryLimitTest'

stage_names=()
stage_seconds=()
current=""
current_start=0

begin() {
  current=$1
  current_start=$(date +%s)
  echo "== $current =="
}

finish() {
  stage_names+=("$current")
  stage_seconds+=($(($(date +%s) - current_start)))
  current=""
}

print_stages() {
  local status=$?
  if [ -n "$current" ]; then
    stage_names+=("$current (FAILED)")
    stage_seconds+=($(($(date +%s) - current_start)))
  fi
  local total=0 i
  echo
  echo "== stages =="
  for i in "${!stage_names[@]}"; do
    printf '%-32s %4d:%02d\n' "${stage_names[$i]}" $((stage_seconds[i] / 60)) $((stage_seconds[i] % 60))
    total=$((total + stage_seconds[i]))
  done
  printf '%-32s %4d:%02d\n' "total" $((total / 60)) $((total % 60))
  exit "$status"
}
trap print_stages EXIT

# A BPF test may skip only where the kernel refuses BPF (docs/testing.md). Counts the
# skipped tests of the last ctest run in DIR, says how many skipped for BPF, and fails
# when this kernel does load Drip's BPF programs (the agent's sampler runs on BPF here).
check_skips() {
  local dir=$1 log="$1/Testing/Temporary/LastTest.log" skipped bpf
  skipped=$(grep -cE '^\[  SKIPPED \] [^ ]+ \([0-9]+ ms\)$' "$log" || true)
  bpf=$(grep -cE 'the kernel refused BPF|needs root for (uprobes and )?BPF' "$log" || true)
  echo "skipped: $skipped test(s), $bpf of them for BPF"
  if [ "$bpf" -gt 0 ] && "$dir/agent/drip-agent" sample --once --json 2>/dev/null |
    grep -q '"sampler":"bpf"'; then
    echo "test.sh: $bpf BPF test(s) skipped on a kernel that loads Drip's BPF programs:" >&2
    grep -E -B3 'the kernel refused BPF|needs root for (uprobes and )?BPF' "$log" | head -40 >&2
    return 1
  fi
}

# Unit tests in parallel; integration tests several at a time too, since they mostly wait
# on the daemons (tests that must not overlap hold a CTest RESOURCE_LOCK).
unit_tests() {
  (cd "$1" && ctest --output-on-failure -LE integration -j "$(nproc)")
  check_skips "$1"
}
integration_tests() {
  local dir=$1
  shift
  (cd "$dir" && ctest --output-on-failure -L integration -j 4 "$@")
  check_skips "$dir"
}

begin "install packages"
bash scripts/install-deps.sh
finish

begin "format check"
bash scripts/check-format.sh
finish

begin "release build (Makefiles)"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
finish
begin "release unit tests"
unit_tests build
finish
begin "release integration tests"
integration_tests build
finish

begin "sanitizer build (Ninja)"
bash scripts/build.sh build-asan -G Ninja -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DDRIP_SANITIZE=ON -DDRIP_BUILD_BENCH=OFF
finish
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
begin "sanitizer unit tests"
unit_tests build-asan
finish
begin "sanitizer integration tests"
integration_tests build-asan -E "$SANITIZER_SKIPS"
finish

begin "fuzzing"
DRIP_FUZZ_BUILD="$root/build-asan" DRIP_FUZZ_SECONDS=10 bash scripts/fuzz.sh
finish
