// IngestService: drip.v1.AgentService on gRPC's callback API. Each Connect call gets an
// AgentStreamReactor (agent_stream_reactor.h) around an AgentSession (agent_session.h),
// which do the work; the service owns what the streams share — the storage workers that
// run every session step among it — and keeps track of the streams so that shutdown can
// end each one cleanly rather than leave it to gRPC's deadline.
//
// Thread-safe. Must outlive the grpc::Server it is registered with (the server's
// Shutdown waits for every stream to end).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>

#include "collector/collector_metrics.h"
#include "collector/ingest/agent_session.h"
#include "collector/ingest/agent_stream_reactor.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/loop_thread.h"
#include "collector/worker_pool.h"
#include "drip/v1/agent.grpc.pb.h"

namespace drip::collector {

struct IngestOptions {
  size_t write_threads = 4;  // storage.write_threads
  // ingest.max_samples_per_second_per_host and its burst (0: no limit).
  double max_samples_per_second = 0;
  double burst_samples = 0;
  // ingest.hello_timeout and ingest.max_streams_awaiting_hello: a stream must say hello
  // (and so authenticate its host) this soon after connecting, and at most this many
  // streams may be waiting to (0: no limit on either).
  std::chrono::milliseconds hello_timeout{0};
  int64_t max_streams_awaiting_hello = 0;
};

class IngestService final : public drip::v1::AgentService::CallbackService {
 public:
  // Every pointer in `session_parts`, and `hosts` and `metrics`, must outlive the service.
  IngestService(const IngestOptions& options, const AgentSessionParts& session_parts,
                ConnectedHosts* hosts, CollectorMetrics* metrics);
  // Runs the storage tasks still queued, then waits for the last streams to go.
  ~IngestService() override;

  grpc::ServerBidiReactor<drip::v1::AgentMessage, drip::v1::CollectorMessage>* Connect(
      grpc::CallbackServerContext* context) override;

  // Ends every open stream with UNAVAILABLE (after its in-flight batch is stored and
  // acked) and refuses new ones the same way. Call before grpc::Server::Shutdown.
  void FinishAllStreams();

  // Streams whose reactor still exists (including ones finishing).
  size_t open_streams() const;

 private:
  void Forget(AgentStreamReactor* reactor);
  // Closes the streams that have not said hello within the timeout; the sweep's round.
  LoopThread::Duration CloseSilentStreams();

  const AgentSessionParts session_parts_;
  WorkerPool writers_;
  HostRateLimits rate_limits_;  // outlives every stream: a reconnect finds its host's bucket
  AgentStreamTransport transport_;
  const std::chrono::milliseconds hello_timeout_;
  const int64_t max_awaiting_hello_;
  mutable std::mutex mu_;
  std::condition_variable forgotten_;  // a reactor left streams_
  bool shutting_down_ = false;
  std::set<AgentStreamReactor*> streams_;
  LoopThread hello_sweep_;  // last: stopped first, while everything it reads is alive
};

}  // namespace drip::collector
