#include "agent/bpf_task_monitor.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>

#include "agent/libbpf_logging.h"
#include "common/daemon/logging.h"
#include "fmt/format.h"
#include "task_memory.skel.h"

namespace drip::agent {
namespace {}  // namespace

absl::StatusOr<std::unique_ptr<BpfTaskMonitor>> BpfTaskMonitor::Open(const Options& options) {
  RouteLibbpfLogs();
  std::unique_ptr<BpfTaskMonitor> monitor(new BpfTaskMonitor());
  monitor->skel_ = task_memory_bpf__open();
  if (monitor->skel_ == nullptr) {
    return absl::UnavailableError(
        fmt::format("BPF: cannot open the task_memory programs: {}", LibbpfErrorText(errno)));
  }
  if (int err = bpf_map__set_max_entries(monitor->skel_->maps.task_events,
                                         static_cast<uint32_t>(options.ring_buffer_bytes));
      err != 0) {
    return absl::InvalidArgumentError(fmt::format("BPF: ring buffer size {}: {}",
                                                  options.ring_buffer_bytes, LibbpfErrorText(err)));
  }
  if (int err = task_memory_bpf__load(monitor->skel_); err != 0) {
    return absl::UnavailableError(fmt::format(
        "BPF: the kernel refused to load the task_memory programs: {} (needs BTF, "
        "CAP_BPF+CAP_PERFMON or root, and Linux 5.8+; log.level: debug shows libbpf's log)",
        LibbpfErrorText(err)));
  }
  if (int err = task_memory_bpf__attach(monitor->skel_); err != 0) {
    return absl::UnavailableError(
        fmt::format("BPF: cannot attach the task iterator and sched_process tracepoints: {}",
                    LibbpfErrorText(err)));
  }
  monitor->events_ = ring_buffer__new(
      bpf_map__fd(monitor->skel_->maps.task_events),
      [](void* ctx, void* data, size_t size) -> int {
        auto* self = static_cast<BpfTaskMonitor*>(ctx);
        if (size < sizeof(drip_task_event) || self->handler_ == nullptr) return 0;
        drip_task_event event;
        std::memcpy(&event, data, sizeof(event));
        (*self->handler_)(event);
        return 0;
      },
      monitor.get(), nullptr);
  if (monitor->events_ == nullptr) {
    return absl::UnavailableError(
        fmt::format("BPF: cannot map the event ring buffer: {}", LibbpfErrorText(errno)));
  }
  return monitor;
}

absl::Status BpfTaskMonitor::CheckObjectLoads(const std::string& object_path) {
  RouteLibbpfLogs();
  bpf_object* object = bpf_object__open_file(object_path.c_str(), nullptr);
  if (object == nullptr) {
    return absl::NotFoundError(
        fmt::format("{}: cannot open: {}", object_path, LibbpfErrorText(errno)));
  }
  const int err = bpf_object__load(object);
  bpf_object__close(object);
  if (err != 0) {
    return absl::UnavailableError(
        fmt::format("{}: load failed: {}", object_path, LibbpfErrorText(err)));
  }
  return absl::OkStatus();
}

BpfTaskMonitor::~BpfTaskMonitor() {
  ring_buffer__free(events_);
  task_memory_bpf__destroy(skel_);
}

absl::Status BpfTaskMonitor::ReadTasks(std::vector<drip_task_record>* out) {
  out->clear();
  const int iter_fd = bpf_iter_create(bpf_link__fd(skel_->links.dump_task_memory));
  if (iter_fd < 0) {
    return absl::InternalError(
        fmt::format("BPF: cannot create a task iterator: {}", LibbpfErrorText(errno)));
  }
  // The kernel fills at most a page of records per read() for seq_file iterators; a
  // bigger buffer just saves calls when it does more.
  read_buffer_.resize(64 * 1024);
  std::string pending;
  for (;;) {
    const ssize_t n = read(iter_fd, read_buffer_.data(), read_buffer_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(iter_fd);
      return absl::InternalError(
          fmt::format("BPF: reading the task iterator: {}", LibbpfErrorText(err)));
    }
    if (n == 0) break;
    pending.append(read_buffer_.data(), static_cast<size_t>(n));
    const size_t whole = pending.size() / sizeof(drip_task_record);
    const size_t first = out->size();
    out->resize(first + whole);
    std::memcpy(out->data() + first, pending.data(), whole * sizeof(drip_task_record));
    pending.erase(0, whole * sizeof(drip_task_record));
  }
  close(iter_fd);
  return absl::OkStatus();
}

absl::StatusOr<size_t> BpfTaskMonitor::DrainEvents(
    const std::function<void(const drip_task_event&)>& handle) {
  handler_ = &handle;
  const int n = ring_buffer__consume(events_);
  handler_ = nullptr;
  if (n < 0) {
    return absl::InternalError(
        fmt::format("BPF: reading the event ring buffer: {}", LibbpfErrorText(n)));
  }
  return static_cast<size_t>(n);
}

uint64_t BpfTaskMonitor::lost_events() const {
  return __atomic_load_n(&skel_->bss->lost_events, __ATOMIC_RELAXED);
}

}  // namespace drip::agent
