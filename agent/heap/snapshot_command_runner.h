// SnapshotCommandRunner: the agent's side of the fleet flow. The collector commands a
// heap snapshot of a suspect process over the stream; the runner checks that the agent's
// config allows it and that the process is still the instance the collector saw (same
// pid and start time), takes the snapshot on its own thread (one at a time, so the host
// never pays for two), and answers with the snapshot as drip.v1.HeapSnapshot in the
// result's payload, or with the reason it could not.
//
// Thread-safe: Submit may be called from the stream's reader thread.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "drip/v1/agent.pb.h"

namespace drip::agent {

struct SnapshotCommandOptions {
  bool enabled = true;
  double cpu_budget = 0.05;
  uint64_t sampling_mean_bytes = 0;  // attach mode's T; 0: sized from the allocation rate
  double max_duration_seconds = 600;
  // The largest stacks (by live and allocated bytes) kept in what is sent up, so the
  // result stays well within the collector's message limit.
  size_t max_stacks_sent = 500;
  std::string host;
  std::string proc_root = "/proc";
};

class SnapshotCommandRunner {
 public:
  using Reply = std::function<void(drip::v1::CommandResult)>;

  SnapshotCommandRunner(SnapshotCommandOptions options, Reply reply);
  ~SnapshotCommandRunner();  // stops a running snapshot and joins
  SnapshotCommandRunner(const SnapshotCommandRunner&) = delete;
  SnapshotCommandRunner& operator=(const SnapshotCommandRunner&) = delete;

  // Starts the command or answers at once why not (disabled, busy, bad command).
  void Submit(const drip::v1::Command& command);

 private:
  void Run(drip::v1::Command command);
  void Fail(const std::string& id, const std::string& error);

  const SnapshotCommandOptions options_;
  const Reply reply_;
  std::mutex mu_;
  std::thread worker_;
  bool busy_ = false;
  std::atomic<bool> stop_{false};
};

}  // namespace drip::agent
