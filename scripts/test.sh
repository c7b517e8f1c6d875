#!/usr/bin/env bash
# The README's test command: installs what Drip needs, builds it twice and runs the tests
# (docs/testing.md has the plan and the time budget):
#   release    GCC, CMake's default generator (Unix Makefiles), every product source and
#              benchmark, and of the tests the integration tests: it runs the long ones
#              listed in RELEASE_ONLY below, end to end on the binaries users run
#   sanitizer  clang, Ninja, ASan + UBSan: every unit and replay test, and every other
#              integration test; then every libFuzzer target of the same build for a
#              short while (scripts/fuzz.sh)
# Each test runs in one build. Integration tests mostly wait on their daemons, so the
# sanitizer build compiles while the release integration tests run, at the lowest CPU and
# I/O priority: it takes the CPU the tests leave. Prints how long each stage took. Works
# on a fresh Debian 12 machine as root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# The integration tests the release build runs; the sanitizer build runs the others.
# Each is long, and repeats for longer code that a shorter test runs under the sanitizers
# (docs/testing.md). (ctest -R/-E match anywhere in a name; a parameterized test's name
# goes on with its parameter, "…/plain  # GetParam() = "plain"".)
RELEASE_ONLY='TwentyKills|KillNineUnderLoad|AMemberWhoseDiskWasDeleted|HeapSnapshotExpectedGrowthTest|HeapSnapshotTest.*/(new|rare|rarekeep|churn|realloc|library|cache|startup) |ALeakOnOnePathOfAChurningSite|ABusyProcessWhoseFreesExceed|ADryRunPolicy|LeakingChildsOpenLeakReport|ViewerReadsOperatorActs|PrologWithTcmalloc|DetectorPathsTest|MemoryLimitTest'

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

# Takes the script's exit status as its argument: by the time it runs, $? is
# stop_background's, and an EXIT trap's `exit` is the script's status.
print_stages() {
  local status=$1
  if [ -n "$current" ]; then
    stage_names+=("$current (FAILED)")
    stage_seconds+=($(($(date +%s) - current_start)))
  fi
  local total=0 i
  echo
  echo "== stages =="
  for i in "${!stage_names[@]}"; do
    printf '%-52s %4d:%02d\n' "${stage_names[$i]}" $((stage_seconds[i] / 60)) $((stage_seconds[i] % 60))
    total=$((total + stage_seconds[i]))
  done
  printf '%-52s %4d:%02d\n' "total" $((total / 60)) $((total % 60))
  exit "$status"
}
# A background job (the sanitizer build) as a process group of its own, at
# the lowest CPU and I/O priority, so that the tests beside it keep the machine; the trap
# ends it if the run stops first.
background=""
background_log=""
start_background() {
  background_log=$1
  shift
  setsid nice -n 19 ionice -c 3 "$@" >"$background_log" 2>&1 &
  background=$!
}
# Waits for the background job; on failure shows the end of its log and fails.
wait_background() {
  local what=$1 pid=$background
  background=""
  if ! wait "$pid"; then
    tail -60 "$background_log" >&2
    echo "test.sh: $what failed (all of it in $background_log)" >&2
    return 1
  fi
  tail -3 "$background_log"
}
stop_background() {
  if [ -n "$background" ]; then kill -TERM -- "-$background" 2>/dev/null || true; fi
}
trap 'exit_status=$?; stop_background; print_stages "$exit_status"' EXIT

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
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDRIP_BUILD_UNIT_TESTS=OFF
finish

begin "release integration tests (sanitizer build beside)"
mkdir -p build-asan
start_background "$root/build-asan/build.log" bash scripts/build.sh build-asan -G Ninja \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DDRIP_SANITIZE=ON \
  -DDRIP_BUILD_BENCH=OFF
integration_tests build -R "$RELEASE_ONLY"
finish

begin "sanitizer build (what is left)"
wait_background "the sanitizer build"
finish
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
begin "sanitizer unit tests"
unit_tests build-asan
finish

begin "sanitizer integration tests"
integration_tests build-asan -E "$RELEASE_ONLY"
finish

# In front: libFuzzer's per-input time-out is wall-clock, which a busy machine would trip.
begin "fuzzing"
DRIP_FUZZ_BUILD="$root/build-asan" DRIP_FUZZ_SECONDS=10 bash scripts/fuzz.sh
finish
