#include "agent/bpf_task_monitor.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>

#include "common/logging.h"
#include "fmt/format.h"
#include "task_memory.skel.h"

namespace drip::agent {
namespace {

// libbpf explains a refused program (verifier log, missing BTF) through its print
// callback; routed to spdlog at debug so `--log-level debug` shows the kernel's reasons.
int LibbpfPrint(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[1024];
  int n = vsnprintf(line, sizeof(line), format, args);
  std::string_view text(line,
                        n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof(line) - 1) : 0);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  Logger("agent")->debug("libbpf: {}", text);
  return 0;
}

std::string ErrnoText(int err) { return std::strerror(err < 0 ? -err : err); }

}  // namespace

absl::StatusOr<std::unique_ptr<BpfTaskMonitor>> BpfTaskMonitor::Open(const Options& options) {
  libbpf_set_print(LibbpfPrint);
  std::unique_ptr<BpfTaskMonitor> monitor(new BpfTaskMonitor());
  monitor->skel_ = task_memory_bpf__open();
  if (monitor->skel_ == nullptr) {
    return absl::UnavailableError(
        fmt::format("BPF: cannot open the task_memory programs: {}", ErrnoText(errno)));
  }
  if (int err = bpf_map__set_max_entries(monitor->skel_->maps.task_events,
                                         static_cast<uint32_t>(options.ring_buffer_bytes));
      err != 0) {
    return absl::InvalidArgumentError(
        fmt::format("BPF: ring buffer size {}: {}", options.ring_buffer_bytes, ErrnoText(err)));
  }
  if (int err = task_memory_bpf__load(monitor->skel_); err != 0) {
    return absl::UnavailableError(fmt::format(
        "BPF: the kernel refused to load the task_memory programs: {} (needs BTF, "
        "CAP_BPF+CAP_PERFMON or root, and Linux 5.8+; log.level: debug shows libbpf's log)",
        ErrnoText(err)));
  }
  if (int err = task_memory_bpf__attach(monitor->skel_); err != 0) {
    return absl::UnavailableError(fmt::format(
        "BPF: cannot attach the task iterator and sched_process tracepoints: {}", ErrnoText(err)));
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
        fmt::format("BPF: cannot map the event ring buffer: {}", ErrnoText(errno)));
  }
  return monitor;
}

absl::Status BpfTaskMonitor::CheckObjectLoads(const std::string& object_path) {
  libbpf_set_print(LibbpfPrint);
  bpf_object* object = bpf_object__open_file(object_path.c_str(), nullptr);
  if (object == nullptr) {
    return absl::NotFoundError(fmt::format("{}: cannot open: {}", object_path, ErrnoText(errno)));
  }
  const int err = bpf_object__load(object);
  bpf_object__close(object);
  if (err != 0) {
    return absl::UnavailableError(fmt::format("{}: load failed: {}", object_path, ErrnoText(err)));
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
        fmt::format("BPF: cannot create a task iterator: {}", ErrnoText(errno)));
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
      return absl::InternalError(fmt::format("BPF: reading the task iterator: {}", ErrnoText(err)));
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
    return absl::InternalError(fmt::format("BPF: reading the event ring buffer: {}", ErrnoText(n)));
  }
  return static_cast<size_t>(n);
}

uint64_t BpfTaskMonitor::lost_events() const {
  return __atomic_load_n(&skel_->bss->lost_events, __ATOMIC_RELAXED);
}

}  // namespace drip::agent
