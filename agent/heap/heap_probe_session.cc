#include "agent/heap/heap_probe_session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <utility>

#include "agent/libbpf_logging.h"
#include "agent/proc_files.h"
#include "agent/proc_maps.h"
#include "common/base/status_macros.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"
// bpftool declares the skeleton's kconfig fields (libbpf's usdt.bpf.h reads
// LINUX_HAS_BPF_COOKIE) with C's _Bool, which GCC takes in C++ as an extension and clang
// does not.
#ifdef __clang__
#define _Bool bool
#endif
#include "heap_snapshot.skel.h"
#ifdef __clang__
#undef _Bool
#endif

// A function of the agent's own that the probe-cost measurement attaches a uprobe to.
// noinline and used, so that it exists, is called for real and is not folded away.
extern "C" __attribute__((noinline, used)) int drip_uprobe_calibration_target(int x) {
  asm volatile("" : "+r"(x));
  return x + 1;
}

namespace drip::agent {
namespace {

void DestroyLinks(std::vector<bpf_link*>* links) {
  for (bpf_link* link : *links) bpf_link__destroy(link);
  links->clear();
}

// The calling thread's CPU time: a probe hit is charged to the thread that traps, and
// unlike wall time it does not count the time the thread waits for a busy CPU.
int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The file offset of a function of this very binary, for the calibration uprobe.
absl::StatusOr<uint64_t> SelfFunctionOffset(const void* function) {
  // The offset within the executable's file: the address minus the mapping's start plus
  // the mapping's file offset, from the agent's own maps.
  std::string maps;
  RETURN_IF_ERROR(ReadProcFile("/proc/self/maps", &maps));
  const auto address = reinterpret_cast<uint64_t>(function);
  for (const MapsEntry& entry : ParseProcMaps(maps)) {
    if (address >= entry.start && address < entry.end) return address - entry.start + entry.offset;
  }
  return absl::NotFoundError("calibration target is not mapped");
}

}  // namespace

absl::StatusOr<std::unique_ptr<HeapProbeSession>> HeapProbeSession::Open(const Options& options) {
  RouteLibbpfLogs();
  std::unique_ptr<HeapProbeSession> session(new HeapProbeSession());
  session->options_ = options;
  session->skel_ = heap_snapshot_bpf__open();
  if (session->skel_ == nullptr) {
    return absl::UnavailableError(
        fmt::format("BPF: cannot open the heap snapshot programs: {}", LibbpfErrorText(errno)));
  }
  auto* rodata = session->skel_->rodata;
  rodata->target_tgid = static_cast<uint32_t>(options.pid);
  rodata->max_stack_bytes = options.max_stack_bytes;
  rodata->max_events_per_cpu_per_s = std::max<uint64_t>(1, options.max_events_per_second);
  if (int err =
          bpf_map__set_max_entries(session->skel_->maps.heap_events, options.ring_buffer_bytes);
      err != 0) {
    return absl::InvalidArgumentError(fmt::format("BPF: heap event ring buffer of {} bytes: {}",
                                                  options.ring_buffer_bytes, LibbpfErrorText(err)));
  }
  if (int err = bpf_map__set_max_entries(session->skel_->maps.tracked, options.max_tracked);
      err != 0) {
    return absl::InvalidArgumentError(
        fmt::format("BPF: {} tracked allocations: {}", options.max_tracked, LibbpfErrorText(err)));
  }
  if (int err = heap_snapshot_bpf__load(session->skel_); err != 0) {
    return absl::UnavailableError(
        fmt::format("BPF: the kernel refused the heap snapshot programs: {} (needs root or "
                    "CAP_BPF+CAP_PERFMON, uprobes and BTF; log.level: debug shows libbpf's log)",
                    LibbpfErrorText(err)));
  }
  session->SetSamplingMeanBytes(options.sampling_mean_bytes);
  // The countdowns: quantiles of an exponential distribution of mean 1 (in 1/65536ths,
  // scaled by T in the kernel), so that a uniformly drawn entry is an exponential draw
  // (to within 1/1024 of the distribution).
  const int table_fd = bpf_map__fd(session->skel_->maps.exp_table);
  for (uint32_t i = 0; i < DRIP_EXP_TABLE_SIZE; ++i) {
    const double u = (i + 0.5) / DRIP_EXP_TABLE_SIZE;
    uint64_t value = static_cast<uint64_t>(std::max(1.0, -std::log(u) * 65536.0));
    if (bpf_map_update_elem(table_fd, &i, &value, BPF_ANY) != 0) {
      return absl::UnavailableError(fmt::format(
          "BPF: cannot fill the sampling table (entry {}): {}", i, LibbpfErrorText(errno)));
    }
  }
  // Watched from the start, before any probe: a target that execs mid-snapshot would
  // otherwise have the allocations followed so far read as never freed.
  session->exec_link_ = bpf_program__attach(session->skel_->progs.target_exec);
  if (session->exec_link_ == nullptr) {
    return absl::UnavailableError(fmt::format(
        "BPF: cannot watch the target's exec (sched_process_exec): {}", LibbpfErrorText(errno)));
  }
  session->events_ = ring_buffer__new(bpf_map__fd(session->skel_->maps.heap_events),
                                      &HeapProbeSession::OnEvent, session.get(), nullptr);
  if (session->events_ == nullptr) {
    return absl::UnavailableError(
        fmt::format("BPF: cannot map the heap event ring buffer: {}", LibbpfErrorText(errno)));
  }
  return session;
}

HeapProbeSession::~HeapProbeSession() {
  if (skel_ != nullptr && skel_->bss != nullptr) SetSamplingWindow(0);
  WaitForDetach();
  for (auto& links : alloc_links_) {
    for (bpf_link*& link : links) {
      if (link != nullptr) bpf_link__destroy(link);
      link = nullptr;
    }
  }
  DestroyLinks(&free_links_);
  DestroyLinks(&shim_links_);
  if (exec_link_ != nullptr) bpf_link__destroy(exec_link_);
  ring_buffer__free(events_);
  heap_snapshot_bpf__destroy(skel_);
}

absl::StatusOr<double> HeapProbeSession::MeasureProbeHitCost() {
  constexpr int kCalls = 20000;
  auto run = [] {
    int x = 0;
    const int64_t start = ThreadCpuNs();
    for (int i = 0; i < kCalls; ++i) x = drip_uprobe_calibration_target(x);
    asm volatile("" : "+r"(x));
    return ThreadCpuNs() - start;
  };
  auto offset = SelfFunctionOffset(reinterpret_cast<const void*>(&drip_uprobe_calibration_target));
  if (!offset.ok()) return offset.status();
  const int64_t bare = run();
  bpf_link* link = bpf_program__attach_uprobe(skel_->progs.calibrate, false, 0, "/proc/self/exe",
                                              static_cast<size_t>(*offset));
  if (link == nullptr) {
    return absl::UnavailableError(
        fmt::format("BPF: cannot attach the calibration uprobe: {}", LibbpfErrorText(errno)));
  }
  // The best of three: the figure is a property of the host, noise only adds to it.
  int64_t probed = run();
  for (int i = 0; i < 2; ++i) probed = std::min(probed, run());
  bpf_link__destroy(link);
  return std::max(100.0, static_cast<double>(probed - bare) / kCalls);
}

absl::Status HeapProbeSession::AttachFrees(const AllocatorProbePlan& plan) {
  WaitForDetach();
  if (!free_links_.empty()) return absl::OkStatus();
  for (const ProbeSite& site : plan.frees) {
    LIBBPF_OPTS(bpf_uprobe_opts, opts);
    bpf_link* link = bpf_program__attach_uprobe_opts(skel_->progs.free_enter, options_.pid,
                                                     site.open_path.c_str(), site.offset, &opts);
    if (link == nullptr) {
      return absl::UnavailableError(fmt::format("BPF: cannot probe {} in {}: {}", site.function,
                                                site.module, LibbpfErrorText(errno)));
    }
    free_links_.push_back(link);
  }
  return absl::OkStatus();
}

absl::Status HeapProbeSession::AttachAllocationProbes(const AllocatorProbePlan& plan) {
  WaitForDetach();
  if (plan.allocs.size() > DRIP_MAX_ALLOC_SITES) {
    return absl::InternalError(fmt::format("{} allocation sites, at most {} can be probed",
                                           plan.allocs.size(), DRIP_MAX_ALLOC_SITES));
  }
  alloc_links_.resize(plan.allocs.size(), {nullptr, nullptr});
  for (size_t i = 0; i < plan.allocs.size(); ++i) {
    if (alloc_links_[i][0] != nullptr) continue;  // kept attached
    const ProbeSite& site = plan.allocs[i];
    const uint64_t cookie = site.alloc_kind | (static_cast<uint64_t>(i) << DRIP_COOKIE_SITE_SHIFT);
    LIBBPF_OPTS(bpf_uprobe_opts, entry_opts, .bpf_cookie = cookie);
    bpf_link* entry = bpf_program__attach_uprobe_opts(
        skel_->progs.alloc_enter, options_.pid, site.open_path.c_str(), site.offset, &entry_opts);
    LIBBPF_OPTS(bpf_uprobe_opts, return_opts, .retprobe = true);
    bpf_link* ret = entry == nullptr ? nullptr
                                     : bpf_program__attach_uprobe_opts(
                                           skel_->progs.alloc_return, options_.pid,
                                           site.open_path.c_str(), site.offset, &return_opts);
    if (entry == nullptr || ret == nullptr) {
      const int err = errno;
      if (entry != nullptr) bpf_link__destroy(entry);
      DetachAllocationProbes();
      return absl::UnavailableError(fmt::format("BPF: cannot probe {} in {}: {}", site.function,
                                                site.module, LibbpfErrorText(err)));
    }
    alloc_links_[i] = {entry, ret};
  }
  return absl::OkStatus();
}

void HeapProbeSession::DetachAllocationProbes(const std::vector<bool>& keep) {
  WaitForDetach();
  std::vector<bpf_link*> doomed;
  for (size_t i = 0; i < alloc_links_.size(); ++i) {
    if (i < keep.size() && keep[i]) continue;
    for (bpf_link*& link : alloc_links_[i]) {
      if (link != nullptr) doomed.push_back(link);
      link = nullptr;
    }
  }
  DetachInBackground(std::move(doomed));
}

void HeapProbeSession::DetachFrees() {
  WaitForDetach();
  DetachInBackground(std::exchange(free_links_, {}));
}

void HeapProbeSession::DetachInBackground(std::vector<bpf_link*> doomed) {
  if (doomed.empty()) return;
  detach_done_ = false;
  detach_thread_ = std::thread([this, doomed = std::move(doomed)]() mutable {
    DestroyLinks(&doomed);
    detach_done_ = true;
  });
}

bool HeapProbeSession::detaching() const { return !detach_done_.load(); }

void HeapProbeSession::WaitForDetach() {
  if (detach_thread_.joinable()) detach_thread_.join();
}

void HeapProbeSession::SetSamplingWindow(uint32_t window) {
  __atomic_store_n(&skel_->bss->sampling_window, window, __ATOMIC_SEQ_CST);
}

void HeapProbeSession::SetSamplingMeanBytes(uint64_t mean_bytes) {
  mean_bytes = std::clamp<uint64_t>(mean_bytes, 1, 0xffffffffULL);
  __atomic_store_n(&skel_->bss->sampling_mean_bytes, mean_bytes, __ATOMIC_SEQ_CST);
  sampling_mean_bytes_ = mean_bytes;
}

absl::Status HeapProbeSession::AttachShim(const std::string& shim_path) {
  // Frees first: an allocation tracked before its free probe is attached is freed unseen
  // and looks leaked for the whole window (attaching a probe's sites takes a while on a
  // loaded host).
  for (auto [prog, name] :
       {std::pair{skel_->progs.shim_free, "free"}, std::pair{skel_->progs.shim_alloc, "alloc"}}) {
    bpf_link* link =
        bpf_program__attach_usdt(prog, options_.pid, shim_path.c_str(), "drip", name, nullptr);
    if (link == nullptr) {
      return absl::UnavailableError(fmt::format("BPF: cannot attach to USDT drip:{} in {}: {}",
                                                name, shim_path, LibbpfErrorText(errno)));
    }
    shim_links_.push_back(link);
  }
  return absl::OkStatus();
}

int HeapProbeSession::OnEvent(void* ctx, void* data, size_t size) {
  auto* self = static_cast<HeapProbeSession*>(ctx);
  if (size < sizeof(uint32_t)) return 0;
  uint32_t kind = 0;
  std::memcpy(&kind, data, sizeof(kind));
  if (kind == DRIP_HEAP_ALLOC && size >= sizeof(drip_heap_alloc_event)) {
    (*self->on_alloc_)(*static_cast<const drip_heap_alloc_event*>(data));
  } else if (kind == DRIP_HEAP_FREE && size >= sizeof(drip_heap_free_event)) {
    (*self->on_free_)(*static_cast<const drip_heap_free_event*>(data));
  }
  return 0;
}

absl::Status HeapProbeSession::Poll(int timeout_ms, const AllocHandler& on_alloc,
                                    const FreeHandler& on_free) {
  on_alloc_ = &on_alloc;
  on_free_ = &on_free;
  // Events are submitted without a wakeup (only a ring past half full forces one), so
  // the wait runs its course and what arrived meanwhile is read after it.
  int n = ring_buffer__poll(events_, timeout_ms);
  if (n >= 0 || n == -EINTR) n = ring_buffer__consume(events_);
  on_alloc_ = nullptr;
  on_free_ = nullptr;
  if (n < 0 && n != -EINTR) {
    return absl::InternalError(fmt::format("BPF: polling heap events: {}", LibbpfErrorText(n)));
  }
  return absl::OkStatus();
}

std::vector<uint64_t> HeapProbeSession::ReadSiteHits() const {
  std::vector<uint64_t> totals(alloc_links_.size(), 0);
  const int fd = bpf_map__fd(skel_->maps.site_hits);
  const int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> per_cpu(static_cast<size_t>(std::max(cpus, 1)));
  for (uint32_t i = 0; i < totals.size(); ++i) {
    if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
    for (uint64_t v : per_cpu) totals[i] += v;
  }
  return totals;
}

bool HeapProbeSession::target_execed() const {
  return __atomic_load_n(&skel_->bss->target_execs, __ATOMIC_RELAXED) > 0;
}

HeapProbeSession::Counters HeapProbeSession::ReadCounters() const {
  Counters totals{};
  const int fd = bpf_map__fd(skel_->maps.heap_counters);
  const int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> per_cpu(static_cast<size_t>(std::max(cpus, 1)));
  for (uint32_t i = 0; i < DRIP_CTR_COUNT; ++i) {
    if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
    for (uint64_t v : per_cpu) totals[i] += v;
  }
  return totals;
}

}  // namespace drip::agent
