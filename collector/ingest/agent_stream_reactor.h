// AgentStreamReactor: one agent's Connect stream (drip.v1.AgentService), from Hello to
// the final status: gRPC, threads and flow control around an AgentSession
// (agent_session.h), which decides what each message means. The wire protocol is
// specified at the top of agent.proto; what this collector does on each step is in
// docs/collector.md ("Wire behaviour").
//
// Flow control: the reactor reads one message, hands it to a storage worker, and reads
// the next only once that message is durable (or refused). A slow disk therefore slows
// the agents, which buffer, instead of growing queues in the collector; at most one
// message per stream is held in memory, and a stream never has more than one task in
// the writers' queue, so one host's flood cannot starve the others. Past the per-host
// rate limit the next read waits on an alarm for as long as the host's token bucket
// (host_rate_limits.h: it outlives the stream) is in debt: HTTP/2 flow control then holds the
// flooding agent back, and it buffers.
//
// Outbound: one gRPC write at a time. Welcome and commands queue in order; acks
// coalesce into the highest durable sequence while a write is in flight, since an ack
// covers every batch below it.
//
// Ending: a refusal, a store failure, shutdown or the agent's half-close "close" the
// stream: queued messages are sent first, then the status. Supersession, cancellation
// and a failed write finish it at once. Exactly one Finish either way.
//
// Threading and lifetime: gRPC reactions, a storage worker and other streams (via
// ConnectedHosts) call in concurrently; all state is guarded by mu_, and gRPC
// operations are started under it (they never run reactions inline). The reactor
// deletes itself once gRPC's OnDone has run and no storage task is using it; before
// that it unregisters from ConnectedHosts and from its owner (transport.on_destroy).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "collector/collector_metrics.h"
#include "collector/ingest/agent_session.h"
#include "collector/ingest/connected_hosts.h"
#include "collector/ingest/host_rate_limits.h"
#include "collector/worker_pool.h"
#include "common/rpc/agent_stream_metadata.h"
#include "drip/v1/agent.grpc.pb.h"
#include "grpcpp/alarm.h"
#include "grpcpp/grpcpp.h"

namespace drip::collector {

class AgentStreamReactor;

// What every stream shares besides its session's parts; owned by IngestService, outlives
// every stream.
struct AgentStreamTransport {
  WorkerPool* writers = nullptr;        // runs every session step (they call the store)
  ConnectedHosts* hosts = nullptr;      // how commands find the host's stream
  CollectorMetrics* metrics = nullptr;  // stream outcomes, refusals, throttling
  // ingest.max_samples_per_second_per_host and its burst (0: no limit): see
  // token_bucket.h and "Flow control" above; one bucket per host (may be null: no limit).
  double max_samples_per_second = 0;
  HostRateLimits* rate_limits = nullptr;
  // Runs once, from whichever thread ends the reactor, just before it deletes itself.
  std::function<void(AgentStreamReactor*)> on_destroy;
};

class AgentStreamReactor final
    : public grpc::ServerBidiReactor<drip::v1::AgentMessage, drip::v1::CollectorMessage>,
      public ConnectedHosts::Stream {
 public:
  // `context`, `session_parts` and `transport` must outlive the reactor (gRPC guarantees
  // the first until OnDone). Reads nothing until Start().
  AgentStreamReactor(grpc::CallbackServerContext* context, const AgentSessionParts* session_parts,
                     const AgentStreamTransport* transport);

  // Starts reading the first message if the caller may stream as an agent at all; else
  // refuses the stream (counted) without reading a byte of it. Returns whether it reads.
  // Call once, before any other entry point.
  bool Start();

  // Ends the stream with UNAVAILABLE once the message being stored and every queued
  // ack are out, so that the agent reconnects to a collector that is up. For shutdown.
  void FinishForShutdown();

  // Ends the stream at once with RESOURCE_EXHAUSTED: too many streams have not said hello
  // yet. For IngestService::Connect, before any reaction ran.
  void RefuseAwaitingHello(int64_t limit);

  // Ends the stream with UNAUTHENTICATED if it connected before `cutoff` and has not said
  // hello (nor is one being handled): a connection that never authenticates must not hold
  // the collector's memory. Returns whether it did.
  bool CloseIfNoHelloSince(std::chrono::steady_clock::time_point cutoff);

  // ConnectedHosts::Stream.
  void Supersede() override;
  bool IsOpen() override;
  bool SendCommand(const drip::v1::Command& command) override;
  void MoveTo(const std::string& owner_name, const std::string& owner_address) override;

  // gRPC reactions.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  ~AgentStreamReactor() override = default;  // only DestroySelf() deletes

  // The storage task: runs on transport_->writers while no read is outstanding, so in_
  // is stable; hands in_ to the session and acts on its reply.
  void HandleMessage(size_t wire_bytes);
  // Registers the host's stream in ConnectedHosts after an accepted hello.
  void RegisterHost(const std::string& host);
  // Ends a storage task: runs `then` under mu_, then deletes the reactor if gRPC
  // finished with it meanwhile.
  void EndStorageTask(const std::function<void()>& then);
  void DestroySelf();

  // Hands the current message (in_) to a storage task.
  void SubmitLocked(std::function<void()> task);
  void StartReadLocked();
  void FlushLocked();
  void CloseLocked(grpc::Status status, std::string_view outcome);
  void MaybeFinishLocked();
  void FinishNowLocked(grpc::Status status, std::string_view outcome);
  // Ends the stream with `status`, naming the host's owner for the agent to go to: at the
  // hello (SessionReply::kRedirect) or when a joining member takes the host (MoveTo).
  void SendToOwnerLocked(grpc::Status status, const std::string& owner_address);
  void RejectLocked(const Verdict& verdict, std::optional<uint64_t> sequence);
  // Reads the next message now, or after the rate limit's wait for `samples` more.
  void ReadNextLocked(size_t samples);
  void OnThrottleDone(bool fired);
  void SetOutcomeLocked(std::string_view outcome);
  // Takes this stream out of drip_agent_streams_awaiting_hello, once.
  void StopAwaitingHelloLocked();

  grpc::CallbackServerContext* const context_;
  const AgentStreamTransport* const transport_;
  const std::string peer_;
  const std::chrono::steady_clock::time_point connected_at_;
  // Used by storage tasks only, one at a time (see agent_session.h).
  AgentSession session_;

  std::mutex mu_;
  drip::v1::AgentMessage in_;       // read target; owned by gRPC while a read is outstanding
  drip::v1::CollectorMessage out_;  // write source; owned by gRPC while a write is outstanding
  std::deque<drip::v1::CollectorMessage> outbox_;  // Welcome, commands
  std::optional<uint64_t> pending_ack_;
  std::string host_;  // set by an accepted Hello; fixed afterwards
  bool hello_seen_ = false;
  bool awaiting_hello_counted_ = false;  // counted in drip_agent_streams_awaiting_hello
  bool registered_ = false;              // in ConnectedHosts under host_
  bool storage_busy_ = false;
  bool write_in_flight_ = false;
  std::optional<grpc::Status> closing_;  // finish with this once drained
  bool finish_called_ = false;
  bool done_ = false;  // OnDone ran
  std::string_view outcome_;
  uint64_t batches_stored_ = 0;
  // Shared so that OnDone can cancel it after releasing mu_, even if the alarm's own
  // callback deletes the reactor meanwhile.
  std::shared_ptr<grpc::Alarm> throttle_alarm_;
  bool throttled_ = false;  // an alarm will start the next read (or end the reactor)
  bool throttle_logged_ = false;
};

}  // namespace drip::collector
