#!/usr/bin/env bash
# Drip and the peer tools on Drip's slow-leak scenarios (docs/benchmarks.md, "Heap
# snapshots with default options on slow leaks"): each pattern of
# tests/programs/leak_scenarios.cc, at --rate KiB/s (default 4), under
#   drip        `drip-agent snapshot --pid P --duration --seconds` with nothing else (attach
#               mode, its own window extension), then `dripctl diagnose`: right when the
#               leaking function is ranked first with verdict `leak`, and on a decoy when no
#               stack is called a leak
#   heaptrack   the whole run of --seconds (default 40); its largest "leaked" stack at exit
#   memleak     bcc's memleak-bpfcc attached for --seconds; its largest outstanding stack
# and whether that stack holds the scenario's leaking function. Neither peer has a verdict,
# so on a leak-free decoy whatever it ranks first is what an engineer would chase: the row
# says "names <function>" there. One row per scenario, as a Markdown table on stdout.
#
#   bash bench/peers_on_leak_scenarios.sh [--build-dir build] [--seconds 40] [--rate 4]
#          [--scenarios "plain new rare rarekeep churn realloc library cache startup
#                        cacheleak startupleak"]
#          [--variant fp|nofp] [--out DIR] [--no-drip] [--no-memleak] [--no-heaptrack]
#          [--no-install] [--memleak CMD]
#
# Raw reports stay in --out (default: a new /tmp/drip-peers.XXXXXX).
set -Eeuo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=build
seconds=40
rate=4
variant=fp
scenarios="plain new rare rarekeep churn realloc library cache startup cacheleak startupleak"
out=""
use_drip=1
use_memleak=1
use_heaptrack=1
allow_install=1
memleak_cmd=""

usage() { sed -n '2,/^set -Eeuo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --scenarios) scenarios=$2; shift 2 ;;
    --variant) variant=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-drip) use_drip=0; shift ;;
    --no-memleak) use_memleak=0; shift ;;
    --no-heaptrack) use_heaptrack=0; shift ;;
    --no-install) allow_install=0; shift ;;
    --memleak) memleak_cmd=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "peers_on_leak_scenarios: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build=$root/$build ;; esac
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 5 ] || { echo "--seconds: an integer >= 5" >&2; exit 2; }
[[ "$rate" =~ ^[0-9]+$ ]] && [ "$rate" -ge 1 ] || { echo "--rate: an integer >= 1" >&2; exit 2; }
case "$variant" in fp | nofp) ;; *) echo "--variant: fp or nofp" >&2; exit 2 ;; esac
program=$build/tests/programs/drip-leak-scenarios-$variant
[ -x "$program" ] || { echo "peers_on_leak_scenarios: $program is not built" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp -d /tmp/drip-peers.XXXXXX)
mkdir -p "$out"

# shellcheck source=bench/tools/peer_tools.sh
source "$root/bench/tools/peer_tools.sh"
have_memleak=0
have_heaptrack=0
if ensure_memleak; then have_memleak=1; else echo "skipping memleak: $memleak_reason" >&2; fi
if ensure_heaptrack; then have_heaptrack=1; else echo "skipping heaptrack: $heaptrack_reason" >&2; fi

# The scenario's leaking function (tests/programs/leak_scenarios_expectations.h); empty for
# the leak-free decoys.
expected() {
  case "$1" in
    plain | cacheleak | startupleak) echo leak_plain_record ;;
    new) echo 'SessionRegistry::Remember' ;;
    rare) echo handle_rare_error_path ;;
    rarekeep) echo new_request_context ;;
    churn) echo leak_slowly_under_churn ;;
    realloc) echo grow_buffer_with_realloc ;;
    library) echo plugin_leak_event_copy ;;
    *) echo "" ;;
  esac
}
extra_args() {  # as the Drip table ran them
  case "$1" in cacheleak) echo "--fill-seconds 20" ;; *) echo "" ;; esac
}
# "found" / "missed (names X)" for a leak, "names X" / "nothing" for a decoy, from a report
# whose first stack's frames are in `$2` (one per line, innermost first).
judge() {
  local want=$1 frames=$2 top
  top=$(grep -v -E '^\s*$' <<<"$frames" | grep -v -E '(^|[^a-z_])(malloc|calloc|realloc|operator new|_Znwm|__libc_)' |
    head -1 | sed -E 's/^\s+//; s/^0x[0-9a-f]+\s+//; s/\+0x[0-9a-f]+.*$//; s/ \[.*$//' | cut -c1-60)
  if [ -z "$frames" ]; then
    [ -n "$want" ] && echo "missed (nothing)" || echo "nothing"
  elif [ -z "$want" ]; then
    echo "names \`$top\`"
  elif grep -qF -- "$want" <<<"$frames"; then
    echo "**found**"
  else
    echo "missed (names \`$top\`)"
  fi
}

