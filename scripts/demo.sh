#!/usr/bin/env bash
# Drip's main job on this one machine: a collector on a fresh RocksDB directory, the
# agent watching this host, and the bundled leaking example. Shows the leak's memory
# arriving at the collector, as on-call would see it with dripctl, and the online leak
# detector flagging it, then the collector having the agent take a live heap snapshot of
# the suspect and the diagnoser naming the leaking call stack, and ends with the leak
# report on-call reads (`dripctl leaks show`), which names the leaking function.
# Usage: bash scripts/demo.sh [SECONDS]   (default 40)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-40}

bash scripts/install-deps.sh >/dev/null
echo "== building Drip's daemons, dripctl and the example (first run takes a few minutes) =="
# Only what the demo runs; the test command builds the rest (tests, benchmarks, fuzzers).
DRIP_BUILD_TARGETS="drip-collector drip-agent dripctl drip-leaky-example" \
  bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
bin=$root/build

work=$(mktemp -d /tmp/drip-demo.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

wait_ready() {  # wait_ready FILE PID NAME
  for _ in $(seq 1 300); do
    [ -s "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || { echo "demo: $3 exited; its log:" >&2; cat "$work/$3.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "demo: $3 did not become ready" >&2; exit 1
}
field() { sed -n "s/.*\"$2\": \"\([^\"]*\)\".*/\1/p" "$1"; }

# Mutual TLS as in production (docs/security.md): a throwaway CA, the collector's
# certificate, this host's agent certificate, and an operator's bearer token for dripctl.
host=$(hostname)
tls=$work/tls
bash scripts/make-certs.sh "$tls" --agent "$host" >/dev/null
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$tls/oncall.token"
cat >"$work/access.yaml" <<YAML
principals:
  - name: demo-oncall
    role: operator
    token_sha256: $(printf %s "$(cat "$tls/oncall.token")" | sha256sum | cut -d' ' -f1)
YAML

cat >"$work/collector.yaml" <<YAML
grpc:
  listen_address: "127.0.0.1:0"
tls:
  ca_file: "$tls/ca.crt"
  cert_file: "$tls/collector.crt"
  key_file: "$tls/collector.key"
auth:
  access_file: "$work/access.yaml"
storage:
  path: "$work/db"
metrics:
  listen_address: "127.0.0.1:0"
# The detector's defaults judge hours of history; a demo of a minute scales them down to
# seconds (docs/detector.md).
detector:
  epoch: 10s
  floor_epochs: 1
  startup_grace: 0s
  fleet_min_climb: 20s
  min_climb: 30s
  young_min_climb: 30s
  level_off: 30s
  max_lateness: 20s
# A short heap snapshot of each suspect (docs/snapshot.md).
snapshots:
  duration: 15s
  hosts_per_component: 1
YAML
"$bin/collector/drip-collector" --config "$work/collector.yaml" --ready-file "$work/collector.ready" \
  >"$work/collector.log" 2>&1 &
pids+=($!)
wait_ready "$work/collector.ready" "${pids[-1]}" collector
collector=$(field "$work/collector.ready" grpc)
metrics=$(field "$work/collector.ready" metrics)
echo "== collector serving gRPC with mutual TLS on $collector, metrics on http://$metrics/metrics, RocksDB in $work/db =="

cat >"$work/agent.yaml" <<YAML
host: "$host"
collector: "$collector"
tls:
  ca_file: "$tls/ca.crt"
  cert_file: "$tls/agent-$host.crt"
  key_file: "$tls/agent-$host.key"
interval: 2s
labels:
  env: demo
metrics:
  listen_address: "127.0.0.1:0"
# The example frees ~6,000 times a second; on a VM a uprobe hit can cost 20 µs, so the
# demo gives attach mode more than the production default of 5% of a core.
snapshots:
  cpu_budget: 0.5
# The collector's commands may target only these processes; the example runs outside any
# systemd service, so it is named by its executable.
commands:
  allowed_components: ["svc:*", "proc:drip-leaky-example"]
YAML
"$bin/agent/drip-agent" --config "$work/agent.yaml" --ready-file "$work/agent.ready" \
  >"$work/agent.log" 2>&1 &
pids+=($!)
wait_ready "$work/agent.ready" "${pids[-1]}" agent
echo "== agent streaming this host ($host) every 2s with the $(field "$work/agent.ready" sampler) sampler; its own metrics on http://$(field "$work/agent.ready" metrics)/metrics =="

"$bin/tests/programs/drip-leaky-example" --leak-kib-per-s 2048 >"$work/leaky.log" 2>&1 &
leaky=$!
pids+=($leaky)
sleep 1
component=$("$bin/agent/drip-agent" sample --once --json | python3 -c '
import json, sys
pid = sys.argv[1] + "@"
for s in json.load(sys.stdin)["samples"]:
    if s["instance"].startswith(pid):
        print(s["component"]); break' "$leaky")
echo "== leaking example: pid $leaky, component $component, leaking 2 MiB/s =="
echo

dripctl() { "$bin/cli/dripctl" --collector "$collector" --ca "$tls/ca.crt" --token-file "$tls/oncall.token" "$@"; }
dripctl hosts
end=$((SECONDS + seconds))
while [ $SECONDS -lt $end ]; do
  sleep 10
  echo
  echo "== dripctl series --host $host --component $component (latest 5 samples) =="
  dripctl series --host "$host" --component "$component" | { read -r header; echo "$header"; tail -n 5; }
done
echo
first=$(dripctl series --host "$host" --component "$component" --json | python3 -c '
import json, sys
s = [x for ser in json.load(sys.stdin)["series"] for x in ser["samples"]]
mib = lambda x: x["unreclaimable_bytes"] / 2**20
rate = (mib(s[-1]) - mib(s[0])) / ((s[-1]["timestamp_ms"] - s[0]["timestamp_ms"]) / 1000.0)
print(f"{len(s)} samples stored; unreclaimable memory {mib(s[0]):.1f} MiB -> {mib(s[-1]):.1f} MiB ({rate:.2f} MiB/s)")')
echo "== $component on $host: $first =="

# The online leak detector's verdict, as on-call sees it.
for _ in $(seq 1 30); do
  dripctl suspects --component "$component" --json | grep -q '"host"' && break
  sleep 3
done
echo
echo "== dripctl suspects --component $component =="
dripctl suspects --component "$component"

# The collector has the agent snapshot the suspect's heap; wait for the diagnosis.
for _ in $(seq 1 40); do
  dripctl suspects --component "$component" --json | grep -q '"state": "\(done\|failed\)"' && break
  sleep 3
done
echo
echo "== dripctl suspects --component $component (with its heap snapshot) =="
dripctl suspects --component "$component"

# The suspect and its diagnosis become a leak report: what on-call reads and acts on.
id=""
for _ in $(seq 1 20); do
  id=$(dripctl leaks list --component "$component" --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["reports"]:
    if r.get("top_stacks"):
        print(r["id"]); break')
  [ -n "$id" ] && break
  sleep 3
done
if [ -z "$id" ]; then
  echo "demo: no diagnosed leak report for $component; collector log:" >&2
  tail -n 30 "$work/collector.log" >&2
  exit 1
fi
echo
echo "== dripctl leaks list =="
dripctl leaks list
echo
echo "== dripctl leaks show $id =="
dripctl leaks show "$id"
