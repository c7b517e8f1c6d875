// SyntheticAgent: one host's agent as a test drives it — the agent's own BatchBuffer and
// CollectorStream (so reconnects, resends, redirects and failover are the real agent's),
// fed a batch every 100 ms of two samples: a flat component ("proc:crash-steady") and, on
// a leaking host, one growing 4 MiB/s ("proc:crash-leaker"). Every batch's timestamp is
// kept, so that what was acknowledged can be checked against what the collectors store.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/batch_buffer.h"
#include "agent/collector_stream.h"

namespace drip::testing {

class SyntheticAgent {
 public:
  // Streams to `address`, then to the `alternates` in turn when it cannot be reached (the
  // agent's `collectors:` list); follows redirects to any collector on 127.0.0.1.
  SyntheticAgent(std::string host, std::string address, bool leaking,
                 std::vector<std::string> alternates = {});
  ~SyntheticAgent();  // Stop()

  void StopFeeding();
  void Stop();

  // Every batch up to this sequence was acknowledged (the buffer holds a contiguous,
  // never-dropped suffix of what was pushed).
  uint64_t AckedSequence() const;
  uint64_t Buffered() const { return buffer_.stats().buffered_batches; }

  // Timestamps of the batches up to `sequence`.
  std::vector<int64_t> TimestampsUpTo(uint64_t sequence) const;

  const std::string& host() const { return host_; }

 private:
  void Feed();

  const std::string host_;
  const bool leaking_;
  agent::BatchBuffer buffer_;
  std::unique_ptr<agent::CollectorStream> stream_;
  mutable std::mutex mu_;
  std::map<uint64_t, int64_t> timestamps_;
  std::atomic<bool> stop_feeding_{false};
  std::thread feeder_;
};

}  // namespace drip::testing
