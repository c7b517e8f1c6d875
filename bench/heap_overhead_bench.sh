#!/usr/bin/env bash
# Heap snapshots: what they cost a malloc-heavy process, and whether they find its leak.
#
# In one run, interleaved round by round (so that noise on this shared machine hits every
# variant alike), drip-malloc-workload (1 thread, leaking one block through
# workload_leak_record every --leak-every operations) runs:
#   alone       glibc only
#   shim        LD_PRELOAD=libdrip_sampler.so, no tracer attached
#   shim+snap   the shim while `drip-agent snapshot --mode preload` covers the run
#   attach      while `drip-agent snapshot --mode attach` (default budget, 0.05) watches it
#   memleak     under bcc's memleak-bpfcc, attached before the workload starts its clock
#   heaptrack   under `heaptrack` (LD_PRELOAD; every allocation recorded)
# and prints, per variant, the medians over rounds of ops/s and ops per CPU-second, their
# ratio to `alone` of the same round, and for the tracers the top stack each one reports.
#
# Usage: bash bench/heap_overhead_bench.sh [--build-dir build] [--seconds 10] [--rounds 3]
#          [--leak-every 500] [--out DIR] [--no-memleak] [--no-heaptrack] [--no-install]
#          [--memleak CMD]
# Needs root (BPF). Unless --no-install, installs Debian's bpfcc-tools and the kernel
# headers nearest to the running kernel when memleak lacks them (see ensure_memleak).
# Raw outputs (workload JSON lines, snapshots, agent logs, memleak and heaptrack reports)
# stay in --out (default: a new /tmp/drip-heap-bench.XXXXXX) for inspection.
set -Eeuo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=build
seconds=10
rounds=3
leak_every=500
out=""
use_memleak=1
use_heaptrack=1
allow_install=1
memleak_cmd=""

usage() { sed -n '2,/^set -Eeuo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --leak-every) leak_every=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-memleak) use_memleak=0; shift ;;
    --no-heaptrack) use_heaptrack=0; shift ;;
    --no-install) allow_install=0; shift ;;
    --memleak) memleak_cmd=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "heap_overhead_bench: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build=$root/$build ;; esac
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 4 ] || { echo "--seconds: an integer >= 4" >&2; exit 2; }
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || { echo "--rounds: an integer >= 1" >&2; exit 2; }
[[ "$leak_every" =~ ^[0-9]+$ ]] && [ "$leak_every" -ge 1 ] || { echo "--leak-every: an integer >= 1" >&2; exit 2; }

