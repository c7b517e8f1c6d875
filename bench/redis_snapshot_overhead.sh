#!/usr/bin/env bash
# Heap snapshots of a real service: what a client of Debian's redis-server (linked with
# jemalloc) loses while Drip watches it, and what the agent itself spends doing so.
#
# In one run, interleaved round by round (so that noise on this shared machine hits every
# variant alike), redis-benchmark (SET then GET of --data-size-byte values over 100k keys,
# --clients connections, on a unix socket) runs against:
#   alone       redis-server as packaged
#   shim        redis-server under LD_PRELOAD=libdrip_sampler.so, no snapshot
#   shim+snap   the shim while `drip-agent snapshot --mode preload` (defaults) watches it
#   attach      plain redis-server while `drip-agent snapshot --mode attach` (defaults)
#               watches it
# plus, with --expect-growth RATE, "shim+fleet": the preload snapshot as the collector
# commands it, told the growth its detector measured; and with --baseline-agent PATH,
# "shim+snap@base": the preload snapshot by another drip-agent build (an older commit), to
# compare two builds side by side. Per variant it prints the median
# over rounds of the clients' requests/s and p50/p99 latency for SET and GET, the
# requests/s ratio to `alone` of the same round, redis-server's own CPU per request (user
# + system; on a noisy shared VM the steadier measure of what a snapshot costs the
# service) and its ratio to `alone`, and for the snapshot variants the
# agent's own CPU (user + system, all threads, over the benchmark's wall time: probes'
# ring reads, stack unwinding, symbolization), the sampled allocations per second, and
# how the snapshot ended.
#
# Usage: bash bench/redis_snapshot_overhead.sh [--build-dir build] [--rounds 5]
#          [--requests 300000] [--clients 2] [--data-size 200] [--variants "alone shim ..."]
#          [--expect-growth 17GiB/h] [--baseline-agent PATH] [--out DIR]
# Needs root (BPF), redis-server and redis-tools (scripts/install-deps.sh installs them).
# Raw outputs stay in --out (default: a new /tmp/drip-redis-bench.XXXXXX).
set -Eeuo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=build
rounds=5
requests=300000
clients=2
data_size=200
variants_arg=""
expect_growth=""
baseline_agent=""
out=""

usage() { sed -n '2,/^set -Eeuo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --data-size) data_size=$2; shift 2 ;;
    --variants) variants_arg=$2; shift 2 ;;
    --expect-growth) expect_growth=$2; shift 2 ;;
    --baseline-agent) baseline_agent=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "redis_snapshot_overhead: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$root/$build ;; esac
agent=$build/agent/drip-agent
shim=$build/agent/sampler_shim/libdrip_sampler.so
for f in "$agent" "$shim" /usr/bin/redis-server /usr/bin/redis-benchmark; do
  [ -e "$f" ] || { echo "redis_snapshot_overhead: $f missing (build, or scripts/install-deps.sh)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "redis_snapshot_overhead: needs root for BPF" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/drip-redis-bench.XXXXXX)
mkdir -p "$out"
if [ -n "$variants_arg" ]; then
  read -r -a variants <<<"$variants_arg"
else
  variants=(alone shim shim+snap attach)
  [ -z "$expect_growth" ] || variants+=(shim+fleet)
  [ -z "$baseline_agent" ] || variants+=(shim+snap@base)
fi
[ "${variants[0]}" = alone ] || { echo "redis_snapshot_overhead: the first variant must be alone (the ratios' base)" >&2; exit 2; }

server_pid=""
agent_pid=""
cleanup() {
  [ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null || true
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

ticks=$(getconf CLK_TCK)
# cpu_seconds PID: user + system seconds of every thread of PID so far.
cpu_seconds() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# run_variant NAME ROUND: prints "SET_RPS GET_RPS SET_P50 GET_P50 SET_P99 GET_P99 AGENT_CPU
# REDIS_US_PER_REQUEST".
run_variant() {
  local name=$1 round=$2 sock=$out/redis-$1-$2.sock preload=() mode="" extra=() bin=$agent
  case $name in
    shim) preload=(env "LD_PRELOAD=$shim") ;;
    shim+snap) preload=(env "LD_PRELOAD=$shim"); mode=preload ;;
    shim+fleet) preload=(env "LD_PRELOAD=$shim"); mode=preload; extra=(--expect-growth "$expect_growth") ;;
    shim+snap@base) preload=(env "LD_PRELOAD=$shim"); mode=preload; bin=$baseline_agent ;;
    attach) mode=attach ;;
  esac
  "${preload[@]}" /usr/bin/redis-server --port 0 --unixsocket "$sock" --save "" \
    --appendonly no --dir "$out" >"$out/redis-$name-$round.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
  local cpu_before=0
  if [ -n "$mode" ]; then
    "$bin" snapshot --pid "$server_pid" --duration 600 --extend-up-to 0 --mode "$mode" \
      "${extra[@]}" --output "$out/snapshot-$name-$round.json" 2>"$out/agent-$name-$round.log" &
    agent_pid=$!
    sleep 3  # probes attached, window open
    cpu_before=$(cpu_seconds "$agent_pid")
  fi
  local start end redis_before
  redis_before=$(cpu_seconds "$server_pid")
  start=$(date +%s.%N)
  redis-benchmark -s "$sock" -t set,get -n "$requests" -c "$clients" -d "$data_size" -r 100000 \
    --csv >"$out/bench-$name-$round.csv" 2>/dev/null
  end=$(date +%s.%N)
  local redis_us
  redis_us=$(awk -v a="$(cpu_seconds "$server_pid")" -v b="$redis_before" -v n="$requests" \
    'BEGIN{printf "%.3f", (a - b) * 1e6 / (2 * n)}')
  local agent_cpu=0
  if [ -n "$agent_pid" ]; then
    # An attach snapshot that stopped on its budget has exited: its CPU is not comparable.
    agent_cpu=nan
    [ -e "/proc/$agent_pid/stat" ] && agent_cpu=$(awk -v a="$(cpu_seconds "$agent_pid")" \
      -v b="$cpu_before" -v s="$start" -v e="$end" 'BEGIN{printf "%.4f", (a - b) / (e - s)}')
    kill -INT "$agent_pid" 2>/dev/null || true  # attach mode may have stopped on its budget
    wait "$agent_pid" 2>/dev/null || true
    agent_pid=""
  fi
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  # redis-benchmark 7's CSV: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
  # "p95_latency_ms","p99_latency_ms","max_latency_ms"
  awk -F'","' -v cpu="$agent_cpu" -v us="$redis_us" '
    { gsub(/"/, "", $1); gsub(/"/, "", $NF) }
    $1 == "SET" { s = $2; sp50 = $5; sp99 = $7 }
    $1 == "GET" { g = $2; gp50 = $5; gp99 = $7 }
    END { print s + 0, g + 0, sp50 + 0, gp50 + 0, sp99 + 0, gp99 + 0, cpu, us }' \
    "$out/bench-$name-$round.csv"
}

