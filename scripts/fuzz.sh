#!/usr/bin/env bash
# The CI fuzzing stage (docs/fuzzing.md): builds every libFuzzer target of the clang
# sanitizer build (-fsanitize=fuzzer,address,undefined; the build that scripts/test.sh
# runs the sanitizer tests in), then runs each for a short time on a copy of its seed
# corpus plus its regression inputs. Fails on any crash,
# leak, timeout, out-of-memory or sanitizer report (printing the log and keeping the input
# that did it), and prints one summary line per fuzzer.
#
# Usage: scripts/fuzz.sh [FUZZER...]     (default: every fuzzer)
# Environment:
#   DRIP_FUZZ_SECONDS  how long each fuzzer runs (default 30)
#   DRIP_FUZZ_JOBS     how many fuzzers run at once (default: the number of CPUs)
#   DRIP_FUZZ_BUILD    the build directory (default: build-asan, configured here when new)
#   DRIP_FUZZ_TIMEOUT  seconds one input may take before it counts as a hang (default 10)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

seconds=${DRIP_FUZZ_SECONDS:-30}
jobs=${DRIP_FUZZ_JOBS:-$(nproc)}
build=${DRIP_FUZZ_BUILD:-$root/build-asan}
timeout=${DRIP_FUZZ_TIMEOUT:-10}
corpora=$root/tests/fuzz/corpus
regressions=$root/tests/fuzz/regressions

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ not found; run scripts/install-deps.sh" >&2
  exit 1
fi

started=$(date +%s)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DDRIP_SANITIZE=ON -DDRIP_BUILD_BENCH=OFF
fi
cmake --build "$build" -j "$(nproc)" --target drip_fuzzers
built=$(date +%s)

if [ "$#" -gt 0 ]; then
  fuzzers=("$@")
else
  mapfile -t fuzzers < <(find "$build" -name '*_fuzzer' -type f -perm -u+x -printf '%f\n' | sort)
fi
[ "${#fuzzers[@]}" -gt 0 ] || { echo "fuzz.sh: no fuzzers in $build" >&2; exit 1; }

# The libFuzzer dictionary of a fuzzer (tests/fuzz/dict/): tokens of its input format that
# random mutation would rarely spell. A new fuzzer of a YAML file named *_config_fuzzer
# gets the YAML one without anything added here.
dict_of() {
  case $1 in
    *_config_fuzzer | mitigation_policy_fuzzer | access_policy_fuzzer) echo "$root/tests/fuzz/dict/yaml.dict" ;;
    heap_snapshot_json_fuzzer) echo "$root/tests/fuzz/dict/json.dict" ;;
    sample_csv_reader_fuzzer) echo "$root/tests/fuzz/dict/csv.dict" ;;
  esac
}

runs=$build/fuzz-runs
rm -rf "$runs"
mkdir -p "$runs"

# One fuzzer: writes $runs/NAME/{log,summary,status}; the input that failed stays in
# $runs/NAME/artifacts/.
run_one() {
  local name=$1 bin dir
  bin=$(find "$build" -name "$name" -type f -perm -u+x -print -quit)
  dir=$runs/$name
  mkdir -p "$dir/corpus" "$dir/artifacts"
  if [ -z "$bin" ] || [ ! -d "$corpora/$name" ]; then
    echo "no binary or no seed corpus (tests/fuzz/corpus/$name)" >"$dir/log"
    echo 1 >"$dir/status"
    echo "$name: missing" >"$dir/summary"
    return
  fi
  cp -r "$corpora/$name/." "$dir/corpus/"
  if [ -d "$regressions/$name" ]; then cp -r "$regressions/$name/." "$dir/corpus/"; fi
  local seeds
  seeds=$(find "$dir/corpus" -type f | wc -l)
  local status=0 dict
  local flags=()
  dict=$(dict_of "$name")
  if [ -n "$dict" ]; then flags+=(-dict="$dict"); fi
  # Leaks are reported at exit of each input (-detect_leaks), UBSan aborts on its first
  # report (-fno-sanitize-recover), and one input may use at most 2 GB (malloc and RSS).
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:allocator_may_return_null=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "${flags[@]}" "$dir/corpus" \
    >"$dir/log" 2>&1 ||
    status=$?
  if grep -qE '^==[0-9]+==ERROR|runtime error:|^SUMMARY: ' "$dir/log"; then
    [ "$status" -ne 0 ] || status=1
  fi
  echo "$status" >"$dir/status"
  # libFuzzer's final stats, and the coverage of its last status line.
  local execs rate cov ft corpus rss
  read -r execs rate rss cov ft corpus < <(awk '
    /^stat::number_of_executed_units:/ { execs = $2 }
    /^stat::average_exec_per_sec:/ { rate = $2 }
    /^stat::peak_rss_mb:/ { rss = $2 }
    /^#[0-9]+/ { for (i = 1; i < NF; ++i) {
        if ($i == "cov:") cov = $(i + 1); if ($i == "ft:") ft = $(i + 1);
        if ($i == "corp:") { corp = $(i + 1); sub("/.*", "", corp) } } }
    END { print (execs ? execs : "?"), (rate ? rate : "?"), (rss ? rss : "?"),
                (cov ? cov : "?"), (ft ? ft : "?"), (corp ? corp : "?") }' "$dir/log")
  printf '%-28s %-4s %9s execs %6s/s  cov %5s  ft %6s  corpus %4s -> %4s  rss %4s MB\n' \
    "$name" "$([ "$status" -eq 0 ] && echo ok || echo FAIL)" "$execs" "$rate" \
    "$cov" "$ft" "$seeds" "$corpus" "$rss" >"$dir/summary"
}

echo "fuzz.sh: running ${#fuzzers[@]} fuzzers for ${seconds}s each, $jobs at a time"
running=0
for name in "${fuzzers[@]}"; do
  run_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=0
for name in "${fuzzers[@]}"; do
  cat "$runs/$name/summary"
  if [ "$(cat "$runs/$name/status")" != 0 ]; then failed=$((failed + 1)); fi
done
for name in "${fuzzers[@]}"; do
  [ "$(cat "$runs/$name/status")" = 0 ] && continue
  log=$runs/$name/log
  echo
  echo "== $name failed:"
  grep -m 5 -E 'runtime error:|^==[0-9]+==ERROR|FUZZ_CHECK|^ERROR: libFuzzer|^SUMMARY' "$log" || true
  echo "-- the end of its log ($log):"
  tail -n 25 "$log"
  echo "-- reproduce with:"
  bin=$(find "$build" -name "$name" -type f -perm -u+x -print -quit)
  for input in "$runs/$name/artifacts"/*; do
    [ -e "$input" ] && echo "   $bin $input"
  done
done
finished=$(date +%s)
echo "fuzz.sh: build $((built - started))s, fuzzing $((finished - built))s, ${failed} of ${#fuzzers[@]} fuzzers failed"
[ "$failed" -eq 0 ]
