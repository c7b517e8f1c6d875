// BpfTaskMonitor: owns the loaded task_memory BPF programs (agent/bpf/task_memory.bpf.c)
// and is the only code that talks to them. Open() loads and attaches everything or
// fails with a message that says which step the kernel refused and why — the agent logs
// it once and falls back to /proc. Detaches on destruction.
//
// Two outputs: ReadTasks() runs the task iterator (one record per process with an mm,
// in one read() loop) and DrainEvents() hands over the fork/exec/exit events that the
// tracepoints queued in the ring buffer since the last drain. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/bpf/task_memory.h"

struct task_memory_bpf;
struct ring_buffer;

namespace drip::agent {

class BpfTaskMonitor {
 public:
  struct Options {
    // Ring buffer for lifecycle events, a power of two of at least a page. 1 MiB holds
    // about 10,000 events: a fork storm of that size between two passes still fits.
    size_t ring_buffer_bytes = 1 << 20;
  };

  static absl::StatusOr<std::unique_ptr<BpfTaskMonitor>> Open(const Options& options);
  // Opens and loads an object file's programs without attaching them: for the test
  // that proves an object built against the fallback vmlinux.h loads on this kernel.
  static absl::Status CheckObjectLoads(const std::string& object_path);

  ~BpfTaskMonitor();
  BpfTaskMonitor(const BpfTaskMonitor&) = delete;
  BpfTaskMonitor& operator=(const BpfTaskMonitor&) = delete;

  // Replaces `out` with one record per process, in tgid order.
  absl::Status ReadTasks(std::vector<drip_task_record>* out);

  // Calls `handle` for each queued event, oldest first; returns how many.
  absl::StatusOr<size_t> DrainEvents(const std::function<void(const drip_task_event&)>& handle);

  // Events the kernel side dropped because the ring buffer was full, since Open().
  uint64_t lost_events() const;

 private:
  BpfTaskMonitor() = default;

  task_memory_bpf* skel_ = nullptr;
  ring_buffer* events_ = nullptr;
  const std::function<void(const drip_task_event&)>* handler_ = nullptr;  // during a drain
  std::string read_buffer_;
};

}  // namespace drip::agent