declare -A set_rps get_rps set_p50 get_p50 set_p99 get_p99 agent_cpu redis_us
for round in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    read -r s g sp gp s9 g9 cpu us < <(run_variant "$v" "$round")
    set_rps[$v]+="$s "; get_rps[$v]+="$g "
    set_p50[$v]+="$sp "; get_p50[$v]+="$gp "
    set_p99[$v]+="$s9 "; get_p99[$v]+="$g9 "
    agent_cpu[$v]+="$cpu "
    redis_us[$v]+="$us "
    echo "round $round $v: SET $s/s (p50 $sp ms, p99 $s9 ms) GET $g/s (p50 $gp ms, p99 $g9 ms) redis $us µs/request, agent CPU $cpu" >&2
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# ratio_median V ARRAY: the median over rounds of V's ARRAY value over alone's, same round.
ratio_median() {
  local -a mine base
  read -r -a mine <<<"$(eval echo "\${${2}[$1]}")"
  read -r -a base <<<"$(eval echo "\${${2}[alone]}")"
  for i in "${!mine[@]}"; do awk -v a="${mine[$i]}" -v b="${base[$i]}" 'BEGIN{printf "%.3f ", (b>0)?a/b:0}'; done | median
}
# sampled_per_second V: the median over rounds of sampled allocations per second of window.
sampled_per_second() {
  for log in "$out"/agent-"$1"-*.log; do
    [ -e "$log" ] || continue
    sed -n 's/.*, \([0-9.]*\) s: [0-9]* stacks, \([0-9]*\) sampled allocations.*/\2 \1/p' "$log" |
      awk '$2 > 0 {printf "%.0f ", $1 / $2}'
  done | median
}

printf '\n%-14s %10s %7s %9s %9s %10s %7s %9s %9s %10s %7s %9s %9s  %s\n' variant "SET req/s" \
  "x alone" "SET p50" "SET p99" "GET req/s" "x alone" "GET p50" "GET p99" "redis µs/r" "x alone" \
  "agent CPU" "samples/s" snapshot
for v in "${variants[@]}"; do
  ended="" cpu="" rate=""
  if [ "$v" != alone ] && [ "$v" != shim ]; then
    ended=$(grep -ho 'stopped: [a-z]*' "$out"/agent-"$v"-*.log 2>/dev/null | sort | uniq -c | awk '{printf "%s %s x%s; ", $2, $3, $1}')
    cpu=$(echo "${agent_cpu[$v]}" | tr ' ' '\n' | grep -v nan | median)
    cpu=$([ -n "$cpu" ] && awk -v c="$cpu" 'BEGIN{printf "%.1f%%", 100 * c}' || echo "exited")
    rate=$(sampled_per_second "$v")
  fi
  printf '%-14s %10.0f %7s %8sms %8sms %10.0f %7s %8sms %8sms %10s %7s %9s %9s  %s\n' "$v" \
    "$(echo "${set_rps[$v]}" | median)" "$(ratio_median "$v" set_rps)" \
    "$(echo "${set_p50[$v]}" | median)" "$(echo "${set_p99[$v]}" | median)" \
    "$(echo "${get_rps[$v]}" | median)" "$(ratio_median "$v" get_rps)" \
    "$(echo "${get_p50[$v]}" | median)" "$(echo "${get_p99[$v]}" | median)" \
    "$(echo "${redis_us[$v]}" | median)" "$(ratio_median "$v" redis_us)" "$cpu" "$rate" "$ended"
done
echo "raw outputs: $out"