wait_ready() {  # the fixture prints "ready <pid>" once set up
  local log=$1 i
  for i in $(seq 200); do grep -q ready "$log" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# Drip with defaults: the fixture runs long enough for the snapshot's own extension (up to 4x
# its --duration) before it is ended.
drip_row() {
  local sc=$1 want=$2 base=$out/drip-$sc pid
  # shellcheck disable=SC2046
  "$program" "$sc" --rate-kib-per-s "$rate" --seconds $((seconds * 4 + 60)) $(extra_args "$sc") \
    >"$base.program" 2>&1 &
  pid=$!
  if ! wait_ready "$base.program"; then kill "$pid" 2>/dev/null; echo "did not start"; return; fi
  "$build/agent/drip-agent" snapshot --pid "$pid" --duration "$seconds" --output "$base.json" \
    >"$base.out" 2>&1 || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  "$build/cli/dripctl" diagnose "$base.json" --json >"$base.diagnosis.json" 2>>"$base.out" || {
    echo "no diagnosis ($(tail -1 "$base.out"))"
    return
  }
  python3 - "$want" "$base.diagnosis.json" <<'PY'
import json, sys
want, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
stacks = d.get("stacks", [])
seconds = (d["snapshot"]["end_ms"] - d["snapshot"]["start_ms"]) / 1000
def fn(s):
    return s["frames"][0]["function"].split("(")[0] if s.get("frames") else "?"
window = f"{seconds:.0f} s"
if not want:
    leaks = [s for s in stacks if s.get("verdict") == "leak"]
    print(f"**false alarm**: `{fn(leaks[0])}` ({window})" if leaks
          else f"right: {d.get('outcome', '?')} ({window})")
elif stacks and stacks[0].get("verdict") == "leak" and want in fn(stacks[0]):
    print(f"right: leak ({stacks[0].get('sampled_allocs', 0)} samples, {window})")
else:
    top = f"`{fn(stacks[0])}` {stacks[0].get('verdict')}" if stacks else "nothing"
    print(f"**wrong**: {d.get('outcome', '?')}, first {top} ({window})")
PY
}

heaptrack_row() {
  local sc=$1 want=$2 base=$out/heaptrack-$sc frames
  # shellcheck disable=SC2046
  heaptrack -o "$base" "$program" "$sc" --rate-kib-per-s "$rate" --seconds "$seconds" \
    $(extra_args "$sc") >"$base.out" 2>&1 || true
  heaptrack_print -f "$base.zst" --print-leaks 1 --print-peaks 0 --print-allocators 0 \
    --print-temporary 0 --print-histogram 0 --print-flamegraph 0 >"$base.txt" 2>/dev/null || true
  # The first (largest) leak: its allocation site, then its call stack, up to a blank line.
  frames=$(awk '/^MEMORY LEAKS/ { on = 1; next }
    on && /leaked over .* calls from$/ { n++; if (n > 2) exit; next }
    on && n >= 1 && /^$/ { if (n == 2) exit; next }
    on && n >= 1 && !/^ *(at|in) / { print }' "$base.txt")
  judge "$want" "$frames"
}

memleak_row() {
  local sc=$1 want=$2 base=$out/memleak-$sc pid frames
  # shellcheck disable=SC2046
  "$program" "$sc" --rate-kib-per-s "$rate" --seconds $((seconds + 30)) $(extra_args "$sc") \
    >"$base.program" 2>&1 &
  pid=$!
  if ! wait_ready "$base.program"; then kill "$pid" 2>/dev/null; echo "did not start"; return; fi
  "$memleak_cmd" -p "$pid" --top 1 "$seconds" 1 >"$base.txt" 2>"$base.err" || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # The one stack after "Top 1 stacks with outstanding allocations:".
  frames=$(awk '/stacks with outstanding allocations/ { on = 1; next }
    on && /bytes in .* allocations from stack/ { n++; next }
    on && n == 1 { print }' "$base.txt")
  judge "$want" "$frames"
}

echo "| scenario | leak | Drip ($seconds s, defaults, $variant) | heaptrack ($seconds s, leaked at exit) | memleak-bpfcc ($seconds s, top outstanding) |"
echo "|---|---|---|---|---|"
for sc in $scenarios; do
  want=$(expected "$sc")
  dr="not run"
  ht="not run ($heaptrack_reason)"
  ml="not run ($memleak_reason)"
  [ "$use_drip" -eq 1 ] && dr=$(drip_row "$sc" "$want")
  [ "$have_heaptrack" -eq 1 ] && ht=$(heaptrack_row "$sc" "$want")
  [ "$have_memleak" -eq 1 ] && ml=$(memleak_row "$sc" "$want")
  echo "| $sc | ${want:-none (decoy)} | $dr | $ht | $ml |"
done
echo "raw reports: $out" >&2
