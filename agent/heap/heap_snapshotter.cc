#include "agent/heap/heap_snapshotter.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "agent/heap/allocator_probe_plan.h"
#include "agent/heap/duty_cycle_controller.h"
#include "agent/heap/duty_cycle_driver.h"
#include "agent/heap/heap_probe_session.h"
#include "agent/heap/live_heap_tracker.h"
#include "agent/heap/sampling_rate_planner.h"
#include "agent/heap/shim_sampling_control.h"
#include "agent/heap/stack_unwinder.h"
#include "agent/proc_files.h"
#include "common/base/duration.h"
#include "common/base/status_macros.h"
#include "common/daemon/logging.h"
#include "diagnoser/heap_diagnoser.h"
#include "fmt/format.h"

namespace drip::agent {
namespace {

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double MonotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// bpf_ktime_get_boot_ns() of an event, as Unix ms.
int64_t BootNsToUnixMs(uint64_t boot_ns) {
  timespec boot, real;
  clock_gettime(CLOCK_BOOTTIME, &boot);
  clock_gettime(CLOCK_REALTIME, &real);
  const int64_t boot_now_ns = static_cast<int64_t>(boot.tv_sec) * 1000000000 + boot.tv_nsec;
  const int64_t real_now_ns = static_cast<int64_t>(real.tv_sec) * 1000000000 + real.tv_nsec;
  return (real_now_ns - boot_now_ns + static_cast<int64_t>(boot_ns)) / 1000000;
}

absl::StatusOr<ProcStat> ReadStat(const std::string& proc_root, int pid) {
  std::string text;
  RETURN_IF_ERROR(ReadProcFile(fmt::format("{}/{}/stat", proc_root, pid), &text));
  return ParseProcStat(text);
}

// Alive and still the same process (not a recycled pid), and not a zombie.
bool TargetAlive(const std::string& proc_root, int pid, uint64_t start_ticks) {
  auto stat = ReadStat(proc_root, pid);
  return stat.ok() && stat->start_ticks == start_ticks && stat->state != 'Z' && stat->state != 'X';
}

absl::StatusOr<RssPoint> ReadRss(const std::string& proc_root, int pid, int64_t t_ms) {
  std::string text;
  RETURN_IF_ERROR(ReadProcFile(fmt::format("{}/{}/status", proc_root, pid), &text));
  ASSIGN_OR_RETURN(ProcStatus status, ParseProcStatus(text));
  RssPoint point;
  point.t_ms = t_ms;
  point.rss_bytes =
      static_cast<int64_t>(status.anon_rss_bytes + status.file_rss_bytes + status.shmem_rss_bytes);
  point.anon_bytes = static_cast<int64_t>(status.anon_rss_bytes + status.swap_bytes);
  return point;
}

absl::Status FillTarget(const std::string& proc_root, int pid, SnapshotTarget* target,
                        uint64_t* start_ticks) {
  ASSIGN_OR_RETURN(ProcStat stat, ReadStat(proc_root, pid));
  target->pid = pid;
  target->comm = stat.comm;
  *start_ticks = stat.start_ticks;
  char exe[4096];
  const ssize_t n =
      readlink(fmt::format("{}/{}/exe", proc_root, pid).c_str(), exe, sizeof(exe) - 1);
  if (n > 0) target->exe.assign(exe, static_cast<size_t>(n));
  std::string proc_stat;
  if (ReadProcFile(proc_root + "/stat", &proc_stat).ok()) {
    if (auto boot = ParseBootTime(proc_stat); boot.ok()) {
      const long ticks = sysconf(_SC_CLK_TCK);
      target->start_time_ms = *boot * 1000 + static_cast<int64_t>(stat.start_ticks * 1000 /
                                                                  static_cast<uint64_t>(ticks));
    }
  }
  char host[256] = {};
  if (target->host.empty() && gethostname(host, sizeof(host) - 1) == 0) target->host = host;
  return absl::OkStatus();
}

// Unwinds, symbolizes and files sampled allocations as they arrive.
class EventSink {
 public:
  EventSink(int pid, StackUnwinder* unwinder, LiveHeapTracker* tracker, HeapSnapshot* snapshot,
            int max_frames)
      : pid_(pid),
        unwinder_(unwinder),
        tracker_(tracker),
        snapshot_(snapshot),
        max_frames_(max_frames) {}