workload=$build/bench/drip-malloc-workload
shim=$build/agent/sampler_shim/libdrip_sampler.so
agent=$build/agent/drip-agent
dripctl=$build/cli/dripctl
for f in "$workload" "$shim" "$agent" "$dripctl"; do
  [ -e "$f" ] || { echo "heap_overhead_bench: $f is missing; build it first" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "heap_overhead_bench: needs python3" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || echo "heap_overhead_bench: not root: attach mode, snapshots and memleak will fail" >&2

if [ -z "$out" ]; then out=$(mktemp -d /tmp/drip-heap-bench.XXXXXX); else mkdir -p "$out"; fi
out=$(cd "$out" && pwd)

# Every background job runs in a session of its own (setsid, same pid), so that cleanup
# can end it with everything it started (heaptrack_interpret, a stopped wrapper) by its id.
jobs_started=()
cleanup() {
  local pid
  for pid in "${jobs_started[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -CONT -- "-$pid" 2>/dev/null || true
      kill -TERM -- "-$pid" 2>/dev/null || true
    fi
  done
  sleep 0.3
  for pid in "${jobs_started[@]}"; do
    kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "heap_overhead_bench: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
trap 'exit 130' INT TERM

last_pid=""
start_job() {  # start_job STDOUT STDERR CMD...: runs CMD in its own session; pid in last_pid
  local o=$1 e=$2
  shift 2
  setsid "$@" >"$o" 2>"$e" &
  last_pid=$!
  jobs_started+=("$last_pid")
}
wait_job() {  # wait_job PID: its exit status, without tripping set -e
  local rc=0
  wait "$1" || rc=$?
  return "$rc"
}
now_ms() { date +%s%3N; }
timed='TIMEFORMAT="%R %U %S"; time "$@"'  # bash -c "$timed" _ CMD...: wall user sys on stderr

# --- peers: memleak-bpfcc (bpfcc-tools, kernel headers, the fixed wrapper) and heaptrack ---
# shellcheck source=bench/tools/peer_tools.sh
source "$root/bench/tools/peer_tools.sh"

modes=(alone shim shim_snap attach)
if ensure_memleak; then modes+=(memleak); else echo "heap_overhead_bench: skipping memleak: $memleak_reason" >&2; fi
if ensure_heaptrack; then modes+=(heaptrack); else echo "heap_overhead_bench: skipping heaptrack: $heaptrack_reason" >&2; fi
printf '%s\n' "$memleak_reason" >"$out/memleak.skipped"
printf '%s\n' "$heaptrack_reason" >"$out/heaptrack.skipped"

wl_args=(--seconds "$seconds" --threads 1 --leak-every "$leak_every")
agent_seconds=$((seconds - 1))  # the snapshot ends before the workload does

# --- one run of each variant; files are $out/r<round>_<mode>.* ----------------------------
run_alone() {
  local p=$1
  now_ms >"$p.launch_ms"
  start_job "$p.json" "$p.err" "$workload" "${wl_args[@]}"
  wait_job "$last_pid"
}
run_shim() {
  local p=$1
  now_ms >"$p.launch_ms"
  start_job "$p.json" "$p.err" env LD_PRELOAD="$shim" "$workload" "${wl_args[@]}"
  wait_job "$last_pid"
}
run_with_agent() {  # run_with_agent PREFIX MODE: the workload, and a snapshot from 0.2 s on
  local p=$1 mode=$2 wpid apid cpid
  now_ms >"$p.launch_ms"
  if [ "$mode" = preload ]; then
    start_job "$p.json" "$p.err" env LD_PRELOAD="$shim" "$workload" "${wl_args[@]}"
  else
    start_job "$p.json" "$p.err" "$workload" "${wl_args[@]}"
  fi
  wpid=$last_pid
  # The workload's CPU time, every 50 ms: its CPU inside and outside the snapshot window.
  start_job "$p.cpu" /dev/null bash -c \
    'while read -r -a f <"/proc/$1/stat"; do echo "$EPOCHREALTIME ${f[13]} ${f[14]}"; sleep 0.05; done 2>/dev/null' _ "$wpid"
  cpid=$last_pid
  sleep 0.2
  now_ms >"$p.agent_launch_ms"
  start_job /dev/null "$p.agent.time" bash -c "$timed 2>\"$p.agent.log\"" _ \
    "$agent" snapshot --pid "$wpid" --duration "$agent_seconds" --output "$p.snap.json" \
    --mode "$mode" --log-level info
  apid=$last_pid
  wait_job "$wpid" || { echo "workload failed: $(cat "$p.err")" >&2; return 1; }
  wait_job "$apid" || echo "heap_overhead_bench: drip-agent failed ($p.agent.log)" >&2
  wait_job "$cpid" || true
  if [ -s "$p.snap.json" ]; then
    "$dripctl" diagnose "$p.snap.json" --json >"$p.diag.json" 2>"$p.diag.err" || true
  fi
}
run_shim_snap() { run_with_agent "$1" preload; }
run_attach() { run_with_agent "$1" attach; }

memleak_failed=0
run_memleak() {
  # The workload's pid is that of a stopped bash that execs it once memleak's probes are
  # attached (memleak traces the pid, which exec keeps), so that its whole timed run is traced.
  local p=$1 wpid mpid n=0 interval i
  interval=$((seconds / 5)); [ "$interval" -ge 1 ] || interval=1
  start_job "$p.json" "$p.err" bash -c 'kill -STOP $$; exec "$@"' _ "$workload" "${wl_args[@]}"
  wpid=$last_pid
  for i in $(seq 1 50); do
    [ "$(awk '/^State:/ {print $2}' "/proc/$wpid/status" 2>/dev/null)" = T ] && break
    sleep 0.05
  done
  start_job "$p.txt" "$p.memleak.err" "$memleak_cmd" -p "$wpid" --top 5 "$interval" 100000
  mpid=$last_pid
  # Attached once it holds a perf event per probe: malloc calloc realloc mmap posix_memalign
  # valloc memalign pvalloc aligned_alloc (entry and return), free and munmap.
  for i in $(seq 1 1200); do
    n=$( (find "/proc/$mpid/fd" -lname 'anon_inode:\[perf_event\]' 2>/dev/null || true) | wc -l)
    [ "$n" -ge 20 ] && break
    kill -0 "$mpid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$n" -lt 20 ]; then
    echo "heap_overhead_bench: memleak did not attach (see $p.memleak.err); skipping it from now on" >&2
    memleak_failed=1
    kill -TERM -- "-$mpid" 2>/dev/null || true
    kill -KILL -- "-$wpid" 2>/dev/null || true
    { wait_job "$mpid" || true; wait_job "$wpid" || true; } 2>/dev/null
    rm -f "$p.json"
    return 0
  fi
  echo "$i" >"$p.attach_tenths"
  now_ms >"$p.launch_ms"
  kill -CONT "$wpid"
  wait_job "$wpid" || { echo "workload failed: $(cat "$p.err")" >&2; return 1; }
  now_ms >"$p.exit_ms"
  # SIGTERM: background jobs of a script ignore SIGINT. Its probes go with its file descriptors.
  kill -TERM -- "-$mpid" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$mpid" 2>/dev/null || true
  { wait_job "$mpid" || true; } 2>/dev/null
}
run_heaptrack() {
  local p=$1
  now_ms >"$p.launch_ms"
  start_job /dev/null "$p.time" bash -c "$timed >\"$p.out\" 2>&1" _ \
    heaptrack -o "$p.heaptrack" "$workload" "${wl_args[@]}"
  wait_job "$last_pid" || { echo "heaptrack failed ($p.out)" >&2; return 0; }
  grep -m1 '^{"ops_per_s"' "$p.out" >"$p.json" || true
  local data
  data=$(ls "$p.heaptrack".* 2>/dev/null | head -1 || true)
  if [ -n "$data" ]; then
    heaptrack_print -f "$data" --print-leaks 1 --print-peaks 0 --print-allocators 0 \
      --print-temporary 0 >"$p.txt" 2>&1 || true
    rm -f "$data"  # tens of MB per run
  fi
}

echo "== heap overhead: ${rounds} rounds of ${modes[*]}; ${seconds} s each; leak every ${leak_every} ops; raw files in $out =="
echo "$(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >"$out/machine"
n=${#modes[@]}
for r in $(seq 1 "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    mode=${modes[$(((k + r - 1) % n))]}  # the order rotates each round
    [ "$mode" = memleak ] && [ "$memleak_failed" -eq 1 ] && continue
    echo "-- round $r: $mode" >&2
    "run_$mode" "$out/r${r}_$mode"
    sleep 1
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine"

# --- the table ---------------------------------------------------------------------------
python3 - "$out" "$rounds" "$seconds" "$leak_every" <<'PY'
import json, os, re, statistics, sys, time

out, rounds, seconds, leak_every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
LEAK = "workload_leak_record"

def read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default

def load_json(path):
    text = read(path)
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None

def load_workload_line(path):  # the workload's one JSON line
    for line in (read(path) or "").splitlines():
        if line.startswith('{"ops_per_s"'):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def fmt_rate(x):
    if x is None:
        return "–"
    if x >= 1e6:
        return f"{x / 1e6:.1f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"

def fmt_ratio(x):
    if x is None:
        return "–"
    slow = 1 / x if x > 0 else float("inf")
    return f"{x:.3f} ({slow:.2f}×)" if slow < 10 else f"{x:.5f} ({slow:.0f}×)"

def workload(prefix):
    w = load_workload_line(prefix + ".json")
    if not w or "ops" not in w:
        return None
    # heaptrack: its recorder (heaptrack_interpret) runs in a process of its own; count
    # the CPU of the whole tree, as `time` reported it.
    t = read(prefix + ".time")
    if prefix.endswith("_heaptrack") and t:
        try:
            _, user, sys_ = map(float, t.strip().splitlines()[-1].split())
            w["cpu_seconds_tree"] = user + sys_
            w["ops_per_cpu_s"] = w["ops"] / (user + sys_)
        except ValueError:
            pass
    return w

def diag_top(prefix):
    d = load_json(prefix + ".diag.json")
    if not d or not d.get("stacks"):
        return None
    s = d["stacks"][0]
    fn = (s["frames"][0].get("function") or "?") if s.get("frames") else "?"
    return {"function": fn, "verdict": s.get("verdict", "?"), "score": s.get("score", 0),
            "found": fn == LEAK and s.get("verdict") == "leak"}

def memleak_reports(prefix):
    text = read(prefix + ".txt", "")
    exit_ms = read(prefix + ".exit_ms")
    exit_s = int(exit_ms) / 1000 if exit_ms else None
    # re.split alternates timestamp and body
    parts = re.split(r"^\[(\d\d:\d\d:\d\d)\] Top \d+ stacks with outstanding allocations:\n", text, flags=re.M)
    result = []
    for ts, body in zip(parts[1::2], parts[2::2]):
        if exit_s is not None:
            lt = time.localtime(exit_s)
            h, m, s = map(int, ts.split(":"))
            t = time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, h, m, s, 0, 0, -1))
            if t + 1 > exit_s:  # symbolized after the workload exited: names are lost
                continue
        stacks = []
        for m in re.finditer(r"^\t(\d+) bytes in (\d+) allocations from stack\n((?:\t\t.*\n?)*)", body, flags=re.M):
            frames = [re.sub(r"^0x[0-9a-f]+\t", "", f.strip()) for f in m.group(3).splitlines() if f.strip()]
            stacks.append({"bytes": int(m.group(1)), "allocs": int(m.group(2)), "frames": frames})
        result.append(stacks)
    return result

def memleak_top(prefix):
    reports = memleak_reports(prefix)
    if not reports:
        return None
    last, first = reports[-1], reports[0]
    key = lambda s: s["frames"][0] if s["frames"] else "?"
    top = max(last, key=lambda s: s["bytes"]) if last else None
    # Growth in allocations, not bytes, from the first report to the last: memleak reads
    # its hash map while the target keeps changing it, so one report may count an entry
    # twice or miss it (an 8 MiB thread stack seen twice dwarfs any small-block leak).
    before = {key(s): s["allocs"] for s in first} if len(reports) > 1 else {}
    growing = max(last, key=lambda s: s["allocs"] - before.get(key(s), 0)) if last else None
    short = lambda s: re.sub(r"\+0x[0-9a-f]+ \[.*\]$", "", key(s)) if s else "?"
    return {"top": short(top), "top_bytes": top["bytes"] if top else 0,
            "growing": short(growing), "growing_bytes": growing["bytes"] if growing else 0,
            "growing_allocs": growing["allocs"] if growing else 0, "reports": len(reports),
            "found": growing is not None and short(growing) == LEAK,
            "found_largest": top is not None and short(top) == LEAK}

def heaptrack_top(prefix):
    text = read(prefix + ".txt", "")
    m = re.search(r"MEMORY LEAKS\n(\S+) leaked over (\d+) calls from\n(\S.*)\n", text)
    if not m:
        return None
    return {"function": m.group(3).strip(), "bytes": m.group(1), "calls": int(m.group(2)),
            "found": m.group(3).strip() == LEAK}

def snap_info(prefix, launch_ms):
    s = load_json(prefix + ".snap.json")
    if not s:
        return None
    info = {"stop": s.get("stop", {}).get("reason", "?"), "duty": s.get("duty_cycle"),
            "events": s.get("events", {})}
    w0, w1 = s["window"]["start_ms"], s["window"]["end_ms"]
    info["window_ms"] = (w0, w1)
    info["window_s"] = (w1 - w0) / 1000
    info["window_from_launch_s"] = (w0 - launch_ms) / 1000
    log = read(prefix + ".agent.log", "")
    m = re.search(r"probe hit ([0-9.]+) µs", log)
    info["probe_hit_us"] = float(m.group(1)) if m else None
    t = read(prefix + ".agent.time")
    try:
        wall, u, sy = map(float, t.strip().splitlines()[-1].split())
        info["agent_cpu_s"] = u + sy
        info["agent_end_s"] = int(read(prefix + ".agent_launch_ms")) / 1000 + wall
    except (AttributeError, ValueError, IndexError, TypeError):
        info["agent_cpu_s"] = None
    return info

modes = ["alone", "shim", "shim_snap", "attach", "memleak", "heaptrack"]
labels = {"alone": "(a) alone (glibc)", "shim": "(b) preload shim, no snapshot",
          "shim_snap": "(c) shim during a preload snapshot", "attach": "(d) attach mode, budget 0.05",
          "memleak": "(e) bcc memleak-bpfcc", "heaptrack": "(f) heaptrack"}
data = {m: {} for m in modes}
for m in modes:
    for r in range(1, rounds + 1):
        p = os.path.join(out, f"r{r}_{m}")
        w = workload(p)
        if w is None:
            continue
        launch = int(read(p + ".launch_ms", "0") or 0)
        e = {"w": w}
        if m in ("shim_snap", "attach"):
            e["snap"] = snap_info(p, launch)
            e["top"] = diag_top(p)
        elif m == "memleak":
            e["top"] = memleak_top(p)
        elif m == "heaptrack":
            e["top"] = heaptrack_top(p)
        data[m][r] = e

def ratio(m, r, key):
    a, x = data["alone"].get(r), data[m].get(r)
    if not a or not x or not a["w"].get(key) or x["w"].get(key) is None:
        return None
    return x["w"][key] / a["w"][key]

def cpu_at(samples, t):  # the workload's CPU seconds at Unix time t (s), interpolated
    if not samples or t <= samples[0][0]:
        return samples[0][1] if samples else None
    for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
        if t <= t1:
            return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c1
    return samples[-1][1]

def in_window(m, r):
    """What the probes cost the target while they were attached, from its utime and stime
    (/proc/PID/stat, polled every 50 ms): a uprobe hit is kernel time in the target. The
    probing period runs from the snapshot window's start to the agent's exit (probes are
    detached after the window's end). Returns the target's extra kernel time as a share of
    one core (over its kernel time per second outside the period), and its user share of
    CPU inside over outside: about the ops per CPU-second it kept while probed."""
    x = data[m].get(r)
    if not x or not x.get("snap"):
        return None
    tck = os.sysconf("SC_CLK_TCK")
    samples = []
    for line in (read(os.path.join(out, f"r{r}_{m}.cpu")) or "").splitlines():
        f = line.split()
        if len(f) == 3:
            samples.append((float(f[0]), int(f[1]) / tck, int(f[2]) / tck))
    if len(samples) < 4:
        return None
    t_first, t_last = samples[0][0], samples[-1][0]
    p0 = x["snap"]["window_ms"][0] / 1000
    p1 = x["snap"]["window_ms"][1] / 1000
    if x["snap"].get("agent_end_s"):
        p1 = max(p1, x["snap"]["agent_end_s"])
    p0, p1 = max(p0, t_first), min(p1, t_last)
    if p1 - p0 < 0.5:
        return None
    def at(t, i):
        for a, b in zip(samples, samples[1:]):
            if t <= b[0]:
                return a[i] + (b[i] - a[i]) * (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else b[i]
        return samples[-1][i]
    u_in, s_in = at(p1, 1) - at(p0, 1), at(p1, 2) - at(p0, 2)
    u_all, s_all = samples[-1][1] - samples[0][1], samples[-1][2] - samples[0][2]
    u_out, s_out = u_all - u_in, s_all - s_in
    t_out = (t_last - t_first) - (p1 - p0)
    base = s_out / t_out if t_out >= 0.5 else 0.0
    res = {"period_s": p1 - p0, "probe_cpu": max(0.0, s_in / (p1 - p0) - base),
           "stime_out": base}
    if t_out >= 0.5 and u_out + s_out > 0 and u_in + s_in > 0:
        res["user_ratio"] = (u_in / (u_in + s_in)) / (u_out / (u_out + s_out))
    return res

print()
print(f"drip-malloc-workload, 1 thread, {seconds} s per run, a leak every {leak_every} ops; "
      f"{rounds} rounds, medians over rounds; ratio = variant / alone in the same round "
      f"(slowdown in brackets). Raw files: {out}")
print(open(os.path.join(out, "machine")).read().strip().replace("\n", "; "))
print()
def short(fn):  # template arguments elided
    prev = None
    while prev != fn:
        prev, fn = fn, re.sub(r"<[^<>]*>", "\x00", fn)
    return fn.replace("\x00", "<…>")

print("| variant | ops/s | ops/CPU-s | ratio, ops/s | ratio, ops/CPU-s | top stack reported | finds workload_leak_record | notes |")
print("|---|---:|---:|---:|---:|---|---|---|")
for m in modes:
    rs = sorted(data[m])
    if not rs:
        reason = (read(os.path.join(out, f"{m}.skipped"), "") or "").strip() if m in ("memleak", "heaptrack") else ""
        print(f"| {labels[m]} | – | – | – | – | not run{': ' + reason if reason else ''} | – | |")
        continue
    ops = med(data[m][r]["w"]["ops_per_s"] for r in rs)
    opc = med(data[m][r]["w"].get("ops_per_cpu_s") for r in rs)
    r1 = med(ratio(m, r, "ops_per_s") for r in rs)
    r2 = med(ratio(m, r, "ops_per_cpu_s") for r in rs)
    tops, found, notes = [], [], ""
    for r in rs:
        t = data[m][r].get("top")
        if m in ("shim_snap", "attach"):
            tops.append(f"{short(t['function'])} ({t['verdict']})" if t else "no stack")
        elif m == "memleak":
            tops.append(f"largest: {short(t['top'])}; most new allocations: {short(t['growing'])}" if t else "no report")
        elif m == "heaptrack":
            tops.append(short(t["function"]) if t else "no report")
        if m in ("shim_snap", "attach", "memleak", "heaptrack"):
            found.append(bool(t and t["found"]))
    if m in ("shim_snap", "attach"):
        stops = [data[m][r]["snap"]["stop"] for r in rs if data[m][r].get("snap")]
        notes = "stop: " + ", ".join(f"{x} ×{stops.count(x)}" for x in sorted(set(stops)))
        iws = [x for x in (in_window(m, r) for r in rs) if x is not None]
        if iws:
            notes += (f"; while probed ({med(x['period_s'] for x in iws):.1f} s): probes cost "
                      f"{med(x['probe_cpu'] for x in iws):.0%} of a core (target's extra kernel time)")
            ur = med(x.get("user_ratio") for x in iws)
            if ur is not None:
                notes += f", user share of its CPU {ur:.2f}× that outside"
        if m == "attach":
            est = med((data[m][r]["snap"]["duty"] or {}).get("estimated_cpu_fraction") for r in rs if data[m][r].get("snap"))
            if est is not None:
                notes += f"; agent's estimate of probe CPU {est:.0%} of a core"
    elif m == "memleak":
        notes = "traced from the workload's first instruction to its exit"
    elif m == "heaptrack":
        notes = "ops/CPU-s counts heaptrack_interpret's CPU too"
    top_text = "; ".join(sorted(set(tops), key=tops.index)) if tops else ""
    found_text = f"{sum(found)}/{len(found)} rounds" if found else ""
    if m in ("shim_snap", "attach"):
        first = sum(1 for r in rs if data[m][r].get("top") and data[m][r]["top"]["function"] == LEAK)
        found_text = f"ranked first {first}/{len(rs)}, verdict leak {sum(found)}/{len(rs)}"
    if m == "memleak":
        largest = sum(1 for r in rs if data[m][r].get("top") and data[m][r]["top"]["found_largest"])
        found_text = f"as largest {largest}/{len(rs)}, as most new allocations {sum(found)}/{len(found)}"
    print(f"| {labels[m]} | {fmt_rate(ops)} | {fmt_rate(opc)} | {fmt_ratio(r1)} | {fmt_ratio(r2)} | {top_text} | {found_text} | {notes} |")

print()
print("Per round (ratio of ops/s to `alone` of the same round):")
for m in modes:
    for r in sorted(data[m]):
        e = data[m][r]
        w = e["w"]
        extra = ""
        if m in ("shim_snap", "attach") and e.get("snap"):
            s = e["snap"]
            d = s["duty"] or {}
            iw = in_window(m, r)
            extra = f" stop={s['stop']} window={s['window_s']:.1f}s from {s['window_from_launch_s']:.1f}s"
            if iw is not None:
                extra += (f" probed {iw['period_s']:.1f}s: probe_cpu={iw['probe_cpu']:.2f} core"
                          f" (stime outside {iw['stime_out']:.2f})")
                if "user_ratio" in iw:
                    extra += f" user_share_ratio={iw['user_ratio']:.2f}"
            if d and m == "attach":
                extra += (f" on_fraction={d.get('on_fraction', 0):.2f} probe_hits={d.get('probe_hits', 0)}"
                          f" est_cpu={d.get('estimated_cpu_fraction', 0):.3f} hit_cost={d.get('probe_hit_cost_ns', 0) / 1000:.1f}µs")
            elif d:
                extra += f" probe_hits={d.get('probe_hits', 0)}"
            if s["probe_hit_us"] is not None:
                extra += f" log: probe hit {s['probe_hit_us']}µs"
            ev = s["events"]
            extra += f" sampled={ev.get('sampled_allocs', 0)} dropped={ev.get('dropped', 0)}"
            if s["agent_cpu_s"] is not None:
                extra += f" agent_cpu={s['agent_cpu_s']:.2f}s"
            t = e.get("top")
            if t:
                extra += f" top={t['function']}({t['verdict']},{t['score']:.2f})"
        elif m == "memleak" and e.get("top"):
            t = e["top"]
            extra = (f" reports={t['reports']} largest={t['top']}({t['top_bytes']} B)"
                     f" most_new_allocs={t['growing']}({t['growing_bytes']} B in {t['growing_allocs']})")
        elif m == "heaptrack" and e.get("top"):
            t = e["top"]
            extra = f" top_leak={t['function']}({t['bytes']} over {t['calls']} calls) tree_cpu={w.get('cpu_seconds_tree', 0):.2f}s"
        rr = ratio(m, r, "ops_per_s")
        rr_text = f"{rr:.4f}" if rr is not None else "–"
        print(f"  r{r} {m:<10} ops/s={w['ops_per_s']:>12,.0f} ops/cpu-s={w.get('ops_per_cpu_s', 0):>12,.0f}"
              f" ratio={rr_text}{extra}")

PY
