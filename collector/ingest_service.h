// IngestService: drip.v1.AgentService on gRPC's callback API. Each Connect call gets an
// AgentStreamReactor (agent_stream_reactor.h), which does the work; the service owns
// what the streams share and keeps track of them so that shutdown can end every stream
// cleanly rather than leave it to gRPC's deadline.
//
// Thread-safe. Must outlive the grpc::Server it is registered with (the server's
// Shutdown waits for every stream to end).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <set>

#include "collector/agent_stream_reactor.h"
#include "collector/collector_metrics.h"
#include "collector/connected_hosts.h"
#include "collector/sample_validator.h"
#include "collector/storage/series_store.h"
#include "collector/storage_health.h"
#include "collector/worker_pool.h"
#include "common/clock.h"
#include "drip/v1/agent.grpc.pb.h"

namespace drip::collector {

class IngestService final : public drip::v1::AgentService::CallbackService {
 public:
  // Every pointer in `env` must outlive the service; `writers` runs the store calls.
  // The service sets env.on_destroy itself.
  explicit IngestService(AgentStreamEnv env);
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

  AgentStreamEnv env_;
  mutable std::mutex mu_;
  std::condition_variable forgotten_;  // a reactor left streams_
  bool shutting_down_ = false;
  std::set<AgentStreamReactor*> streams_;
};

}  // namespace drip::collector