  void OnAlloc(const drip_heap_alloc_event& e) {
    snapshot_->sampled_allocs++;
    if (snapshot_->sampling_mean_bytes == 0) snapshot_->sampling_mean_bytes = e.sampling_mean_bytes;
    UserStack stack;
    stack.pid = pid_;
    stack.tid = static_cast<int>(e.tid);
    std::copy(std::begin(e.regs), std::end(e.regs), stack.regs.begin());
    stack.stack =
        std::span<const uint8_t>(e.stack, std::min<size_t>(e.stack_bytes, sizeof(e.stack)));
    auto pcs = unwinder_->Unwind(stack, max_frames_);
    uint64_t stack_id = 0;
    if (!pcs.ok() || pcs->empty()) {
      snapshot_->unwind_failures++;
      StackFrame unknown;
      unknown.function = "[unwind failed]";
      stack_id = tracker_->AddStack({0}, {unknown});
    } else {
      stack_id = tracker_->FindStack(*pcs);
      if (stack_id == 0) {
        std::vector<StackFrame> frames;
        frames.reserve(pcs->size());
        for (size_t i = 0; i < pcs->size(); ++i) {
          frames.push_back(unwinder_->Symbolize((*pcs)[i], i > 0));
        }
        stack_id = tracker_->AddStack(*pcs, std::move(frames));
      }
    }
    tracker_->OnAlloc(stack_id, e.address, e.size, e.sampling_mean_bytes,
                      BootNsToUnixMs(e.timestamp_ns), e.window, loss_weight_);
  }

  void set_loss_weight(double weight) { loss_weight_ = weight; }

  void OnFree(const drip_heap_free_event& e) {
    snapshot_->matched_frees++;
    tracker_->OnFree(e.address, BootNsToUnixMs(e.timestamp_ns));
  }

