#!/usr/bin/env bash
# Heap snapshots of a real service: what a client of Debian's redis-server (linked with
# jemalloc) loses while Drip watches it.
#
# In one run, interleaved round by round (so that noise on this shared machine hits every
# variant alike), redis-benchmark (SET and GET of 256-byte values over 100k keys, 8
# connections, on a unix socket) runs against:
#   alone       redis-server as packaged
#   shim        redis-server under LD_PRELOAD=libdrip_sampler.so, no snapshot
#   shim+snap   the shim while `drip-agent snapshot --mode preload` (defaults) watches it
#   attach      plain redis-server while `drip-agent snapshot --mode attach` (defaults)
#               watches it
# and prints, per variant, the median over rounds of requests/s for SET and GET, and its
# ratio to `alone` of the same round; for the snapshot variants, how each snapshot ended.
#
# Usage: bash bench/redis_snapshot_overhead.sh [--build-dir build] [--rounds 3]
#          [--requests 200000] [--out DIR]
# Needs root (BPF), redis-server and redis-tools (scripts/install-deps.sh installs them).
# Raw outputs stay in --out (default: a new /tmp/drip-redis-bench.XXXXXX).
set -Eeuo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=build
rounds=3
requests=200000
out=""

usage() { sed -n '2,/^set -Eeuo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
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

server_pid=""
agent_pid=""
cleanup() {
  [ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null || true
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

# run_variant NAME ROUND: prints "SET GET" requests/s.
run_variant() {
  local name=$1 round=$2 sock=$out/redis-$1-$2.sock preload=() mode=""
  case $name in
    shim) preload=(env "LD_PRELOAD=$shim") ;;
    shim+snap) preload=(env "LD_PRELOAD=$shim"); mode=preload ;;
    attach) mode=attach ;;
  esac
  "${preload[@]}" /usr/bin/redis-server --port 0 --unixsocket "$sock" --save "" \
    --appendonly no --dir "$out" >"$out/redis-$name-$round.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
  if [ -n "$mode" ]; then
    "$agent" snapshot --pid "$server_pid" --duration 600 --extend-up-to 0 --mode "$mode" \
      --output "$out/snapshot-$name-$round.json" 2>"$out/agent-$name-$round.log" &
    agent_pid=$!
    sleep 3  # probes attached, window open
  fi
  redis-benchmark -s "$sock" -t set,get -n "$requests" -c 8 -d 256 -r 100000 --csv \
    >"$out/bench-$name-$round.csv" 2>/dev/null
  if [ -n "$agent_pid" ]; then
    kill -INT "$agent_pid" 2>/dev/null || true  # attach mode may have stopped on its budget
    wait "$agent_pid" 2>/dev/null || true
    agent_pid=""
  fi
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  awk -F'","' '/^"SET"/{s=$2} /^"GET"/{g=$2} END{print s+0, g+0}' "$out/bench-$name-$round.csv"
}

variants=(alone shim shim+snap attach)
declare -A set_rps get_rps
for round in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    read -r s g < <(run_variant "$v" "$round")
    set_rps[$v]+="$s "
    get_rps[$v]+="$g "
    echo "round $round $v: SET $s/s GET $g/s" >&2
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# ratio_median V KIND: the median over rounds of V's requests/s over alone's, same round.
ratio_median() {
  local -a mine base
  read -r -a mine <<<"$(eval echo "\${${2}_rps[$1]}")"
  read -r -a base <<<"$(eval echo "\${${2}_rps[alone]}")"
  for i in "${!mine[@]}"; do awk -v a="${mine[$i]}" -v b="${base[$i]}" 'BEGIN{printf "%.3f ", (b>0)?a/b:0}'; done | median
}

printf '\n%-10s %12s %8s %12s %8s  %s\n' variant "SET req/s" "x alone" "GET req/s" "x alone" snapshot
for v in "${variants[@]}"; do
  ended=""
  if [ "$v" = shim+snap ] || [ "$v" = attach ]; then
    ended=$(grep -ho 'stopped: [a-z]*' "$out"/agent-"$v"-*.log 2>/dev/null | sort | uniq -c | awk '{printf "%s %s x%s; ", $2, $3, $1}')
  fi
  printf '%-10s %12.0f %8s %12.0f %8s  %s\n' "$v" "$(echo "${set_rps[$v]}" | median)" \
    "$(ratio_median "$v" set)" "$(echo "${get_rps[$v]}" | median)" "$(ratio_median "$v" get)" "$ended"
done
echo "raw outputs: $out"