 private:
  int pid_;
  StackUnwinder* unwinder_;
  LiveHeapTracker* tracker_;
  HeapSnapshot* snapshot_;
  int max_frames_;
  double loss_weight_ = 1.0;
};

// Whether the window so far would leave the diagnoser undecided: the snapshot as it
// stands now, diagnosed with the default thresholds, is inconclusive.
bool ShortOfEvidence(const HeapSnapshot& so_far, const LiveHeapTracker& tracker,
                     const std::string& mode, const DutyCycleDriver& duty) {
  HeapSnapshot interim;
  interim.target = so_far.target;
  interim.mode = so_far.mode;
  interim.start_ms = so_far.start_ms;
  interim.end_ms = so_far.rss.empty() ? UnixMs() : so_far.rss.back().t_ms;
  interim.sampling_mean_bytes = so_far.sampling_mean_bytes;
  interim.duty_cycle = so_far.duty_cycle;
  interim.sampled_allocs = so_far.sampled_allocs;
  interim.lost_while_behind = so_far.lost_while_behind;
  interim.dropped_events = so_far.lost_while_behind;
  if (mode == "attach") {
    interim.duty_cycle.on_fraction = duty.controller().on_fraction();
    interim.duty_cycle.free_on_fraction = duty.controller().free_on_fraction();
  }
  interim.rss = so_far.rss;
  interim.stacks = tracker.StacksWithCohorts(interim.start_ms, interim.end_ms);
  const diagnoser::Diagnosis diagnosis = diagnoser::HeapDiagnoser().Diagnose(interim);
  return diagnosis.outcome == diagnoser::Outcome::kInconclusive;
}

}  // namespace

absl::StatusOr<HeapSnapshot> TakeHeapSnapshot(const SnapshotOptions& options,
                                              const std::atomic<bool>* stop_requested) {
  auto log = Logger("agent");
  if (options.pid <= 0) return absl::InvalidArgumentError("snapshot: --pid must be a process id");
  if (!(options.duration_seconds > 0) || options.duration_seconds > options.max_duration_seconds) {
    return absl::InvalidArgumentError(
        fmt::format("snapshot: duration must be within (0, {}] seconds, not {}",
                    options.max_duration_seconds, options.duration_seconds));
  }
  if (options.mode != "" && options.mode != "attach" && options.mode != "preload") {
    return absl::InvalidArgumentError(
        fmt::format("snapshot: mode must be attach or preload, not '{}'", options.mode));
  }
  if (!(options.cpu_budget > 0 && options.cpu_budget <= 1)) {
    return absl::InvalidArgumentError(
        fmt::format("snapshot: cpu budget must be within (0, 1], not {}", options.cpu_budget));
  }
  if (!std::isfinite(options.expected_growth_bytes_per_hour) ||
      options.expected_growth_bytes_per_hour < 0) {
    return absl::InvalidArgumentError(
        fmt::format("snapshot: expected growth must be 0 or more bytes/h, not {}",
                    options.expected_growth_bytes_per_hour));
  }
  if (options.extend_up_to_seconds > options.max_duration_seconds) {
    return absl::InvalidArgumentError(
        fmt::format("snapshot: --extend-up-to must be at most {} seconds, not {}",
                    options.max_duration_seconds, options.extend_up_to_seconds));
  }

  HeapSnapshot snapshot;
  snapshot.target.host = options.host;
  snapshot.target.component = options.component;
  snapshot.target.instance = options.instance;
  snapshot.target.expected_growth_bytes_per_hour = options.expected_growth_bytes_per_hour;
  uint64_t start_ticks = 0;
  if (absl::Status s = FillTarget(options.proc_root, options.pid, &snapshot.target, &start_ticks);
      !s.ok()) {
    return absl::NotFoundError(
        fmt::format("snapshot: process {}: {}", options.pid, std::string(s.message())));
  }
  ASSIGN_OR_RETURN(AllocatorProbePlan plan, PlanAllocatorProbes(options.pid, options.proc_root));
  std::string mode = options.mode;
  if (mode.empty()) mode = plan.shim_path.empty() ? "attach" : "preload";
  if (mode == "preload" && plan.shim_path.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "snapshot: process {} ({}) does not have libdrip_sampler.so loaded; start it with "
        "LD_PRELOAD (deploy/systemd/drip-sampler.conf) or use --mode attach",
        options.pid, snapshot.target.comm));
  }
  snapshot.mode = mode;
  snapshot.target.allocator = plan.allocator;
  // The shim interposes the malloc family and operator new/delete, not an allocator's own
  // API: a program calling that by name is only partly seen, and says so.
  snapshot.unsampled_calls = mode == "preload" ? plan.own_api_calls : plan.unprobed_calls;
  if (!snapshot.unsampled_calls.empty()) {
    log->warn(
        "snapshot: pid {} ({}) calls {} ({}'s own API), which a {}-mode snapshot cannot "
        "sample: allocations through them are missing, and blocks freed through them look "
        "live{}",
        options.pid, snapshot.target.comm, fmt::join(snapshot.unsampled_calls, ", "),
        plan.allocator, mode, mode == "preload" ? "; attach mode (--mode attach) probes them" : "");
  }

  ASSIGN_OR_RETURN(std::unique_ptr<StackUnwinder> unwinder,
                   StackUnwinder::ForProcess(options.pid, options.proc_root));
  HeapProbeSession::Options session_options;
  session_options.pid = options.pid;
  // Attach mode sizes T from the allocation rate unless it was given.
  // A growth already measured bounds T too, so that a slow leak shows within the window.
  SamplingRatePlanner::Config planner_config;
  planner_config.expected_growth_bytes_per_second = options.expected_growth_bytes_per_hour / 3600;
  planner_config.window_seconds = options.duration_seconds;
  std::optional<SamplingRatePlanner> planner;
  if (mode == "attach" && options.sampling_mean_bytes == 0) planner.emplace(planner_config);
  session_options.sampling_mean_bytes =
      planner ? planner->mean_bytes() : std::max<uint64_t>(options.sampling_mean_bytes, 1);
  session_options.max_tracked = options.max_tracked;
  session_options.max_events_per_second = options.max_events_per_second;
  ASSIGN_OR_RETURN(std::unique_ptr<HeapProbeSession> session,
                   HeapProbeSession::Open(session_options));

  DutyCycleController::Config duty_config;
  duty_config.cpu_budget = options.cpu_budget;
  snapshot.duty_cycle.cpu_budget = options.cpu_budget;
  if (mode == "attach") {
    ASSIGN_OR_RETURN(double cost_ns, session->MeasureProbeHitCost());
    duty_config.probe_hit_cost_ns = cost_ns;
    snapshot.duty_cycle.probe_hit_cost_ns = cost_ns;
    RETURN_IF_ERROR(session->AttachFrees(plan));
    log->info(
        "snapshot: pid {} ({}) attach mode, allocator {}, {} allocation and {} free probes, "
        "probe hit {:.1f} µs, budget {:.1f}% of a core",
        options.pid, snapshot.target.comm, plan.allocator, plan.allocs.size(), plan.frees.size(),
        cost_ns / 1000, options.cpu_budget * 100);
  } else {
    RETURN_IF_ERROR(session->AttachShim(plan.shim_path));
    log->info("snapshot: pid {} ({}) preload mode via {}, forwarding to {}", options.pid,
              snapshot.target.comm, plan.shim_path, plan.allocator);
  }
  // Preload mode asks the shim for the T the window needs, and gives the process back its
  // own when the snapshot ends, whichever way it ends.
  std::optional<ShimSamplingControl> shim_control;
  uint64_t shim_requested = 0;
  if (mode == "preload") {
    auto control = ShimSamplingControl::Find(options.pid, options.proc_root, plan.shim_path);
    if (control.ok()) {
      shim_control.emplace(*control);
      if (options.sampling_mean_bytes == 0) {
        SamplingRatePlanner::Config config = planner_config;
        // The shim's own default (DRIP_SAMPLE_BYTES unset): what it samples at until the
        // first request.
        config.initial_mean_bytes = 512 * 1024;
        planner.emplace(config);
      } else if (shim_control->Request(options.sampling_mean_bytes).ok()) {
        shim_requested = options.sampling_mean_bytes;
      }
    } else {
      log->warn("snapshot: pid {}: sampling at the shim's own period ({})", options.pid,
                std::string(control.status().message()));
    }
  }
  uint64_t preload_bytes = 0, preload_sampled = 0;
  absl::Cleanup restore_shim = [&] {
    if (shim_control && shim_requested != 0) IgnoreError(shim_control->Request(0));
  };
  double interval = options.interval_seconds;
  if (interval <= 0) interval = std::clamp(options.duration_seconds / 60, 0.25, 10.0);
  snapshot.interval_seconds = interval;

  LiveHeapTracker tracker(options.max_stacks);
  EventSink sink(options.pid, unwinder.get(), &tracker, &snapshot, options.max_frames);
  const HeapProbeSession::AllocHandler on_alloc = [&](const drip_heap_alloc_event& e) {
    sink.OnAlloc(e);
  };
  const HeapProbeSession::FreeHandler on_free = [&](const drip_heap_free_event& e) {
    sink.OnFree(e);
  };

  snapshot.start_ms = UnixMs();
  const double start_s = MonotonicSeconds();
  DutyCycleDriver duty(duty_config, session.get(), &plan, &tracker, snapshot.start_ms);
  const std::function<double()> since_start = [start_s] { return MonotonicSeconds() - start_s; };
  double next_point_s = start_s;
  int64_t last_point_ms = 0;
  auto take_point = [&](int64_t t_ms, double t_s) {
    last_point_ms = t_ms;
    if (mode == "attach") duty.UpdateWeights(t_s);
    tracker.TakePoint(t_ms);
    if (auto rss = ReadRss(options.proc_root, options.pid, t_ms); rss.ok())
      snapshot.rss.push_back(*rss);
  };
  take_point(snapshot.start_ms, 0);
  next_point_s += interval;

  std::string stop_reason, stop_detail;
  double duration = options.duration_seconds;
  struct LossReading {
    double t;
    uint64_t sampled;
    uint64_t lost;
  };
  std::deque<LossReading> loss_history;
  while (stop_reason.empty()) {
    const double now = MonotonicSeconds();
    const double elapsed = now - start_s;
    if (mode == "attach") {
      duty.Step(elapsed, since_start, &stop_reason, &stop_detail);
      if (!stop_reason.empty()) break;
    }
    {
      // Sampled allocations dropped by the hard limits over the last second (the kernel's
      // limit works in 1 s windows): the kept ones stand for them, and since the dropped
      // ones' frees are not tracked either, live bytes stay balanced. Not those lost while
      // this agent fell behind: they are a gap in the window, not a share of each second,
      // and the events read now came before it (weighing them for it put up to 100 times
      // their bytes where the gap was not, and one kept object in such a batch read as
      // a leak's worth of growth). The gap is counted, and the diagnoser judges with it.
      const auto counters = session->ReadCounters();
      const uint64_t sampled = counters[DRIP_CTR_SAMPLED] - counters[DRIP_CTR_RINGBUF_FULL];
      const uint64_t lost = counters[DRIP_CTR_RATE_LIMITED] + counters[DRIP_CTR_TRACKED_FULL];
      loss_history.push_back({now, sampled, lost});
      while (loss_history.size() > 2 && now - loss_history[1].t >= 1.0) loss_history.pop_front();
      const double d_sampled = static_cast<double>(sampled - loss_history.front().sampled);
      const double d_lost = static_cast<double>(lost - loss_history.front().lost);
      const double kept = d_sampled > 0 ? std::max(0.01, (d_sampled - d_lost) / d_sampled) : 1.0;
      sink.set_loss_weight(1.0 / kept);
      if (planner && mode == "preload") {
        // Every sampled allocation, kept or dropped over the events/s limit, stands for T
        // bytes: counting only the kept ones would read a limited rate as a slow one and
        // lower T further, into ever more drops.
        const uint64_t sampled_now = counters[DRIP_CTR_SAMPLED];
        preload_bytes += (sampled_now - preload_sampled) *
                         (shim_requested != 0 ? shim_requested : planner->mean_bytes());
        preload_sampled = sampled_now;
        if (auto t = planner->Update(elapsed, preload_bytes); t.has_value()) {
          if (shim_control->Request(*t).ok()) shim_requested = *t;
          log->debug("snapshot: pid {} asked the shim to sample every {}", options.pid,
                     FormatBytes(*t));
        }
      } else if (planner) {
        const double window_s = duty.controller().on_fraction() * elapsed;
        if (auto t = planner->Update(window_s, counters[DRIP_CTR_WINDOW_BYTES],
                                     duty.controller().on_fraction());
            t.has_value()) {
          session->SetSamplingMeanBytes(*t);
          log->debug(
              "snapshot: pid {} sampling every {} on average ({:.0f} bytes/s allocated)",
              options.pid, FormatBytes(*t),
              window_s > 0 ? static_cast<double>(counters[DRIP_CTR_WINDOW_BYTES]) / window_s : 0.0);
        }
      }
    }
    if (absl::Status s = session->Poll(20, on_alloc, on_free); !s.ok()) {
      stop_reason = "error";
      stop_detail = std::string(s.message());
      break;
    }
    const double after = MonotonicSeconds();
    if (after >= next_point_s) {
      // A slow poll (probes being attached) must not bunch points up: the next one is
      // at least half an interval away, and times strictly increase.
      const int64_t t_ms = UnixMs();
      if (t_ms > last_point_ms) take_point(t_ms, after - start_s);
      next_point_s = std::max(next_point_s + interval, after + interval / 2);
    }
    if (after - start_s >= duration) {
      // Short evidence extends the window (up to its limit) rather than ending in a
      // snapshot that cannot decide.
      if (mode == "attach") snapshot.sampling_mean_bytes = session->sampling_mean_bytes();
      if (shim_requested != 0) snapshot.sampling_mean_bytes = shim_requested;
      // Read after the poll: an agent stopped inside it lost allocations that the counters
      // read before it do not show.
      snapshot.lost_while_behind = session->ReadCounters()[DRIP_CTR_RINGBUF_FULL];
      if (duration < options.extend_up_to_seconds &&
          ShortOfEvidence(snapshot, tracker, mode, duty)) {
        const double longer = std::min(duration * 2, options.extend_up_to_seconds);
        log->info("snapshot: pid {} evidence short after {:.0f} s; extending to {:.0f} s",
                  options.pid, duration, longer);
        duration = longer;
        continue;
      }
      stop_reason = "duration";
      stop_detail = duration > options.duration_seconds
                        ? fmt::format(
                              "ran {:.0f} s: its {:.0f} s extended while the evidence "
                              "was short (up to {:.0f} s)",
                              duration, options.duration_seconds, options.extend_up_to_seconds)
                        : fmt::format("ran its {:.0f} s", options.duration_seconds);
    } else if (stop_requested != nullptr && stop_requested->load()) {
      stop_reason = "signal";
      stop_detail = "stopped on request (SIGTERM/SIGINT or agent shutdown)";
    } else if (session->target_execed()) {
      stop_reason = "target_exec";
      stop_detail = fmt::format("process {} ran exec after {:.1f} s", options.pid, after - start_s);
    } else if (!TargetAlive(options.proc_root, options.pid, start_ticks)) {
      stop_reason = "target_exited";
      stop_detail = fmt::format("process {} exited after {:.1f} s", options.pid, after - start_s);
    }
  }
  // The window ends now, not after the detach: removing dozens of uprobes can take
  // seconds. Sampling stops here; events still in the ring buffer carry their window.
  snapshot.end_ms = UnixMs();
  const double end_s = since_start();
  if (mode == "attach") duty.Finish(end_s);
  IgnoreError(session->Poll(0, on_alloc, on_free));
  // The window's end is always a point (with what was still in the ring buffer), so growth
  // up to the end is seen.
  if (last_point_ms < snapshot.end_ms - 50) take_point(snapshot.end_ms, end_s);
  const auto counters = session->ReadCounters();
  const uint64_t session_mean_bytes = session->sampling_mean_bytes();
  session.reset();  // detaches every probe

  if (stop_reason == "target_exec") {
    // exec(2) dropped the old address space with everything it held: the allocations
    // followed so far were freed without a free, and would all read as leaked.
    return absl::AbortedError(fmt::format(
        "snapshot: {}: its heap went with its old program, so nothing sampled can be judged; "
        "snapshot it again",
        stop_detail));
  }
  snapshot.stop_reason = stop_reason;
  snapshot.stop_detail = stop_detail;
  snapshot.dropped_events = counters[DRIP_CTR_RINGBUF_FULL] + counters[DRIP_CTR_RATE_LIMITED] +
                            counters[DRIP_CTR_TRACKED_FULL] + counters[DRIP_CTR_FREES_LOST];
  snapshot.lost_while_behind = counters[DRIP_CTR_RINGBUF_FULL];
  if (snapshot.lost_while_behind > 0) {
    log->warn(
        "snapshot: pid {}: {} sampled allocations lost while this agent fell behind (ring "
        "buffer full): the window has a gap",
        options.pid, snapshot.lost_while_behind);
  }
  snapshot.reused_address_frees =
      std::min<uint64_t>(counters[DRIP_CTR_FREES_BY_REUSE], snapshot.matched_frees);
  if (counters[DRIP_CTR_FREES_LOST] > 0) {
    log->warn("snapshot: pid {}: {} frees lost with the ring buffer full; their objects look live",
              options.pid, counters[DRIP_CTR_FREES_LOST]);
  }
  snapshot.duty_cycle.probe_hits =
      counters[DRIP_CTR_ALLOC_HITS] + counters[DRIP_CTR_RETURN_HITS] + counters[DRIP_CTR_FREE_HITS];
  if (mode == "attach") {
    snapshot.sampling_mean_bytes = session_mean_bytes;
    snapshot.duty_cycle.on_fraction = duty.controller().on_fraction();
    snapshot.duty_cycle.free_on_fraction = duty.controller().free_on_fraction();
    const double window_s = std::max(1e-3, (snapshot.end_ms - snapshot.start_ms) / 1000.0);
    snapshot.duty_cycle.estimated_cpu_fraction =
        static_cast<double>(snapshot.duty_cycle.probe_hits) *
        snapshot.duty_cycle.probe_hit_cost_ns / 1e9 / window_s;
  } else {
    snapshot.duty_cycle.on_fraction = 1;
    if (shim_requested != 0) snapshot.sampling_mean_bytes = shim_requested;
  }
  snapshot.stacks = tracker.StacksWithCohorts(snapshot.start_ms, snapshot.end_ms);
  log->info(
      "snapshot: pid {} done ({}: {}): {} stacks, {} sampled allocations, {} frees matched, "
      "{} dropped, {} probe hits, allocations sampled {:.0f}% of the time, frees watched "
      "{:.0f}% ({} found by address reuse)",
      options.pid, snapshot.stop_reason, snapshot.stop_detail, snapshot.stacks.size(),
      snapshot.sampled_allocs, snapshot.matched_frees, snapshot.dropped_events,
      snapshot.duty_cycle.probe_hits, snapshot.duty_cycle.on_fraction * 100,
      snapshot.duty_cycle.free_on_fraction * 100, snapshot.reused_address_frees);
  return snapshot;
}

}  // namespace drip::agent
